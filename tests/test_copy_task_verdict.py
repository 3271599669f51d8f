"""The softmax copy-task verdict can fail: a wrong P*, a missing jump, a non-converged run, a short grid,
a jump that lands off the theory, no hysteresis where predicted; and the bisection narrows the measured jump."""

import json

import numpy as np
import pytest

from emergence.validation.copy_task.analysis import (
    agreement,
    bisection_point,
    grid_around,
    grid_coverage,
    measured_curves,
)

P_STAR = 957.0
WINDOW = [827.0, 1512.0]
GRID = grid_around(P_STAR)  # [319, 437, 598, 818, 1120, 1532, 2098, 2871]


def _theory(P_star=P_STAR, window=WINDOW):
    """A stand-in phase diagram: uniform pooling (a_G = 1/32) below P*, a copy head (a_G = 0.5) above it."""
    P = list(np.geomspace(100, 10_000, 200)) + GRID
    P.sort()
    aG = [0.034 if p < P_star else 0.5 for p in P]
    return {"P": P, "c1": [1 - a for a in aG], "cG": aG, "aG": aG, "loss": [1.0] * len(P),
            "copy_fraction": [0.04 if p < P_star else 0.96 for p in P],
            "transitions": {"P_star": P_star, "spinodals": window}}


def _point(P, aG, converged=True, bistable=False, copy_fraction=None):
    """One Adam point summary as :func:`run_copy_point` returns it (one seed, both starts)."""
    copy_fraction = (0.04 if aG < 0.1 else 0.96) if copy_fraction is None else copy_fraction
    seed = {"global_start": "copy" if aG > 0.1 else "uniform",
            "uniform": {"converged": converged}, "copy": {"converged": converged}}
    summary = {"P": P, "per_seed": [seed], "converged_fraction": float(converged),
               "all_converged_fraction": float(converged), "metastable_fraction": float(bistable),
               "bistable_fraction": float(bistable)}
    for key, value in (("c1", 1 - aG), ("cG", aG), ("aG", aG), ("coverage", 1.0),
                       ("copy_fraction", copy_fraction), ("test_loss", 1.0 - aG)):
        summary[f"{key}_mean"], summary[f"{key}_std"] = value, 0.0
        for start in ("uniform", "copy"):
            summary[f"{key}_{start}_mean"] = value
    return summary


def _sweep(aG_of, converged_of=lambda P: True, grid=GRID, window=WINDOW):
    points = [_point(P, aG_of(P), converged_of(P), window[0] <= P <= window[1]) for P in grid]
    return measured_curves("softmax", "adam", list(grid), points)


def _jump_at(P_star, landing=0.5):
    return lambda P: 0.034 if P < P_star else landing


def test_a_jump_where_predicted_passes_and_says_where_it_lands():
    result = agreement("softmax", _sweep(_jump_at(900)), _theory())
    assert result["passes"], result["reasons"]
    assert result["transitions"]["P_star"]["status"] == "within"
    assert result["transitions"]["P_star"]["bracket"] == [818, 1120]
    landing = result["landing"]
    found, theory = landing["measured"], landing["predicted"]
    assert found["before"]["P"] == 818 and found["after"]["P"] == 1120
    # exact by design: the stand-in values are copied through
    assert found["after"]["aG"] == 0.5 and theory["after"]["aG"] == 0.5 and theory["before"]["aG"] == 0.034
    assert theory["before"]["P"] < P_STAR < theory["after"]["P"]
    assert found["before"]["copy_fraction"] == 0.04 and found["after"]["copy_fraction"] == 0.96
    assert "a_G 0.034 → 0.5 measured, 0.034 → 0.5 predicted" in landing["summary"]
    assert "cos²(A, S) 0.04 → 0.96 measured" in landing["summary"]
    assert result["grid"]["spans"] and result["hysteresis"]["inside"]


