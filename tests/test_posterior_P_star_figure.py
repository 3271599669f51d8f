"""docs/posterior_P_star_law.png is drawn by posterior_P_star_law_figure from its committed record, and only from it."""

import copy
import json
import math
from pathlib import Path

import pytest

from emergence.base.errors import EmergenceError
from emergence.report.figures import posterior_P_star_law_figure, save_figure

RECORD = Path(__file__).resolve().parents[1] / "docs" / "posterior_P_star_law.json"


@pytest.fixture(scope="module")
def record():
    return json.loads(RECORD.read_text(encoding="utf-8"))


def test_the_record_names_its_sources_and_the_doc_shows_the_figure(record):
    for part in ("theory", "study"):
        assert record[part]["source"]["command"] and record[part]["source"]["date"]
    assert "sampled" not in record  # the sampled points have one source: the study's rows
    for row in record["study"]["rows"]:
        assert row["sources"] and all(source["command"] and source["created"] for source in row["sources"])
    assert "(posterior_P_star_law.png)" in (RECORD.parent / "posterior_free_energy.md").read_text(encoding="utf-8")
    assert (RECORD.parent / "posterior_P_star_law.png").stat().st_size > 0


def test_the_figure_draws_every_number_of_the_record(record, tmp_path):
    figure = posterior_P_star_law_figure(record)
    axis = figure.axes[0]
    lines = {line.get_label(): line for line in axis.get_lines()}
    rows = record["theory"]["rows"]
    assert record["theory"]["trial"] == "block"  # the default trial's theory is the solid curve
    assert list(lines["posterior theory (block trial)"].get_xdata()) == [row["L"] for row in rows]
    assert list(lines["posterior theory (block trial)"].get_ydata()) == [row["posterior_P_star"] for row in rows]
    gauge = record["theory_gauge"]["rows"]
    assert list(lines["posterior theory (gauge-correct trial)"].get_xdata()) == [row["L"] for row in gauge]
    assert list(lines["posterior theory (gauge-correct trial)"].get_ydata()) == [row["posterior_P_star"] for row in gauge]
    saddle = [math.nan if row["saddle_P_star"] is None else row["saddle_P_star"] for row in rows]
    assert list(lines["saddle (MAP)"].get_ydata()) == pytest.approx(saddle, nan_ok=True)
    reference = next(line for label, line in lines.items() if label.startswith("$L"))
    largest = max(row["L"] for row in rows if row["saddle_P_star"] is not None)
    at_largest = dict(zip(reference.get_xdata(), reference.get_ydata()))[largest]
    assert at_largest == pytest.approx(next(r["saddle_P_star"] for r in rows if r["L"] == largest), rel=1e-12)
    bars = [line for line in axis.get_lines() if line.get_color() == "tab:green" and line.get_linestyle() == "-"]
    readings = [line for line in axis.get_lines() if line.get_marker() == "D"]
    sampled = [(row["L"], row["sampled"]) for row in record["study"]["rows"] if row["sampled"] is not None]
    assert [(list(bar.get_xdata()), list(bar.get_ydata())) for bar in bars] == [([L] * 2, s["bracket"]) for L, s in sampled]
    assert [(line.get_xdata()[0], line.get_ydata()[0]) for line in readings] == [(L, s["value"]) for L, s in sampled]
    assert axis.get_xscale() == axis.get_yscale() == "log"
    assert save_figure(figure, tmp_path / "law.png").stat().st_size > 0


@pytest.mark.parametrize("path", [("study", "rows", 0, "sampled", "value"), ("study", "rows", 1, "sampled", "bracket"),
                                  ("study", "rows", 2, "sampled"), ("theory", "rows", 2, "saddle_P_star"),
                                  ("theory", "rows"), ("theory", "trial"), ("theory_gauge", "rows"), ("study",)])
def test_a_missing_field_is_one_line_naming_it(record, path):
    broken = copy.deepcopy(record)
    parent = broken
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    with pytest.raises(EmergenceError, match=repr(path[-1])):
        posterior_P_star_law_figure(broken)


def test_a_size_without_a_sampled_P_star_draws_no_bar(record):
    """A study row whose sampled P* is missing (no converged bracket) is left out, the others drawn."""
    changed = copy.deepcopy(record)
    changed["study"]["rows"][1]["sampled"] = None
    axis = posterior_P_star_law_figure(changed).axes[0]
    readings = [line.get_xdata()[0] for line in axis.get_lines() if line.get_marker() == "D"]
    assert readings == [row["L"] for n, row in enumerate(record["study"]["rows"]) if n != 1]
