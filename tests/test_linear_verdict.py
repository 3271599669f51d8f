"""The linear copy-task verdict decides and can fail: the onset criterion and fit, bisection of an unresolved
bracket, a planted wrong P1, a crossover outside the grid and missing convergence records fail with a reason;
and the real default sweeps pass (slow)."""

import json

import numpy as np
import pytest

from emergence.validation.copy_task.analysis import (
    agreement,
    extension_point,
    linear_grid,
    measured_curves,
    measured_transitions,
    next_bisection,
    onset_fit,
)

P1, CROSSOVER = 100.0, 600.0


def _c1(P, P1=P1):
    """Square-root onset c1 = 0.12 sqrt(P - P1) (L = 32, V = 8 has A = 0.12), capped at 1.2."""
    return min(1.2, 0.12 * np.sqrt(max(P - P1, 0.0)))


def _cG(P, crossover=CROSSOVER):
    """Copy mode rising fastest in ln P at the crossover."""
    return 0.25 * (1 + np.tanh(2 * np.log(P / crossover)))


def _theory(P1=P1, crossover=CROSSOVER):
    P = sorted(set(np.geomspace(10, 5000, 300)) | set(linear_grid(P1, crossover)))
    return {"P": P, "c1": [_c1(p) for p in P], "cG": [_cG(p) for p in P], "loss": [1.0] * len(P),
            "transitions": {"P1": P1, "crossover": crossover, "critical_exponent": {"beta": 0.5}}}


def _point(P, c1, cG, converged=True):
    """One Adam point summary as run_copy_point returns it (one seed, both starts)."""
    seed = {"global_start": "uniform", "uniform": {"converged": converged}, "copy": {"converged": converged}}
    summary = {"P": P, "per_seed": [seed], "converged_fraction": float(converged),
               "all_converged_fraction": float(converged), "metastable_fraction": 0.0, "bistable_fraction": 0.0}
    for key, value in (("c1", c1), ("cG", cG), ("aG", cG), ("coverage", 1.0), ("copy_fraction", cG),
                       ("test_loss", 1.0 - cG)):
        summary[f"{key}_mean"], summary[f"{key}_std"] = value, 0.0
        for start in ("uniform", "copy"):
            summary[f"{key}_{start}_mean"] = value
    return summary


def _sweep(grid, P1=P1, crossover=CROSSOVER):
    return measured_curves("linear", "adam", list(grid), [_point(P, _c1(P, P1), _cG(P, crossover)) for P in grid])


def test_a_sweep_on_the_default_grid_passes_and_a_planted_wrong_P1_fails():
    grid = linear_grid(P1, CROSSOVER)
    measured = _sweep(grid)
    right = agreement("linear", measured, _theory())
    assert right["passes"], right["reasons"]
    assert right["P1_fit"]["P1"] == pytest.approx(P1, rel=1e-9)  # the exact onset law: the fit is exact up to rounding
    planted = _theory()
    planted["transitions"]["P1"] = 3 * P1
    wrong = agreement("linear", measured, planted)
    assert not wrong["passes"] and wrong["transitions"]["P1"]["status"] == "outside"
    assert any(reason.startswith("P1 fitted to the onset law 100, predicted 300: outside a factor 2")
               for reason in wrong["reasons"])


def test_the_onset_criterion_does_not_move_with_the_end_of_the_grid():
    """c1 departing from zero by 0.05 is read the same whether the grid stops at 150 or at 1000 (10 % of the
    largest c1, the criterion before, moved from [100, 110] to [110, 120] here)."""
    short, long = [80, 100, 110, 120, 150], [80, 100, 110, 120, 150, 1000]
    for grid in (short, long):
        P1_record = measured_transitions("linear", grid, {"c1": [_c1(P) for P in grid], "cG": [0.0] * len(grid)})["P1"]
        assert P1_record["bracket"] == [100, 110]


def test_the_onset_fit_recovers_P1_and_a_wrong_exponent_misses_it():
    grid = [60, 90, 105, 130, 170, 400]
    c1 = [_c1(P) for P in grid]
    fit = onset_fit(grid, c1, [90, 105], 0.5)
    # the exact law: the fit's P1 carries only float64 rounding (~1e-14 relative); 1e-9 leaves room for it
    assert fit["P1"] == pytest.approx(P1, rel=1e-9) and fit["points"] == [105, 130]  # 170: c1 over 0.6 of its largest
    mutated = onset_fit(grid, c1, [90, 105], 1.0)  # c1 linear in P - P1: the wrong law
    assert abs(mutated["P1"] - P1) > 10
    assert onset_fit(grid, c1, None, 0.5)["P1"] is None
    # far above the onset c1 falls again (the copy mode takes over): those points are not the onset law
    falling = onset_fit([90, 105, 130, 1000, 2000], [0, _c1(105), _c1(130), 0.5, 0.3], [90, 105], 0.5)
    assert falling["points"] == [105, 130] and falling["P1"] == pytest.approx(P1, rel=1e-9)


def test_a_crossover_outside_the_grid_fails_with_a_reason():
    grid = linear_grid(P1, CROSSOVER)[:5]  # only the points around P1: the copy onset lies beyond them
    result = agreement("linear", _sweep(grid), _theory())
    assert result["transitions"]["crossover"]["status"] == "beyond grid" and not result["passes"]
    assert "crossover predicted 600, measured —, ratio —: predicted outside the converged grid (untested)" \
        in result["reasons"]


