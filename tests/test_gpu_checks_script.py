"""scripts/gpu_checks.sh, checked on a CPU: valid bash, GPU parts first, each under a time limit that together
fit the 8-minute lease, and its summary JSON (and archive) written after every part (a stub stands in for Python)."""

import json
import re
import subprocess
import tarfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu_checks.sh"
LEASE_SECONDS = 480
GRACE_SECONDS = 2  # timeout --kill-after


def _parts() -> list[tuple[str, int, bool]]:
    """(name, limit in seconds, after the '# CPU part' line) of every `part NAME LIMIT ...` line, in order."""
    parts, on_cpu = [], False
    for line in SCRIPT.read_text().splitlines():
        on_cpu |= line.startswith("# CPU part")
        found = re.match(r"part (\S+) (\S+) ", line.strip())
        if found:
            parts.append((found[1], int(found[2]), on_cpu))
    return parts


def test_the_script_is_valid_bash():
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)


def test_gpu_parts_come_first_and_every_limit_fits_the_lease():
    parts = _parts()
    names = [name for name, _, _ in parts]
    gpu = [name for name, _, on_cpu in parts if not on_cpu]
    assert names[:2] == ["hardware", "install"] and names[2] == "gpu_tests"
    assert {"softmax_L128", "linear_L128", "basis_gpu", "softmax_L256", "linear_L256"} <= set(gpu)
    assert {"posterior_study_L24", "posterior_L32"} <= set(names) - set(gpu)
    assert names == gpu + [name for name, _, on_cpu in parts if on_cpu]  # no GPU part after a CPU part
    assert all(limit > 0 for _, limit, _ in parts)
    assert sum(limit + GRACE_SECONDS for _, limit, _ in parts) <= LEASE_SECONDS


def test_the_summary_is_written_after_every_part(tmp_path):
    """The stub records, at each call, how many parts the summary already lists."""
    stub = tmp_path / "python"
    out = tmp_path / "out"
    stub.write_text('#!/bin/sh\necho "summary lists $(grep -o \'"part":\' "$OUT/summary.json" 2>/dev/null | wc -l)"\n'
                    'echo "arguments $*"\n')
    stub.chmod(0o755)
    environment = {"PATH": "/usr/bin:/bin", "PYTHON": str(stub), "WHEELS": str(tmp_path / "none"), "OUT": str(out),
                   "ARCHIVE": str(tmp_path / "out.tar.gz")}
    subprocess.run(["bash", str(SCRIPT), str(out)], check=True, env=environment, cwd=SCRIPT.parents[1],
                   capture_output=True, timeout=60)
    summary = json.loads((out / "summary.json").read_text())
    ran = [name for name, _, _ in _parts() if name != "install"]  # no wheels: no install
    assert [part["part"] for part in summary["parts"]] == ran
    assert all(part["exit"] == 0 and part["timed_out"] is False for part in summary["parts"])
    for position, name in enumerate(ran[1:], start=1):  # hardware, the first, calls Python more than once
        assert (out / f"{name}.log").read_text().split()[:3] == ["summary", "lists", str(position)], name
    with tarfile.open(tmp_path / "out.tar.gz") as archive:
        assert json.load(archive.extractfile("out/summary.json")) == summary
    softmax = (out / "softmax_L128.log").read_text()
    for flags in ("--attention softmax", "--optimizer adam", "--objective marginal", "--L 128",
                  "--device cuda", "--dtype float32"):
        assert flags in softmax
    study = (out / "posterior_study_L24.log").read_text()
    for flags in ("--study L=24", "--size-settings 24:P-grid=1000:1300,windows=range:0.05:0.65:0.15"):
        assert flags in study
