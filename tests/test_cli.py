"""The command line: help, version, kernel export, and one-line errors with non-zero exit."""

import subprocess
import sys

import pytest

from emergence.cli import main
from emergence.cli.commands import COMMAND_MODULES
from emergence.theory.kernel_registry import all_kernel_modules


def run_cli(*arguments):
    return subprocess.run([sys.executable, "-m", "emergence", *arguments], capture_output=True, text=True)


def test_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as exit_status:
        main(["--help"])
    assert exit_status.value.code == 0
    output = capsys.readouterr().out
    import importlib

    for dotted in COMMAND_MODULES:
        assert importlib.import_module(dotted).NAME in output


def test_version(capsys):
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.startswith("emergence ")


@pytest.mark.parametrize("backend", ["numpy", "cupy"])
def test_export_kernels_writes_every_module(tmp_path, backend, capsys):
    assert main(["export-kernels", "--backend", backend, "--out", str(tmp_path)]) == 0
    expected = {f"{m.name}.py" for m in all_kernel_modules()} | {"__init__.py", "README.md"}
    assert {p.name for p in tmp_path.iterdir()} == expected
    assert f"for {backend}" in capsys.readouterr().out


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["export-kernels", "--backend", "jax", "--out", "OUT"], "unknown backend 'jax'"),
        (["export-kernels", "--out", "/proc/forbidden/kernels"], "cannot write to"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(tmp_path, arguments, message):
    result = run_cli(*[a.replace("OUT", str(tmp_path)) for a in arguments])
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert result.stderr.startswith("emergence: error:")


def test_missing_gpu_is_one_line_and_nonzero(tmp_path):
    from emergence.numerics.backend import cupy_status

    usable, _ = cupy_status()
    if usable:
        pytest.skip("this machine has a working GPU: the missing-GPU error cannot occur here")
    result = run_cli("basis", "synthetic", "--backend", "cupy", "--out", str(tmp_path / "b.npz"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "backend 'cupy' requested but unavailable" in result.stderr
