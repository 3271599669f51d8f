"""scripts/posterior_study_records.py: the P*(L) study assembled from saved validation records (merged point by
point), written into a record's study key with its sources; bad input is one line and exit 2.  And the committed
study of docs/posterior_P_star_law.json is consistent with its own merged points."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from emergence.validation.copy_task.posterior_free_energy import measured_P_star

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "posterior_study_records.py"


def _record(path: Path, L, P, delta_F, converged, commit=None) -> str:
    provenance = {"config": {"L": L}, "command": f"emergence validate posterior --L {L}", "seed": 0,
                  "created": "2026-12-06T07:26:55+00:00", "versions": {}} | ({"commit": commit} if commit else {})
    path.write_text(json.dumps({"measured": {"P": P, "delta_F": delta_F, "delta_F_error": [0.1] * len(P),
                                             "converged": converged},
                                "saddle": {"P_star": 292.0}, "predicted": {"P_star": 673.0}, "provenance": provenance}))
    return str(path)


def _run(*arguments):
    return subprocess.run([sys.executable, str(SCRIPT), *arguments], capture_output=True, text=True, timeout=120)


def test_the_study_key_is_written_beside_the_other_keys(tmp_path):
    grid = _record(tmp_path / "grid.json", 16, [570, 620, 680], [9.4, -0.7, -14.0], [True, False, False])
    rerun = _record(tmp_path / "rerun.json", 16, [620, 680], [-0.6, -14.8], [True, True], commit="b0d6b1e")
    target = tmp_path / "law.json"
    target.write_text(json.dumps({"V": 4, "theory": {"rows": []}}))
    done = _run(f"{grid}@cc32530", rerun, "--into", str(target))
    assert done.returncode == 0, done.stderr
    written = json.loads(target.read_text())
    assert written["V"] == 4 and written["theory"] == {"rows": []}
    row = written["study"]["rows"][0]
    assert row["sampled"]["bracket"] == [570, 620] and [p["source"] for p in row["points"]] == [0, 1, 1]
    assert [source["commit"] for source in row["sources"]] == ["cc32530", "b0d6b1e"]
    assert written["study"]["source"]["records"] == [grid, rerun]


@pytest.mark.parametrize("content, message", [(None, "cannot read"), ("{not json", "cannot read"),
                                              ('{"measured": {}}', "not a posterior validation record")])
def test_a_bad_record_is_one_line_and_exit_2(tmp_path, content, message):
    path = tmp_path / "record.json"
    if content is not None:
        path.write_text(content)
    done = _run(str(path), "--out", str(tmp_path / "study.json"))
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "study.json").exists()


def test_the_committed_study_is_measured_from_its_own_points():
    """Each row's sampled P* is the bracket and reading of its merged converged points (no number typed in)."""
    study = json.loads((ROOT / "docs" / "posterior_P_star_law.json").read_text(encoding="utf-8"))["study"]
    for row in study["rows"]:
        points = row["points"]
        again = measured_P_star([p["P"] for p in points], [p["delta_F"] for p in points],
                                [p["delta_F_error"] for p in points], [p["converged"] for p in points])
        assert row["sampled"]["bracket"] == again["bracket"]
        for key in ("value", "error"):  # the same arithmetic on the same numbers: within a few rounding units
            assert row["sampled"][key] == pytest.approx(again[key], rel=1e-14)
        assert {p["source"] for p in points} <= set(range(len(row["sources"])))


def test_a_theory_computed_again_replaces_the_records_own_and_the_row_says_so(tmp_path):
    from emergence.validation.copy_task.posterior_study import rows_from_records

    grid = json.loads(Path(_record(tmp_path / "grid.json", 16, [570, 620], [9.4, -0.7], [True, True])).read_text())
    kept = rows_from_records([grid])["rows"][0]
    assert kept["theory"] == 673.0 and "theory_trial" not in kept
    again = rows_from_records([grid], {16: {"P_star": 640.0, "trial": "block", "source": "stand-in"}})["rows"][0]
    assert again["theory"] == 640.0 and again["theory_recorded"] == 673.0
    assert again["theory_trial"] == "block" and again["theory_source"] == "stand-in"
    assert again["theory_over_sampled"] == pytest.approx(640.0 / again["sampled"]["value"], rel=4e-16)
    assert again["law_ratio"]["theory"] != kept["law_ratio"]["theory"]


def test_the_committed_study_theory_is_the_records_default_trial_theory():
    """The study's theory column is the default trial's P*, the same number as the theory key's row at that L (both
    posterior_P_star with quadrature row averages on the same scan: deterministic)."""
    from emergence.numerics.copy_head.posterior import DEFAULT_TRIAL

    record = json.loads((ROOT / "docs" / "posterior_P_star_law.json").read_text(encoding="utf-8"))
    theory = {row["L"]: row["posterior_P_star"] for row in record["theory"]["rows"]}
    assert record["theory"]["trial"] == DEFAULT_TRIAL
    for row in record["study"]["rows"]:
        assert row["theory_trial"] == DEFAULT_TRIAL
        assert row["theory"] == pytest.approx(theory[row["L"]], rel=1e-12)


def test_trial_needs_each_records_sizes_and_convention(tmp_path):
    """--trial computes the theory at the records' V and convention: a record without them is one line and exit 2,
    before any computing (the stub records above hold only L)."""
    grid = _record(tmp_path / "grid.json", 16, [570, 620], [9.4, -0.7], [True, True])
    done = _run(grid, "--trial", "block", "--out", str(tmp_path / "study.json"))
    assert done.returncode == 2 and "needs V and convention" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "study.json").exists()