def test_a_wrong_predicted_P_star_fails():
    """The same measurement against a theory 3x off: the bracket lies outside a factor 2, and the grid
    no longer spans [P*/3, 3P*] around that prediction."""
    measured = _sweep(_jump_at(900))
    for wrong in (3 * P_STAR, P_STAR / 3):
        result = agreement("softmax", measured, _theory(wrong, [0.9 * wrong, 1.5 * wrong]))
        assert not result["passes"]
        assert result["transitions"]["P_star"]["status"] == "outside"
        assert any("needs 8 spanning" in reason for reason in result["reasons"])


def test_a_missing_jump_fails():
    result = agreement("softmax", _sweep(lambda P: 0.034 + 1e-6 * P), _theory())
    assert not result["passes"]
    assert result["transitions"]["P_star"]["status"] == "missing"
    assert "landing" not in result


def test_a_non_converged_run_fails():
    """The point right after the jump did not converge: the bracket widens to the next converged point and
    the verdict fails, with the point named."""
    result = agreement("softmax", _sweep(_jump_at(900), converged_of=lambda P: P != 1120), _theory())
    assert not result["passes"]
    assert "1 of 8 points did not converge (P = 1120; excluded)" in result["reasons"][0]
    assert any("non-converged points fail the verdict" in reason for reason in result["reasons"])


def test_a_short_grid_fails_even_with_the_jump_inside_it():
    """The former demo row: the grid [128, 256, 512] cannot fail a P* inside it, so it cannot pass."""
    grid = [128, 256, 512]
    measured = _sweep(_jump_at(300), grid=grid)
    result = agreement("softmax", measured, _theory(342.0, [300.0, 400.0]))
    assert result["transitions"]["P_star"]["status"] == "within"
    assert not result["passes"] and not result["grid"]["spans"]
    assert grid_coverage(grid, 342.0)["reason"].startswith("the grid has 3 points")


def test_a_jump_just_below_the_predicted_P_star_is_compared_with_the_state_it_lands_on():
    """Measured copy state at P = 957, 0.01 % below the predicted P*: its landing is the theory's copy branch."""
    grid = sorted(GRID + [957])
    result = agreement("softmax", _sweep(_jump_at(900), grid=grid), _theory(957.09))
    assert result["transitions"]["P_star"]["bracket"] == [818, 957]
    assert result["landing"]["within"] and result["passes"], result["reasons"]


def test_a_jump_landing_off_the_theory_fails():
    result = agreement("softmax", _sweep(_jump_at(900, landing=0.15)), _theory())
    assert result["transitions"]["P_star"]["status"] == "within"
    assert not result["passes"] and not result["landing"]["within"]
    assert result["landing"]["aG_difference_after"] == pytest.approx(-0.35)
    assert any("the jump lands off the prediction" in reason for reason in result["reasons"])


def test_no_hysteresis_inside_the_predicted_window_fails():
    points = [_point(P, _jump_at(900)(P), bistable=False) for P in GRID]
    result = agreement("softmax", measured_curves("softmax", "adam", GRID, points), _theory())
    assert not result["passes"] and not result["hysteresis"]["inside"]
    assert any("no hysteresis where predicted" in reason for reason in result["reasons"])


def test_an_unresolved_spinodal_window_leaves_the_hysteresis_untested_and_fails():
    result = agreement("softmax", _sweep(_jump_at(900)), _theory(window=None))
    assert not result["passes"] and "hysteresis" not in result
    assert any("hysteresis untested" in reason for reason in result["reasons"])


def test_bisection_point_is_the_geometric_midpoint_in_whole_sequences():
    assert bisection_point([818, 1120]) == round(np.sqrt(818 * 1120))
    assert bisection_point([818, 819]) is None
    assert grid_coverage(GRID, P_STAR)["spans"] and len(GRID) == 8
    assert GRID[0] <= P_STAR / 3 + 0.5 and GRID[-1] >= 3 * P_STAR - 0.5


