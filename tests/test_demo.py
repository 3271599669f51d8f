"""`emergence demo --quick` end to end: the report's contents, figure regeneration, resume, bad corpora."""

import json
import shutil

import pytest

from emergence.cli import main
from emergence.demo_figures import regenerate_figures
from emergence.demo_steps import planted_queries
from emergence.theory_status import render_status_page, status_numbers

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
    for original in originals:
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