def test_a_measurement_without_its_convergence_record_fails_with_a_reason():
    measured = _sweep(linear_grid(P1, CROSSOVER))
    del measured["converged"]
    result = agreement("linear", measured, _theory())
    assert not result["passes"] and result["converged_points"] == 0
    assert result["reasons"][0].startswith("the measurement has no per-point convergence record")
    softmax = {"P": [10, 20], "aG_mean": [0.03, 0.5], "c1_mean": [0.97, 0.5], "cG_mean": [0.03, 0.5],
               "P_star": {"bracket": [10, 20], "rise": 0.47, "note": ""}}
    theory = {"P": [10, 20], "c1": [0.97, 0.5], "cG": [0.03, 0.5], "aG": [0.03, 0.5],
              "transitions": {"P_star": 15.0, "spinodals": None}}
    result = agreement("softmax", softmax, theory)
    assert not result["passes"] and "landing" not in result
    assert result["reasons"][0].startswith("the measurement has no per-point convergence record")


def test_next_bisection_narrows_only_an_undecided_linear_bracket():
    measured = _sweep([50, 100, 120, 300, 500, 700, 1200])
    theory = _theory()
    # P1 bracket [100, 120]: ratio 1-1.2, decided; crossover steepest between 500 and 700 (ratio 0.83-1.2): decided
    assert next_bisection("linear", measured, theory, measured["P"]) is None
    planted = _theory(crossover=300.0)  # the crossover bracket [500, 700] now straddles 2 x 300
    assert next_bisection("linear", measured, planted, measured["P"]) == 592
    assert next_bisection("linear", measured, None, measured["P"]) is None


def test_a_crossover_on_the_grids_last_interval_extends_the_grid_until_it_decides():
    """The copy rise at 900 and a grid ending at 849: the steepest interval is the last one, so the crossover is
    not measured (``missing``) and the next point is one grid step above the grid, until a bracket decides;
    a last interval that starts beyond twice the prediction is not extended (the verdict fails as it is)."""
    grid = [50, 71, 100, 141, 200, 300, 424, 600, 849]
    measured = _sweep(grid, crossover=900.0)
    assert measured["crossover"]["bracket"] is None and measured["crossover"]["last_interval"] == [600, 849]
    assert next_bisection("linear", measured, _theory(), grid) == extension_point([600, 849]) == 1201
    for _ in range(6):  # the experiment's loop: run the next point, read the transitions again
        P = next_bisection("linear", measured, _theory(), grid)
        if P is None:
            break
        grid = sorted(grid + [P])
        measured = _sweep(grid, crossover=900.0)
    status = agreement("linear", measured, _theory())["transitions"]["crossover"]["status"]
    assert grid[-1] > 849 and status in ("within", "outside"), (grid, status)
    early = _theory(crossover=250.0)  # [600, 849] starts beyond 2 x 250: outside whatever lies above
    assert next_bisection("linear", _sweep(grid[:9], crossover=900.0), early, grid[:9]) is None


def test_the_experiment_bisects_a_linear_bracket_until_it_decides(tmp_path, monkeypatch):
    """A stand-in sweep whose crossover bracket straddles the factor 2: bisection points are added inside it
    until the bracket lies on one side, and the verdict then decides (here: outside, so it fails)."""
    import emergence.validation.copy_task.experiment as experiment
    import emergence.validation.copy_task.predictions as predictions
    from emergence.api import CopyExperiment, run_copy_experiment

    def stand_in_point(config, device="cpu"):
        return _point(config["P"], _c1(config["P"]), _cG(config["P"], crossover=1300.0))

    monkeypatch.setattr(experiment, "run_copy_point", stand_in_point)
    monkeypatch.setattr(predictions, "predicted_phase_diagram", lambda attention, L, V, convention, grid, tokens="iid": _theory())
    validation = run_copy_experiment(CopyExperiment(
        "linear", 8, 3, (50, 100, 120, 300, 800, 2000, 5000), seeds=1, adam_steps=1, device="cpu", workers=1,
        out=str(tmp_path / "runs"), bisections=6, progress=False))
    added = validation.measured["bisection"]["added_P"]
    assert 1 <= len(added) < 6 and all(800 < P < 2000 for P in added)
    verdict = validation.agreement["transitions"]["crossover"]
    assert verdict["status"] == "outside" and not validation.agreement["passes"]
    json.dumps(validation.to_dict())


def _default_run(tmp_path, L, V):
    from emergence.cli import main

    out = tmp_path / "report.json"
    assert main(["validate", "copy-head", "--attention", "linear", "--optimizer", "adam", "--L", str(L), "--V", str(V),
                 "--device", "cpu", "--json", str(out), "--out", str(tmp_path / "runs")]) == 0
    return json.loads(out.read_text())


def _decides_and_a_planted_P1_fails(report):
    verdict = report["agreement"]
    assert verdict["passes"], verdict["reasons"]
    for name in ("P1", "crossover"):
        low, high = verdict["ratios"][name]
        assert 0.5 <= low and high <= 2.0
    planted = report["predicted"] | {"transitions": report["predicted"]["transitions"]
                                     | {"P1": 3 * report["predicted"]["transitions"]["P1"]}}
    wrong = agreement("linear", report["measured"], planted)
    assert not wrong["passes"] and wrong["transitions"]["P1"]["status"] == "outside"


@pytest.mark.slow
@pytest.mark.parametrize("L, V", [(16, 4), (32, 8), (64, 8)])
def test_the_default_linear_validation_passes_and_fails_on_a_planted_P1(tmp_path, L, V):
    """`validate copy-head --attention linear` at its defaults (L = 16, V = 4: 27 s; L = 32, V = 8: 3 min 14 s, both
    at load 2-4 on 2 cores; L = 64, V = 8: 55 min 48 s at load 4-9, 31 CPU-min)."""
    _decides_and_a_planted_P1_fails(_default_run(tmp_path, L, V))
