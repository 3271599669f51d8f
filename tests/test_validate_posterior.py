"""The validate posterior command end to end on a tiny grid, and the verdict's failure modes."""

import json

import numpy as np
import torch
import pytest

from emergence.cli import main
from emergence.validation.copy_task.posterior_validation import (
    measured_crossing, posterior_agreement, temperature_ladder,
)

pytest.importorskip("arviz")
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_command_writes_the_report_and_resumes(tmp_path, capsys):
    arguments = [
        "validate", "posterior", "--attention", "softmax", "--L", "4", "--V", "2", "--P-grid", "8,32",
        "--method", "replica-exchange", "--replicas", "3", "--chains", "2", "--burn-in", "10", "--draws", "4", "--thin", "2",
        "--theory-draws", "500", "--workers", "1", "--out", str(tmp_path / "runs"),
        "--json", str(tmp_path / "report.json"), "--plot", str(tmp_path / "plot.png"),
    ]
    assert main(arguments) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert set(report) >= {"predicted", "saddle", "measured", "agreement"}
    measured = report["measured"]
    for key in ("P", "c1_mean", "cG_mean", "aG_mean", "aG_sem", "coverage_mean", "mode_weight", "rhat_max",
                "ess_min", "swap_acceptance_min"):
        assert len(measured[key]) == 2, key
    for key in ("aG", "copy_fraction", "coverage", "c1", "cG", "loss", "P_star"):
        assert key in report["predicted"]
    assert "posterior" in report["predicted"]["label"] and "MAP" in report["saddle"]["label"]
    assert set(report["agreement"]) >= {"rms_aG", "P_star_ratio", "passes"}
    assert report["agreement"]["passes"] is False  # ten moves do not converge: flagged, no P*
    assert (tmp_path / "plot.png").stat().st_size > 5_000
    stamps = sorted(f.stat().st_mtime_ns for f in (tmp_path / "runs").iterdir())
    capsys.readouterr()
    assert main(arguments[:-4] + ["--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["measured"] == measured  # exact by design: the same stored runs
    assert sorted(f.stat().st_mtime_ns for f in (tmp_path / "runs").iterdir()) == stamps


@pytest.mark.parametrize("extra", [["--L", "2"], ["--chains", "1"], ["--method", "replica-exchange", "--coldest", "2"],
                                   ["--method", "replica-exchange", "--tempering", "full", "--coldest", "0.5"],
                                   ["--windows", "0.5"], ["--windows", "0.2,1.5"], ["--windows", "a,b"],
                                   ["--kappa", "0"], ["--divide", "1"], ["--method", "hmc"],
                                   ["--P-grid", "8,nan"]])
def test_bad_input_is_a_one_line_error(extra, capsys):
    arguments = ["validate", "posterior", "--attention", "softmax", "--L", "8", "--V", "2"] + extra
    assert main(arguments) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error


def test_ladder_contains_the_target_temperature():
    # exact by design: T = 1 is inserted as 1.0 and ladder points within 1e-9 of it are dropped
    assert temperature_ladder(4, 0.5, 2.0).tolist().count(1.0) == 1
    assert temperature_ladder(1, 0.5, 2.0).tolist() == [1.0]


def _measured(weights, rhat=1.0, aG=(0.05, 0.05, 0.6, 0.6)):
    P = [100, 200, 400, 800]
    return {"P": P, "mode_weight": list(weights), "rhat_max": [rhat] * 4, "aG_mean": list(aG),
            "P_star": measured_crossing(P, weights)}


def test_agreement_passes_only_with_matching_P_star_curves_and_converged_chains():
    predicted = {"P": [100, 200, 400, 800], "aG": [0.05, 0.05, 0.6, 0.6], "P_star": 280.0}
    good = _measured([0.0, 0.0, 1.0, 1.0])
    assert good["P_star"] == pytest.approx(282.8, rel=1e-3)
    assert posterior_agreement(good, predicted)["passes"] is True
    assert posterior_agreement(_measured([0.0, 0.0, 1.0, 1.0], rhat=1.2), predicted)["passes"] is False
    assert posterior_agreement(_measured([0.0, 0.0, 0.0, 0.0]), predicted)["passes"] is False  # no crossing
    assert posterior_agreement(good, {**predicted, "P_star": 100.0})["passes"] is False  # ratio 2.8
    wrong_curve = _measured([0.0, 0.0, 1.0, 1.0], aG=(0.05, 0.2, 0.6, 0.4))
    assert posterior_agreement(wrong_curve, predicted)["passes"] is False
    assert posterior_agreement(good, None)["passes"] is False


def test_a_crossing_between_flagged_points_is_not_a_measured_P_star():
    from emergence.validation.copy_task.posterior_validation import measured_posterior

    results = [{"P": P, "c1_mean": 0.9, "cG_mean": 0.1, "aG_mean": 0.1, "aG_sem": 0.01, "coverage_mean": 0.2,
                "test_loss_mean": 0.8, "mode_weight": w, "rhat_max": r, "ess_min": 50.0, "swap_acceptance_min": 0.2,
                "seconds": 1.0, "flagged": r > 1.05} for P, w, r in ((100, 0.0, 1.01), (200, 0.5, 1.9), (400, 1.0, 1.01))]
    measured = measured_posterior([100, 200, 400], results)
    assert measured["P_star"] is None and measured["P_star_unconverged"] == pytest.approx(200.0)
    results[1]["rhat_max"], results[1]["flagged"] = 1.01, False
    assert measured_posterior([100, 200, 400], results)["P_star"] == pytest.approx(200.0)


def test_linear_command_reports_the_posterior_theory_beside_the_saddle(tmp_path):
    arguments = [
        "validate", "posterior", "--attention", "linear", "--L", "4", "--V", "2", "--P-grid", "8,32,128",
        "--method", "replica-exchange", "--replicas", "2", "--coldest", "1", "--hottest", "2", "--chains", "2", "--burn-in", "10", "--draws", "4",
        "--thin", "2", "--theory-draws", "100", "--workers", "1", "--out", str(tmp_path / "runs"),
        "--json", str(tmp_path / "report.json"), "--plot", str(tmp_path / "plot.png"),
    ]
    assert main(arguments) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    predicted = report["predicted"]
    for key in ("aG", "copy_fraction", "coverage", "c1", "cG", "loss", "P1", "crossover", "P1_mean_field"):
        assert key in predicted, key
    assert "posterior" in predicted["label"] and "MAP" in report["saddle"]["label"]
    assert set(report["agreement"]) >= {"rms_aG", "P1_ratio", "crossover_ratio", "passes"}
    assert report["agreement"]["passes"] is False  # ten moves do not converge: flagged
    assert (tmp_path / "plot.png").stat().st_size > 5_000


def test_linear_agreement_needs_both_transitions_within_2x_and_converged_chains():
    from emergence.validation.copy_task.posterior_validation import (
        half_rise_crossing, linear_posterior_agreement, steepest_rise,
    )

    P = [10, 20, 40, 80, 160]
    c1, cG = [0.2, 0.2, 0.6, 1.0, 1.0], [0.0, 0.0, 0.01, 0.1, 0.5]
    assert half_rise_crossing(P, c1) == pytest.approx(40.0)  # half-way (0.6) between the floor 0.2 and 1.0
    assert steepest_rise(P, cG) == pytest.approx(np.sqrt(80 * 160))
    assert half_rise_crossing(P, [0.3] * 5) is None and steepest_rise(P, [0.5, 0.4, 0.3, 0.2, 0.1]) is None
    measured = {"P": P, "aG_mean": [0.1] * 5, "rhat_max": [1.01] * 5, "P1": 40.0, "crossover": 113.0}
    predicted = {"aG": [0.1] * 5, "P1": 30.0, "crossover": 150.0}
    assert linear_posterior_agreement(measured, predicted)["passes"] is True
    assert linear_posterior_agreement({**measured, "rhat_max": [1.01] * 4 + [1.3]}, predicted)["passes"] is False
    assert linear_posterior_agreement(measured, {**predicted, "P1": 15.0})["passes"] is False  # ratio 2.7
    assert linear_posterior_agreement(measured, {**predicted, "crossover": None})["passes"] is False
    assert linear_posterior_agreement(measured, None)["passes"] is False


def test_linear_P1_at_a_fixed_level_does_not_move_with_the_grid_end_and_the_half_rise_does():
    from emergence.validation.copy_task.posterior_validation import half_rise_crossing, threshold_crossing

    P = [8, 16, 32, 64, 128, 256, 512, 1024]
    c1 = [0.7, 0.7, 0.75, 1.0, 1.6, 2.5, 4.0, 5.5]  # still rising at the grid's end, as at L = 16
    short, long = threshold_crossing(P[:6], c1[:6], 1.5), threshold_crossing(P, c1, 1.5)
    assert short == long == pytest.approx(64 * 2 ** (0.5 / 0.6))  # log-linear between (64, 1.0) and (128, 1.6)
    assert half_rise_crossing(P[:6], c1[:6]) < 0.8 * half_rise_crossing(P, c1)  # moves with the end
    assert threshold_crossing(P, c1, 6.0) is None and threshold_crossing(P, c1, 0.5) is None  # never rises through


def test_the_P1_level_is_twice_the_prior_c1_floor_of_the_sign_fixed_attention():
    from emergence.numerics.copy_head.linear_posterior import LinearPosteriorTheory
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.data import copy_task_batch
    from emergence.validation.copy_task.models import CopyAttentionModel
    from emergence.validation.copy_task.posterior_validation import P1_LEVEL_FACTOR, prior_c1_level
    from emergence.validation.copy_task.training import measure

    L, V, draws = 6, 3, 2000
    convention = CopyTaskConvention.parse("", attention="linear")
    level = prior_c1_level(LinearPosteriorTheory(L, V, convention, draws=8), draws=draws)
    # brute force: prior draws of W_QK through the training model's own measurement (128 held-out sequences)
    model = CopyAttentionModel(draws, L, V, convention)
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():
        model.logit_weights.copy_(torch.randn(model.logit_weights.shape, generator=generator, dtype=torch.float64)
                                  * model.logit_prior_variance ** 0.5)
    evaluation = copy_task_batch([128] * draws, L, V, [11] * draws, convention.shift, convention.targets)
    c1 = measure(model, evaluation)["c1"].numpy()
    # both are means of 2000 draws of |c1|-like values with sd ~0.6 x mean: standard error ~1.3 % each
    assert P1_LEVEL_FACTOR * c1.mean() == pytest.approx(level, rel=0.06)


def test_umbrella_command_writes_the_issue_keys_and_resumes(tmp_path, capsys):
    arguments = [
        "validate", "posterior", "--attention", "softmax", "--L", "4", "--V", "2", "--P-grid", "8,32",
        "--windows", "0.3,0.6", "--chains", "2", "--warmup", "6", "--draws", "6", "--leapfrog", "3",
        "--theory-draws", "500", "--workers", "1", "--out", str(tmp_path / "runs"),
        "--json", str(tmp_path / "report.json"), "--plot", str(tmp_path / "plot.png"),
    ]
    assert main(arguments) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["method"] == "umbrella"
    assert set(report["predicted"]) >= {"P_star", "profiles", "delta_F_importance_sampled"}
    assert len(report["predicted"]["delta_F_importance_sampled"]) == 2  # one entry per P (None where the modes never coexist)
    assert set(report["saddle"]) >= {"P_star"}
    assert set(report["measured"]) >= {"P_star", "profiles", "rhat_max", "ess_min", "overlap_min", "mode_weight"}
    assert set(report["agreement"]) >= {"P_star_ratio", "basin_aG_error_max", "delta_F_error_max", "passes", "reasons"}
    assert report["agreement"]["passes"] is False  # six trajectories cannot meet R-hat <= 1.01 and ESS >= 400
    assert any("diagnostics not met" in reason for reason in report["agreement"]["reasons"])
    assert report["provenance"]["seed"] == 0 and report["provenance"]["config"]["method"] == "umbrella"
    assert (tmp_path / "plot.png").stat().st_size > 5_000
    capsys.readouterr()
    assert main(arguments[:-4] + ["--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["measured"] == report["measured"]  # exact: the same stored points


def test_linear_hmc_command_reports_transitions_and_fails_unconverged_points(tmp_path):
    arguments = [
        "validate", "posterior", "--attention", "linear", "--L", "4", "--V", "2", "--P-grid", "8,32,128",
        "--chains", "2", "--warmup", "6", "--draws", "6", "--leapfrog", "3", "--theory-draws", "100",
        "--workers", "1", "--out", str(tmp_path / "runs"), "--json", str(tmp_path / "report.json"),
    ]
    assert main(arguments) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["method"] == "hmc"
    for key in ("P1", "crossover", "c1_mean", "cG_mean", "rhat_max", "ess_min", "flagged"):
        assert key in report["measured"], key
    assert set(report["agreement"]) >= {"P1_ratio", "crossover_ratio", "passes"}
    assert report["agreement"]["passes"] is False and "not converged" in report["agreement"]["reason"]
