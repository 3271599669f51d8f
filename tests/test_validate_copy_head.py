"""The validate copy-head command end to end on a tiny grid (in-process, CPU)."""

import json

import pytest

from emergence.cli import main
from emergence.commands.validate_copy_head import parse_P_grid
from theory.errors import EmergenceError


def test_command_writes_report_plot_and_resumes(tmp_path, capsys):
    arguments = [
        "validate", "copy-head", "--attention", "softmax", "--optimizer", "adam", "--L", "4", "--V", "3",
        "--P-grid", "4,64", "--seeds", "2", "--steps", "150", "--convention", "architecture=M",
        "--device", "cpu", "--workers", "1", "--out", str(tmp_path / "runs"),
        "--json", str(tmp_path / "report.json"), "--plot", str(tmp_path / "plot.png"),
    ]
    assert main(arguments) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert set(report) >= {"predicted", "measured", "agreement"}
    measured = report["measured"]
    assert measured["P"] == [4, 64]
    for key in ("c1_mean", "c1_std", "cG_mean", "cG_std", "loss_mean", "P_star"):
        assert key in measured
    for c1, cG in zip(measured["c1_mean"], measured["cG_mean"]):
        assert c1 + cG == pytest.approx(1.0)  # softmax sum rule
    assert measured["loss_mean"][1] < measured["loss_mean"][0]
    assert report["agreement"]["metric"]
    assert (tmp_path / "plot.png").stat().st_size > 10_000
    files = sorted((tmp_path / "runs").iterdir())
    assert len(files) == 2
    stamps = [f.stat().st_mtime_ns for f in files]
    capsys.readouterr()
    assert main(arguments[:-4] + ["--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["measured"] == measured
    assert [f.stat().st_mtime_ns for f in files] == stamps  # resumed: nothing recomputed


def test_bad_input_is_a_one_line_error(capsys):
    assert main(["validate", "copy-head", "--attention", "linear", "--L", "1", "--V", "4", "--device", "cpu"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    assert main(["validate", "copy-head", "--attention", "linear", "--L", "4", "--V", "4", "--device", "cpu",
                 "--convention", "q=1"]) == 2


def test_P_grid_parsing():
    assert parse_P_grid("geom:10:1000:3") == [10, 100, 1000]
    assert parse_P_grid("40,10,10") == [10, 40]
    with pytest.raises(EmergenceError):
        parse_P_grid("geom:1:x:3")
