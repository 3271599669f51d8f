"""The validate copy-head command end to end on a tiny grid (in-process, CPU)."""

import json

import pytest

from emergence.cli import main
from emergence.commands.validate_copy_head import parse_P_grid
from emergence.theory.errors import EmergenceError


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


def test_agreement_with_a_stand_in_theory(tmp_path, monkeypatch):
    """The command's comparison path, with a stand-in phase diagram in place of the theory."""
    import emergence.validation.copy_task.predictions as predictions

    def stand_in(attention, L, V, convention, P_grid):
        return {"attention": attention, "L": L, "V": V, "convention": convention.as_dict(), "P": list(P_grid),
                "c1": [1.0] * len(P_grid), "cG": [0.0] * len(P_grid), "loss": [3.0] * len(P_grid),
                "transitions": {"P1": None, "crossover": None, "P_star": 20.0, "spinodals": [10.0, 40.0]}}

    monkeypatch.setattr(predictions, "predicted_phase_diagram", stand_in)
    arguments = ["validate", "copy-head", "--attention", "softmax", "--L", "4", "--V", "3", "--P-grid", "4,64",
                 "--seeds", "1", "--steps", "100", "--convention", "architecture=M", "--device", "cpu",
                 "--workers", "1", "--out", str(tmp_path / "runs"), "--json", str(tmp_path / "r.json"),
                 "--plot", str(tmp_path / "p.png")]
    assert main(arguments) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["predicted"]["transitions"]["P_star"] == 20.0
    agreement = report["agreement"]
    assert agreement["available"] and set(agreement["ratios"]) == {"P_star"}
    assert agreement["ratios"]["P_star"] == pytest.approx(report["measured"]["P_star"] / 20.0)
    assert agreement["within_factor"]["P_star"] == (0.5 <= agreement["ratios"]["P_star"] <= 2)
    assert agreement["order_parameter_rms"]["c1"] >= 0


def test_measured_linear_transitions():
    from emergence.validation.copy_task.analysis import measured_transitions

    P = [10, 20, 40, 80, 160]
    transitions = measured_transitions("linear", P, {"c1": [0, 0.0, 0.3, 0.5, 0.5], "cG": [0, 0, 0.01, 0.05, 0.6]})
    assert transitions["P1"] == pytest.approx((20 * 40) ** 0.5)
    assert transitions["crossover"] == pytest.approx((80 * 160) ** 0.5)


def test_a_drift_of_the_order_parameters_is_no_transition():
    from emergence.validation.copy_task.analysis import measured_transitions

    P = [208, 309, 500, 1014]
    # SGLD at L = 32: a_G creeps from 0.032 to 0.036 with no jump
    assert measured_transitions("softmax", P, {"aG": [0.032, 0.033, 0.033, 0.036]})["P_star"] is None
    assert measured_transitions("softmax", P, {"aG": [0.032, 0.033, 0.17, 0.2]})["P_star"] == pytest.approx((309 * 500) ** 0.5)
    assert measured_transitions("linear", P, {"c1": [0, 0.001, 0.01, 0.02], "cG": [0, 0, 0, 0]})["P1"] is None


def test_prediction_is_the_phase_diagram_at_the_runs_convention():
    """The validation's theory curve is exactly `emergence phase-diagram` at the same convention and grid."""
    import numpy as np

    from emergence.numerics.copy_head.phase_diagram import phase_diagram
    from emergence.numerics.copy_head.reduced_action import reduced_action
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.predictions import predicted_phase_diagram

    convention = CopyTaskConvention(attention="softmax")
    grid = np.geomspace(10, 1e5, 60)
    predicted = predicted_phase_diagram("softmax", 32, 8, convention, grid)
    direct = phase_diagram(reduced_action("softmax", 32, 8, convention), grid)
    assert predicted["cG"] == pytest.approx(list(direct.cG))
    assert predicted["transitions"]["P_star"] == direct.transitions["P_star"]
    assert predicted["convention"]["attention"] == "softmax"


def test_hysteresis_needs_two_minima_inside_the_window_and_one_outside():
    from emergence.validation.copy_task.analysis import hysteresis

    def measured(bistable, settled):
        return {"P": [50, 120, 150, 300], "bistable_fraction": bistable, "all_converged_fraction": settled}

    result = hysteresis(measured([0, 0.5, 1, 0], [1, 1, 1, 1]), [100, 200])
    assert result["matches"]
    assert [p["state"] for p in result["points"]] == ["one minimum", "two minima", "two minima", "one minimum"]
    assert [p["inside_window"] for p in result["points"]] == [False, True, True, False]
    assert result["measured_two_minima"] == [120, 150]
    # a point inside the window with a single minimum, or two minima outside it, breaks the match
    assert not hysteresis(measured([0, 0.5, 0, 0], [1, 1, 1, 1]), [100, 200])["matches"]
    assert not hysteresis(measured([0.5, 0.5, 1, 0], [1, 1, 1, 1]), [100, 200])["matches"]
    # unconverged starts leave a point undecided, which neither confirms nor refutes
    undecided = hysteresis(measured([0, 1, 1, 0], [0.5, 1, 1, 1]), [100, 200])
    assert undecided["points"][0]["state"] == "undecided" and undecided["matches"]
    assert not hysteresis(measured([0, 0, 0, 0], [1, 0, 0, 1]), [100, 200])["matches"]
