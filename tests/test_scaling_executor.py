"""`emergence scaling --executor`: the sizes of a claim as a resumable sweep give the report of the in-process loop."""

import json

from emergence.numerics.copy_head.scaling import scaling_report
from emergence.validation.scaling_sweep import executor_transitions
from emergence.base.sweeps import LocalProcessExecutor


def test_sweep_of_sizes_equals_the_loop_and_resumes(tmp_path):
    loop = scaling_report("linear-second-order", dps=20, fast=True)
    swept = scaling_report("linear-second-order", dps=20, fast=True,
                           transitions=executor_transitions(LocalProcessExecutor(2), tmp_path, progress=False))
    assert swept == loop  # exact by design: one code path on one machine, results read back exactly (JSON)
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == len(loop["sizes"])
    stamps = [file.stat().st_mtime_ns for file in files]

    def refuse(config):
        raise AssertionError(f"point {config} recomputed although its file exists")

    class Refusing(LocalProcessExecutor):
        def map_unordered(self, work, configs):
            for config in configs:
                refuse(config)
            return iter(())

    rerun = scaling_report("linear-second-order", dps=20, fast=True,
                           transitions=executor_transitions(Refusing(1), tmp_path, progress=False))
    assert rerun == loop  # exact by design: the stored results read back
    assert [file.stat().st_mtime_ns for file in files] == stamps
    stored = json.loads(files[0].read_text())
    assert stored["config"]["experiment"] == "scaling" and len(stored["result"]["transition"]) > 20


def test_scaling_command_accepts_an_executor(tmp_path, capsys):
    from emergence.cli import main

    assert main(["scaling", "--claim", "linear-second-order", "--quick", "--dps", "20", "--executor", "local",
                 "--workers", "1", "--out", str(tmp_path), "--json", "-"]) == 0
    report = json.loads(capsys.readouterr().out.split("holds: ", 1)[1].split("\n", 1)[1])
    assert report["holds"] is True and len(list(tmp_path.glob("*.json"))) == len(report["sizes"])
