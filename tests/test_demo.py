"""`emergence demo --quick` end to end: the report's contents, figure regeneration, resume, bad corpora."""

import json
import shutil

import numpy as np
import pytest

from emergence.cli import main
from emergence.demo.figures import regenerate_figures
from emergence.demo.steps import planted_queries
from emergence.report.status_page import render_status_page
from emergence.validation.theory_status import status_numbers

STEP_TITLES = ("derivations", "phase diagrams", "scaling claims", "copy-task validation",
               "leading-term validation", "associations")


@pytest.fixture(scope="module")
def quick_demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "out"
    assert main(["demo", "--quick", "--out", str(out)]) == 0
    return out


def test_report_has_every_required_part(quick_demo):
    report = (quick_demo / "report.md").read_text()
    for figure in ("phase_diagram_linear", "phase_diagram_softmax", "scaling_ratios", "copy_task_linear",
                   "leading_term_cosines"):
        assert f"![{figure}](figures/{figure}.png)" in report
        assert (quick_demo / "figures" / f"{figure}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| claim | sweep (sizes) | measured local exponent" in report
    for claim in ("P1 ~ V²", "L^{3/2} V^{1/2}", "L ln²L"):
        assert claim in report
    assert "| statistic | query | planted partners |" in report
    for label in ("**Derived.**", "**Reconstructed.**", "**Measured.**", "**Comparison.**"):
        assert report.count(label) == 6
    assert "reconstruction" in report


def test_results_hold_the_numbers_shown(quick_demo):
    results = json.loads((quick_demo / "results.json").read_text())
    sections = results["sections"]
    assert list(sections) == ["derivations", "phase_diagrams", "scaling", "copy_task", "leading_terms", "associations"]
    claims = sections["scaling"]["data"]["claims"]
    assert {c["claim"] for c in claims} == {"linear-second-order", "linear-crossover", "softmax-first-order"}
    report = (quick_demo / "report.md").read_text()
    for claim in claims:
        for sweep in claim["sweeps"]:
            assert f"{sweep['exponent']:.4g}" in report and f"{sweep['spread']:.2g}" in report
    P1 = sections["phase_diagrams"]["data"]["diagrams"]["linear"]["transitions"]["P1"]
    assert f"{P1:.6g}" in report
    associations = sections["associations"]["data"]
    assert associations["recovered"] == associations["total"] == len(planted_queries())
    coefficients = sections["derivations"]["data"]["leading_terms"]["coefficients"]
    assert [c["values_s_1_to_6"][-1] for c in coefficients] == [6, 15, 85]
    assert results["provenance"]["config"]["quick"] is True


def test_results_json_regenerates_every_figure(quick_demo, tmp_path):
    shutil.copy(quick_demo / "results.json", tmp_path / "results.json")
    written = regenerate_figures(tmp_path / "results.json")
    originals = sorted((quick_demo / "figures").glob("*.png"))
    assert sorted(p.name for p in written) == [p.name for p in originals]
    for original in originals:  # exact by design: the same plot records (exact JSON round trip), the same code
        assert (tmp_path / "figures" / original.name).read_bytes() == original.read_bytes()


def test_second_run_reuses_every_step(quick_demo, capsys):
    stored = {p.name: p.stat().st_mtime_ns for p in (quick_demo / "steps").glob("*.json")}
    assert main(["demo", "--quick", "--out", str(quick_demo)]) == 0
    out = capsys.readouterr().out
    for title in STEP_TITLES:
        assert f"{title}: reused" in out
    assert {p.name: p.stat().st_mtime_ns for p in (quick_demo / "steps").glob("*.json")} == stored


def test_theory_status_page_renders_from_the_quick_results(quick_demo):
    numbers = status_numbers(json.loads((quick_demo / "results.json").read_text()))
    page = render_status_page(numbers)
    assert page.count("\n| ") >= 10 and "reconstruction" in page
    assert {row["holds"] for row in numbers["rows"]} <= {"yes", "no", "n/a"}


@pytest.mark.parametrize("content", [None, b"", b"\n\n  \n"])
def test_bad_corpus_is_a_one_line_error(tmp_path, capsys, content):
    corpus = tmp_path / "corpus.txt"
    if content is not None:
        corpus.write_bytes(content)
    assert main(["demo", "--quick", "--out", str(tmp_path / "out"), "--corpus", str(corpus)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("emergence: error: corpus") and "\n" not in error
    assert not (tmp_path / "out" / "report.md").exists()


def test_an_interrupted_demo_recomputes_only_the_missing_step(quick_demo, capsys):
    (quick_demo / "steps" / "associations.json").unlink()
    assert main(["demo", "--quick", "--out", str(quick_demo)]) == 0
    out = capsys.readouterr().out
    assert "associations: done" in out
    for title in STEP_TITLES[:-1]:
        assert f"{title}: reused" in out


def test_no_sampler_agrees_with_a_missing_transition_and_the_report_says_why(quick_demo):
    """The quick demo's own copy-task verdicts: a transition that is not within the factor never agrees, Adam's
    brackets decide (no 'too coarse' row), and SGLD is said to compare a posterior with the saddle."""
    results = json.loads((quick_demo / "results.json").read_text())
    section = results["sections"]["copy_task"]
    report = (quick_demo / "report.md").read_text()
    assert "too coarse" not in report
    for experiment in section["data"]["experiments"]:
        for optimizer in ("adam", "sgld"):
            verdict = experiment["agreement"][optimizer]
            statuses = {v["status"] for v in verdict["transitions"].values()}
            if statuses != {"within"} or verdict["converged_points"] < 2:
                assert verdict["passes"] is False
        adam = experiment["agreement"]["adam"]
        assert {v["status"] for v in adam["transitions"].values()} <= {"within", "outside", "missing"}
        if not adam["passes"]:
            assert f"Adam does not agree ({adam['reasons'][0]}" in report
        assert "SGLD samples the posterior; the theory curves here are the saddle (a MAP)" in section["comparison"]
    rows = status_numbers(results)["rows"]
    sgld = [row for row in rows if row["claim"].startswith("SGLD")]
    assert sgld and all(row["holds"] == "n/a" and "not the theory's verdict" in row["claim"] for row in sgld)
    assert not any("too coarse" in row["measured"] for row in rows)


def test_missing_status_data_fails_with_a_reason(quick_demo):
    """An empty record is missing data: the status rows over it say no, and why."""
    results = json.loads((quick_demo / "results.json").read_text())
    results["sections"]["derivations"]["data"]["leading_terms"]["coefficients"] = []
    run = results["sections"]["leading_terms"]["data"]["runs"][0]
    run["relative_error_slope_late"] = {}
    run["min_cosine_within_window"] = {name: None for name in run["min_cosine_within_window"]}
    rows = {row["claim"]: row for row in status_numbers(results)["rows"]}
    coefficients = rows["step coefficients s, C(s,2), 3C(s,4)+2C(s,3) (Theorem 4.1)"]
    assert coefficients["holds"] == "no" and "or none derived" in coefficients["measured"]
    assert rows["relative error of the leading terms is O(sη)"]["holds"] == "no"
    window = rows["inside the window every weight is its leading term (cosine ≈ 1, every layer)"]
    assert window["holds"] == "no" and "no cosine inside the window fails" in window["criterion"]


def test_the_copy_task_section_reports_a_missing_transition(monkeypatch, tmp_path):
    """A sampler whose P1 was not measured fails, and the comparison line names the missing transition."""
    import emergence.demo.steps as demo_steps
    from emergence.demo.framework import DemoContext
    from emergence.records import CopyHeadValidation
    from emergence.validation.copy_task.analysis import agreement, measured_curves

    P = [8, 16, 32, 64, 128]
    predicted = {"P": P, "c1": [0.0, 0.3, 0.5, 0.5, 0.5], "cG": [0.0, 0.0, 0.2, 0.6, 0.65], "loss": [1.0] * 5,
                 "transitions": {"P1": 12.0, "crossover": 45.0, "critical_exponent": {"beta": 0.5}}}

    def point(c1, cG):
        seed = {"global_start": "uniform", "uniform": {"converged": True}, "copy": {"converged": True}}
        return {"c1_mean": c1, "cG_mean": cG, "aG_mean": cG, "coverage_mean": 1.0, "test_loss_mean": 1.0,
                "c1_std": 0.0, "cG_std": 0.0, "aG_std": 0.0, "coverage_std": 0.0, "test_loss_std": 0.0,
                "copy_fraction_mean": cG, "copy_fraction_std": 0.0,
                "copy_fraction_uniform_mean": cG, "copy_fraction_copy_mean": cG,
                "c1_uniform_mean": c1, "c1_copy_mean": c1, "cG_uniform_mean": cG, "cG_copy_mean": cG,
                "per_seed": [seed], "converged_fraction": 1.0, "all_converged_fraction": 1.0,
                "metastable_fraction": 0.0, "bistable_fraction": 0.0, "aG_uniform_mean": cG, "aG_copy_mean": cG}

    good = [point(c1, cG) for c1, cG in zip(predicted["c1"], predicted["cG"])]
    flat = [point(0.0, cG) for cG in predicted["cG"]]  # c1 never rises: P1 is missing
    measured = {"adam": measured_curves("linear", "adam", P, good), "sgld": measured_curves("linear", "sgld", P, flat)}
    settings = {"P": P, "seeds": 1, "objective": "marginal", "adam_steps": 1, "sgld_burn_in": 1,
                "sgld_draws": 4, "sgld_thin": 1, "chains": 1}
    runs = [CopyHeadValidation(attention="linear", L=8, V=4, P=P, optimizer=optimizer, settings=settings,
                               predicted=predicted, measured=measured[optimizer],
                               agreement=agreement("linear", measured[optimizer], predicted))
            for optimizer in ("adam", "sgld")]
    monkeypatch.setattr(demo_steps, "mode", lambda context: {"copy_task": [settings]})
    monkeypatch.setattr(demo_steps, "_copy_task_experiment", lambda e, context: runs)
    monkeypatch.setattr(demo_steps, "draw_plots", lambda plots, out: None)
    section = demo_steps.copy_task_step(DemoContext(tmp_path, True, 0, None))
    assert "Adam agrees" in section.comparison
    assert "SGLD differs from the saddle (SGLD samples the posterior" in section.comparison
    assert "P1 predicted 12, measured —" in section.comparison
    assert "predicted inside the converged grid but not measured" in section.comparison
    assert "- SGLD against the saddle (not a verdict: SGLD samples the posterior" in section.body
    assert "differs (P1 predicted 12" in section.body


def test_the_full_demo_softmax_experiment_spans_the_prediction_bisects_and_states_the_landing(monkeypatch, tmp_path):
    """The full demo's softmax experiment, with a stand-in for training: its grid is 8 points over [P*/3, 3P*]
    around the theory's P* at the default convention, two bisection points follow, and the section states
    where the jump lands and the hysteresis."""
    import emergence.demo.steps as demo_steps
    import emergence.validation.copy_task.experiment as experiment
    from emergence.demo.framework import DemoContext
    from emergence.validation.copy_task.copy_experiment import grid_around_prediction
    from emergence.validation.copy_task.analysis import grid_coverage
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.predictions import predicted_phase_diagram

    softmax = next(e for e in demo_steps.FULL["copy_task"] if e["attention"] == "softmax")
    grid = grid_around_prediction("softmax", softmax["L"], softmax["V"])
    theory = predicted_phase_diagram("softmax", softmax["L"], softmax["V"], CopyTaskConvention(attention="softmax"),
                                     np.geomspace(grid[0], grid[-1], 200))
    P_star, (low, high) = theory["transitions"]["P_star"], theory["transitions"]["spinodals"]
    assert grid_coverage(grid, P_star)["spans"]
    landing = next(aG for P, aG in zip(theory["P"], theory["aG"]) if P > P_star)  # the theory's copy head

    def stand_in(config, device="cpu"):
        P = config["P"]
        aG = landing if P > P_star else 1 / softmax["L"]
        seed = {"global_start": "copy" if aG > 0.1 else "uniform", "uniform": {"converged": True},
                "copy": {"converged": True}}
        point = {"P": P, "per_seed": [seed], "converged_fraction": 1.0, "all_converged_fraction": 1.0,
                 "metastable_fraction": float(low <= P <= high), "bistable_fraction": float(low <= P <= high)}
        for key, value in (("c1", 1 - aG), ("cG", aG), ("aG", aG), ("coverage", 1.0), ("copy_fraction", aG),
                           ("test_loss", 1 - aG)):
            point[f"{key}_mean"], point[f"{key}_std"] = value, 0.0
            point.update({f"{key}_{start}_mean": value for start in ("uniform", "copy")})
        return point

    monkeypatch.setattr(experiment, "run_copy_point", stand_in)
    monkeypatch.setattr(demo_steps, "mode", lambda context: {"copy_task": [softmax]})
    monkeypatch.setattr(demo_steps, "draw_plots", lambda plots, out: None)
    section = demo_steps.copy_task_step(DemoContext(tmp_path, True, 0, None))  # quick: in process (one worker)
    (record,) = section.data["experiments"]
    assert set(record["agreement"]) == {"adam"}
    measured = record["measured"]["adam"]
    assert len(measured["bisection"]["added_P"]) == softmax["bisections"] == 2
    assert len(measured["P"]) == 10
    assert record["agreement"]["adam"]["passes"], record["agreement"]["adam"]["reasons"]
    assert "the jump lands: a_G" in section.body and "two minima (hysteresis) at P" in section.body
    from emergence.validation.theory_status import _copy_task_rows

    rows = _copy_task_rows(section.data["experiments"])
    assert rows[0]["holds"] == "yes" and "the jump lands" in rows[0]["measured"]
