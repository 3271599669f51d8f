"""A saved umbrella measurement judged again against the posterior theory (``judge_posterior``,
``validate posterior --from-record``), on a small synthetic record (L = 4, V = 2) whose sampled part is the gauge
theory's own profile: the gauge theory passes it, a theory whose Delta F is shifted by 3 nats fails it, and the
trial reaches the theory, its label and the sweep key."""

import functools
import json

import pytest

from emergence import api
from emergence.base.errors import EmergenceError
from emergence.cli import main
from emergence.numerics.copy_head.posterior import DEFAULT_TRIAL
from emergence.validation.copy_task import posterior_rejudge
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.posterior_free_energy import (
    measured_P_star, posterior_P_star, predicted_point_config, run_predicted_point, theory_label)

L, V, DRAWS = 4, 2, 500
CONVENTION = CopyTaskConvention().with_attention("softmax")


@functools.cache
def _gauge_point(P: int, seed: int = 0) -> dict:
    return run_predicted_point(predicted_point_config(L, V, P, CONVENTION, 0.3, draws=DRAWS, seed=seed, importance_draws=0,
                                                      trial="gauge"))


def _record(grid, seed=0):
    """A softmax umbrella record at L, V whose measured Delta F, basins and means are the gauge theory's own (error 0.3)."""
    points = [_gauge_point(P, seed) for P in grid]
    delta = [point["delta_F"] for point in points]
    profiles = [{"P": P, "window_rhat": [1.002, 1.004], "window_ess": [600.0, 700.0], "window_overlap": [0.2], "centres": [0.3, 0.6],
                 "window_t_u": None} for P in grid]
    measured = {"P": list(grid), "converged": [True] * len(grid), "profiles": profiles, "delta_F": delta,
                "delta_F_error": [0.3] * len(grid), "aG_mean": [p["aG_mean"] for p in points],
                "aG_sem": [0.01] * len(grid), "basin_aG": [p["basin_aG"] for p in points],
                "mode_weight": [p["mode_weight"] for p in points], "seconds": [1.0] * len(grid),
                "seconds_per_gradient": [0.01] * len(grid), "flops_per_gradient": [1e6] * len(grid),
                "delta_F_bound": [7.0] * len(grid)}
    measured["P_star"] = measured_P_star(grid, delta, measured["delta_F_error"], measured["converged"])
    config = {"attention": "softmax", "L": L, "V": V, "P_grid": list(grid), "method": "umbrella",
              "convention": CONVENTION.as_dict(), "settings": {"divide": 0.3}}
    return {"predicted": {"divide": 0.3, "label": theory_label("gauge")}, "saddle": {"P_star": 10.0},
            "measured": measured, "agreement": {}, "method": "umbrella",
            "provenance": {"config": config, "seed": seed, "command": "synthetic"}}


GRID = [8, 16, 32, 64]
"""The synthetic record's P: the theory has no jump at these sizes (no P* to compare), Delta F and the means are compared."""

SCANNED: dict = {}


@pytest.fixture(autouse=True)
def scan_once(monkeypatch):
    """The theory's P* scan (tens of seconds) once per trial in this module; its value is the real one."""
    def cached(L, V, convention, draws=20_000, trial=DEFAULT_TRIAL):
        if (L, V, trial) not in SCANNED:
            SCANNED[L, V, trial] = posterior_P_star(L, V, convention, draws=draws, trial=trial)
        return SCANNED[L, V, trial]

    monkeypatch.setattr(posterior_rejudge, "posterior_P_star", cached)


@pytest.fixture(scope="module")
def grid():
    return list(GRID)


@pytest.fixture(scope="module")
def record_file(tmp_path_factory, grid):
    path = tmp_path_factory.mktemp("records") / "record.json"
    path.write_text(json.dumps(_record(grid)))
    return path


def test_the_theory_that_made_the_record_passes_it_and_the_sampled_part_is_reused(record_file):
    report = api.judge_posterior(str(record_file), trial="gauge", theory_draws=DRAWS, progress=False).to_dict()
    saved = json.loads(record_file.read_text())
    assert report["agreement"]["passes"], report["agreement"]["reasons"]
    # exact by design: the same configuration (draws, seed) gives the same profile
    assert report["predicted"]["delta_F"] == saved["measured"]["delta_F"]
    assert report["measured"]["delta_F"] == saved["measured"]["delta_F"]
    assert report["reused"]["sources"] == [saved["provenance"]]
    assert report["provenance"]["config"]["trial"] == "gauge"
    assert report["predicted"]["label"] == theory_label("gauge") and "gauge-correct" in report["predicted"]["label"]


def test_a_theory_with_a_shifted_delta_F_fails_the_same_record(record_file, monkeypatch):
    """The mutation: every theory Delta F 3 nats higher (beyond max(1, 2 x 0.3)) must fail at every P."""
    def shifted(config):
        point = run_predicted_point(config)
        return {**point, "delta_F": point["delta_F"] + 3.0}

    monkeypatch.setattr(posterior_rejudge, "run_predicted_point", shifted)
    report = api.judge_posterior(str(record_file), trial="gauge", theory_draws=DRAWS, progress=False).to_dict()
    assert not report["agreement"]["passes"]
    assert sum("Delta F" in reason for reason in report["agreement"]["reasons"]) == len(report["measured"]["P"])


