"""The demo's resume mechanism and report layout (with stand-in steps)."""

import json

from emergence.demo.framework import DemoContext, DemoStep, code_fingerprint, run_demo, run_step
from emergence.report.writer import Section, markdown_table


def counting_step(calls):
    def compute(context):
        calls.append(context.quick)
        figure = context.figures / "curve.png"
        figure.write_bytes(b"png")
        return Section("curve", "A curve", "body text", data={"value": 1.5}, figures=["figures/curve.png"],
                       derived="from SymPy", measured="by training")

    return DemoStep("curve", "A curve", compute)


def test_finished_steps_are_reused_and_rerun_when_config_or_figure_changes(tmp_path):
    calls = []
    step = counting_step(calls)
    context = DemoContext(tmp_path, quick=True, seed=0, corpus=None)
    assert run_step(step, context)[1] is False
    assert run_step(step, context)[1] is True
    assert calls == [True]
    assert run_step(step, DemoContext(tmp_path, quick=False, seed=0, corpus=None))[1] is False
    (tmp_path / "figures" / "curve.png").unlink()
    assert run_step(step, DemoContext(tmp_path, quick=False, seed=0, corpus=None))[1] is False
    assert len(calls) == 3


def test_report_and_results_hold_every_section(tmp_path):
    report, results = run_demo([counting_step([])], DemoContext(tmp_path, quick=True, seed=3, corpus=None))
    text = report.read_text()
    assert "## A curve" in text and "![curve](figures/curve.png)" in text and "**Derived.** from SymPy" in text
    document = json.loads(results.read_text())
    assert document["sections"]["curve"]["data"] == {"value": 1.5}
    assert document["provenance"]["seed"] == 3


def test_markdown_table_formats_numbers_and_missing_values():
    table = markdown_table(["claim", "exponent"], [["P1 ~ V^2", 2.00123], ["none", None]])
    assert table.splitlines()[2] == "| P1 ~ V^2 | 2.001 |" and "| none | — |" in table


def test_a_step_with_own_settings_is_keyed_by_them_only(tmp_path):
    calls = []
    plain = counting_step(calls)
    step = DemoStep(plain.key, plain.title, plain.compute, settings=lambda context: {"L": 8})
    assert run_step(step, DemoContext(tmp_path, quick=True, seed=0, corpus=None))[1] is False
    assert run_step(step, DemoContext(tmp_path, quick=False, seed=5, corpus=None))[1] is True
    changed = DemoStep(plain.key, plain.title, plain.compute, settings=lambda context: {"L": 16})
    assert run_step(changed, DemoContext(tmp_path, quick=False, seed=5, corpus=None))[1] is False
    assert len(calls) == 2
    stored = json.loads((tmp_path / "steps" / "curve.json").read_text())
    assert stored["config"] == {"settings": {"L": 16}, "code": code_fingerprint()}


def test_corpus_identity_follows_the_file_content(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("one story\n")
    first = DemoContext(tmp_path, quick=True, seed=0, corpus=corpus).corpus_identity()
    corpus.write_text("another story\n")
    assert DemoContext(tmp_path, quick=True, seed=0, corpus=corpus).corpus_identity() != first
    assert DemoContext(tmp_path, quick=True, seed=2, corpus=None).corpus_identity() == {"corpus": "synthetic", "seed": 2}


def test_a_truncated_step_file_is_set_aside_and_recomputed(tmp_path, caplog):
    calls = []
    step = counting_step(calls)
    context = DemoContext(tmp_path, quick=True, seed=0, corpus=None)
    run_step(step, context)
    stored = tmp_path / "steps" / "curve.json"
    stored.write_text(stored.read_text()[:25])  # truncated by a crash or a full disk
    with caplog.at_level("WARNING", logger="emergence"):
        section, reused = run_step(step, context)
    assert not reused and section.data == {"value": 1.5} and len(calls) == 2
    assert (tmp_path / "steps" / "curve.json.corrupt").exists()
    assert any("curve.json is corrupt" in record.getMessage() for record in caplog.records)
    assert run_step(step, context)[1] is True