def test_the_experiment_bisects_the_measured_jump(tmp_path, monkeypatch):
    """`--bisect 3` adds three points, each inside the previous bracket, and the bracket shrinks around the jump."""
    import emergence.validation.copy_task.experiment as experiment
    import emergence.validation.copy_task.predictions as predictions
    from emergence.api import CopyExperiment, run_copy_experiment

    def stand_in_point(config, device="cpu"):
        return _point(config["P"], _jump_at(1000)(config["P"]), bistable=WINDOW[0] <= config["P"] <= WINDOW[1])

    monkeypatch.setattr(experiment, "run_copy_point", stand_in_point)
    monkeypatch.setattr(predictions, "predicted_phase_diagram", lambda attention, L, V, convention, grid, tokens="iid": _theory())
    validation = run_copy_experiment(CopyExperiment(
        "softmax", 8, 3, tuple(GRID), seeds=1, adam_steps=1, convention="architecture=M", device="cpu", workers=1,
        out=str(tmp_path / "runs"), bisections=3, progress=False))
    measured = validation.measured
    added = measured["bisection"]["added_P"]
    assert added == [957, 1035, 995]
    assert measured["P_star"]["bracket"] == [995, 1035]
    assert validation.P.tolist() == sorted(GRID + added) and len(measured["aG_mean"]) == 11
    assert validation.agreement["passes"], validation.agreement["reasons"]
    assert validation.settings["bisections"] == 3
    assert len(list((tmp_path / "runs").glob("*.json"))) == 11  # the bisection points are stored and resume
    json.dumps(validation.to_dict())


def _status_experiment(measured, theory):
    return {"attention": "softmax", "L": 32, "V": 8, "settings": {"P": measured["P"], "objective": "marginal"},
            "predicted": theory, "measured": {"adam": measured},
            "agreement": {"adam": agreement("softmax", measured, theory)}}


def test_the_status_rows_state_the_bracket_the_landing_and_the_hysteresis_and_can_fail():
    from emergence.validation.theory_status import _copy_task_rows

    good = _copy_task_rows([_status_experiment(_sweep(_jump_at(900)), _theory())])
    assert [row["holds"] for row in good] == ["yes", "yes"]  # agreement, coverage (Adam only: no SGLD rows)
    text = good[0]["measured"]
    assert "measured 818–1.12e+03" in text and "ratio 0.855–1.17" in text
    assert "the jump lands: a_G 0.034 → 0.5 measured, 0.034 → 0.5 predicted" in text
    assert "cos²(A, S) 0.04 → 0.96 measured" in text
    assert "two minima (hysteresis) at P 1.12e+03–1.12e+03 against the predicted spinodal window 827–1.51e+03" in text
    assert "8 grid points from 319 to 2871 against the required [319, 2.87e+03]" in text
    wrong = _copy_task_rows([_status_experiment(_sweep(_jump_at(900)), _theory(3 * P_STAR, [2500, 4000]))])
    assert wrong[0]["holds"] == "no" and "outside a factor 2" in wrong[0]["measured"]
    short = [128, 256, 512]
    old_row = _copy_task_rows([_status_experiment(_sweep(_jump_at(300), grid=short), _theory(342.0, [300, 400]))])
    assert old_row[0]["holds"] == "no" and "needs 8 spanning" in old_row[0]["measured"]


# The continuous softmax verdict: a theory whose copy head switches on without a jump (correlated or skewed
# tokens) is judged on the onset, the steepest rise of a_G in ln P, within the factor of the linear transitions.

ONSET = 680.5
ONSET_GRID = grid_around(ONSET)  # [226, 310, 424, 580, 795, 1089, 1491, 2042]


def _rise_at(onset):
    """A smooth a_G rising most steeply in ln P at ``onset`` (a logistic in ln P)."""
    return lambda P: 0.07 + 0.45 / (1 + (onset / P) ** 4)


def _continuous_theory(onset=ONSET):
    """A stand-in continuous prediction: no P*, no window, a_G the smooth rise with its steepest point at ``onset``."""
    P = sorted(list(np.geomspace(100, 10_000, 200)) + ONSET_GRID)
    aG = [_rise_at(onset)(p) for p in P]
    return {"P": P, "c1": [1 - a for a in aG], "cG": aG, "aG": aG, "loss": [1.0] * len(P),
            "copy_fraction": [0.5] * len(P), "transition_type": "continuous",
            "transitions": {"P_star": None, "spinodals": None, "onset": onset}}