def test_the_block_trial_is_the_default_and_reaches_the_theory_its_label_and_the_sweep_key(record_file):
    gauge, block = (predicted_point_config(L, V, 40, CONVENTION, 0.3, trial=trial) for trial in ("gauge", "block"))
    assert gauge != block and block["trial"] == "block" == DEFAULT_TRIAL
    assert predicted_point_config(L, V, 40, CONVENTION, 0.3) == block
    report = api.judge_posterior(str(record_file), theory_draws=DRAWS, progress=False).to_dict()  # the default trial
    assert report["provenance"]["config"]["trial"] == "block"
    assert report["predicted"]["trial"] == "block" and "block trial" in report["predicted"]["label"]
    assert "gauge" not in report["predicted"]["label"]
    saved = json.loads(record_file.read_text())
    # the block trial's KL is never above the gauge-correct one's, so its modes' F are not higher
    for point, P in zip(report["predicted"]["points"], saved["measured"]["P"]):
        gauge_point = _gauge_point(P)
        for name in ("uniform", "copy"):
            assert point["modes"][name]["free_energy"] <= gauge_point["modes"][name]["free_energy"] + 1e-9


def test_records_merge_point_by_point_the_later_replacing_the_earlier(grid):
    first, second = _record(grid), _record(grid[2:])
    second["measured"]["delta_F"] = [value - 5.0 for value in second["measured"]["delta_F"]]
    first["measured"]["converged"][2] = False
    merged = posterior_rejudge.merged_measurement([first, second])
    assert merged["P"] == grid and all(merged["converged"])
    assert merged["delta_F"] == first["measured"]["delta_F"][:2] + second["measured"]["delta_F"]
    assert merged["rhat_max"] == 1.004 and merged["ess_min"] == 600.0 and merged["overlap_min"] == 0.2
    other = _record(grid[:2], seed=1)
    with pytest.raises(EmergenceError, match="another seed"):
        posterior_rejudge.common_setting([first, other])


def test_the_command_judges_a_record_and_says_it_reused_it(record_file, tmp_path, capsys):
    """Without --trial: the default, the block trial."""
    out = tmp_path / "judged.json"
    arguments = ["validate", "posterior", "--attention", "softmax", "--V", str(V), "--from-record", str(record_file),
                 "--theory-draws", str(DRAWS), "--json", str(out)]
    assert main(arguments) == 0
    printed = capsys.readouterr().out
    assert f"sampled part reused from {record_file}" in printed and "block trial" in printed
    assert json.loads(out.read_text())["predicted"]["trial"] == "block"


@pytest.mark.parametrize("extra", [["--trial", "product"], ["--trial", "blok"], ["--from-record", "/nonexistent/r.json"],
                                   ["--from-record", "RECORD", "--P-grid", "8,16"],
                                   ["--from-record", "RECORD", "--L", "7"], ["--from-record", "NOT_JSON"],
                                   ["--from-record", "RECORD", "--method", "replica-exchange"],
                                   ["--from-record", "RECORD", "PARTIAL"]])
def test_bad_trial_or_record_is_a_one_line_error(extra, record_file, tmp_path, capsys):
    bad, partial = tmp_path / "bad.json", tmp_path / "partial.json"
    bad.write_text("{not json")
    record = json.loads(record_file.read_text())
    del record["measured"]["delta_F_bound"]
    partial.write_text(json.dumps(record))
    files = {"RECORD": str(record_file), "NOT_JSON": str(bad), "PARTIAL": str(partial)}
    extra = [files.get(item, item) for item in extra]
    arguments = ["validate", "posterior", "--attention", "softmax", "--V", str(V)] + extra
    assert main(arguments) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error


def test_the_api_refuses_a_non_default_trial_for_the_linear_samplers():
    from emergence.base.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="trial"):
        api.validate_posterior("linear", 8, 4, trial="gauge")
    with pytest.raises(InvalidArgumentError, match="trial"):
        api.validate_posterior("softmax", 8, 4, trial="row")


def test_the_block_trials_importance_weights_at_the_gauge_split_are_the_gauge_trials():
    """At the gauge split (tt = pt = t_u, tp = pp = t_v) the block trial is the gauge-correct trial, so its F_trial
    (a mean of -ln w over 2000 draws, sd ~0.27: standard error ~0.006 each) matches; the mutation
    (tt four times too wide) is a worse trial and lies far above."""
    from emergence.numerics.copy_head.block_posterior import BlockMode
    from emergence.numerics.copy_head.posterior import PosteriorTheory
    from emergence.validation.copy_task.posterior_diagnosis import importance_sampled_free_energy

    mode = PosteriorTheory(L, V, CONVENTION, draws=DRAWS, trial="gauge").modes(20)["uniform"]
    split = {"tt": mode.t_u, "pt": mode.t_u, "tp": mode.t_v, "pp": mode.t_v}
    gauge = importance_sampled_free_energy(L, V, 20, mode, CONVENTION, 2000, trial="gauge")
    block = importance_sampled_free_energy(L, V, 20, BlockMode(**mode.__dict__, ratios=split), CONVENTION, 2000,
                                           trial="block")
    wrong = importance_sampled_free_energy(L, V, 20, BlockMode(**mode.__dict__, ratios={**split, "tt": 4 * mode.t_u}),
                                           CONVENTION, 2000, trial="block")
    assert abs(block["F_trial"] - gauge["F_trial"]) < 0.08  # over 9 standard errors of the difference
    assert wrong["F_trial"] - gauge["F_trial"] > 0.5