def _continuous_sweep(aG_of, bistable_of=lambda P: False, grid=ONSET_GRID):
    return measured_curves("softmax", "adam", list(grid), [_point(P, aG_of(P), bistable=bistable_of(P)) for P in grid])


def test_a_continuous_prediction_is_judged_on_the_onset_and_passes_where_it_rises():
    from emergence.validation.copy_task.analysis import verdict_lines

    measured = _continuous_sweep(_rise_at(ONSET))
    result = agreement("softmax", measured, _continuous_theory())
    assert result["passes"], result["reasons"]
    assert result["verdict_kind"] == "continuous_onset" and list(result["transitions"]) == ["onset"]
    onset = result["transitions"]["onset"]
    assert onset["status"] == "within" and onset["bracket"] == [580, 795]
    assert "landing" not in result and result["hysteresis"]["matches"] and result["grid"]["spans"]
    lines = verdict_lines("softmax", measured, result)
    assert lines[0].startswith("verdict kind: continuous_onset")
    assert "onset: predicted 680, measured 580–795, ratio 0.852–1.17: within a factor 2" in lines[1]
    assert "against no metastable window (a continuous onset)" in "\n".join(lines)
    json.dumps(result)


@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_a_continuous_onset_a_factor_2_off_fails(factor):
    """The planted rise at twice (half) the predicted onset: its bracket is not within a factor 2."""
    result = agreement("softmax", _continuous_sweep(_rise_at(factor * ONSET)), _continuous_theory())
    assert result["verdict_kind"] == "continuous_onset"
    assert not result["passes"] and result["transitions"]["onset"]["status"] != "within"


def test_a_measured_jump_with_hysteresis_fails_a_continuous_prediction():
    """A first-order jump between 580 and 795 with two minima there: the steepest rise sits at the predicted
    onset, but a continuous prediction must not pass a measured metastable window."""
    jump = _continuous_sweep(_jump_at(700), bistable_of=lambda P: 580 <= P <= 795)
    result = agreement("softmax", jump, _continuous_theory())
    assert result["transitions"]["onset"]["status"] == "within"
    assert not result["passes"] and not result["hysteresis"]["matches"]
    assert any(reason.startswith("two minima (hysteresis) at P = 580, 795: a first-order signature")
               for reason in result["reasons"])


def test_a_first_order_prediction_keeps_the_jump_verdict():
    result = agreement("softmax", _sweep(_jump_at(900)), _theory() | {"transition_type": "first order"})
    assert result["verdict_kind"] == "first_order_jump" and list(result["transitions"]) == ["P_star"]
    assert result["passes"] and "landing" in result


def test_a_continuous_onset_is_bisected_only_while_unresolved():
    from emergence.validation.copy_task.analysis import next_bisection

    off = _continuous_sweep(_rise_at(2 * ONSET))  # bracket 1089–1491: ratio 1.6–2.19 straddles 2
    assert next_bisection("softmax", off, _continuous_theory(), ONSET_GRID) == bisection_point([1089, 1491])
    assert next_bisection("softmax", _continuous_sweep(_rise_at(ONSET)), _continuous_theory(), ONSET_GRID) is None


def test_the_status_row_of_a_continuous_prediction_states_the_onset_and_can_fail():
    from emergence.validation.theory_status import _copy_task_rows

    good = _copy_task_rows([_status_experiment(_continuous_sweep(_rise_at(ONSET)), _continuous_theory())])
    assert good[0]["holds"] == "yes"
    assert "onset predicted 680, measured 580–795, ratio 0.852–1.17" in good[0]["measured"]
    assert "against no predicted window (a continuous onset)" in good[0]["measured"]
    assert "grid bracket/theory onset 0.85–1.2" in good[0]["measured"]
    off = _copy_task_rows([_status_experiment(_continuous_sweep(_rise_at(2 * ONSET)), _continuous_theory())])
    assert off[0]["holds"] == "no"
