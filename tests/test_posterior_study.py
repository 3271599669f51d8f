"""The posterior size study (validation/copy_task/posterior_study.py): grid extension towards the sampled sign
change, the rows' ratios, and a missing P* stated with its reason.  The sampler is replaced by a stand-in whose
Delta F(P) = 8 ln(P_true / P) is known, so the study's own logic is what is tested."""

import math

import pytest

from emergence.validation.copy_task import posterior_study
from emergence.validation.copy_task.posterior_free_energy import measured_P_star
from emergence.validation.copy_task.posterior_study import extended_grid, run_posterior_study


def _stand_in(P_true: dict, theory: dict, saddle: dict, unconverged=lambda L, P: False):
    calls, handed, given = [], [], []

    def validate(attention, L, V, P, method, convention, settings, **common):
        grid = P or sorted({int(round(theory[L] * f)) for f in (0.6, 0.8, 1.0, 1.25)})
        calls.append((L, list(grid), common["out"]))
        handed.append(common.get("theory_P_star"))
        given.append((L, P, dict(settings)))
        delta = [8 * math.log(P_true[L] / p) for p in grid]
        converged = [not unconverged(L, p) for p in grid]
        measured = {"P": list(grid), "delta_F": delta, "delta_F_error": [0.1] * len(grid), "converged": converged,
                    "P_star": measured_P_star(grid, delta, [0.1] * len(grid), converged)}
        return {"measured": measured, "saddle": {"P_star": saddle[L]}, "predicted": {"P_star": theory[L]}}

    validate.handed = handed  # the theory P* each call was given (None: the validation scans it)
    validate.given = given  # each call's L, grid as passed (None: the default) and sampler settings
    return validate, calls


def test_the_grid_moves_until_it_brackets_the_sampled_sign_change(tmp_path):
    theory, saddle, P_true = {8: 260.0, 12: 470.0}, {8: 120.0, 12: 190.0}, {8: 215.0, 12: 900.0}
    validate, calls = _stand_in(P_true, theory, saddle)
    study = run_posterior_study([8, 12], 4, None, {}, out=str(tmp_path), validate=validate, extensions=3)
    rows = {row["L"]: row for row in study["rows"]}
    assert rows[8]["extensions"] == 0 and rows[12]["extensions"] >= 1  # 900 lies above 1.25 x 470
    for L in (8, 12):
        assert rows[L]["sampled"]["value"] == pytest.approx(P_true[L], rel=1e-9)  # Delta F is linear in ln P
        assert rows[L]["sampled_over_saddle"] == pytest.approx(P_true[L] / saddle[L], rel=1e-9)
        assert rows[L]["law_ratio"]["sampled"] == pytest.approx(P_true[L] / (L * math.log(L) ** 2), rel=1e-9)
    assert [out for _, _, out in calls] == [str(tmp_path / "L8")] + [str(tmp_path / "L12")] * (1 + rows[12]["extensions"])
    assert study["summary"]["sizes_measured"] == 2
    assert validate.handed == [None, None] + [theory[12]] * rows[12]["extensions"]  # the theory's P* scanned once per L


def test_a_jump_below_the_grid_extends_downwards():
    assert extended_grid([400, 500, 625], "below") == [256, 320, 400, 500, 625]


def test_no_converged_bracket_is_a_missing_value_with_its_reason(tmp_path):
    validate, _ = _stand_in({16: 5000.0}, {16: 700.0}, {16: 290.0})
    study = run_posterior_study([16], 4, None, {}, out=str(tmp_path), validate=validate, extensions=1)
    row = study["rows"][0]
    assert row["sampled"] is None and row["sampled_over_saddle"] is None and "after 1 extension" in row["reason"]
    assert study["summary"] == {"sizes_measured": 0, "sizes": 1}


def test_unconverged_points_do_not_bracket(tmp_path):
    """No point above the jump converges: the study extends upwards (the converged points are all positive),
    finds nothing converged there either, and ends without a sampled P*, saying why."""
    validate, _ = _stand_in({8: 215.0}, {8: 260.0}, {8: 120.0}, unconverged=lambda L, P: P > 215)
    row = run_posterior_study([8], 4, None, {}, out=str(tmp_path), validate=validate)["rows"][0]
    assert row["sampled"] is None and row["extensions"] == 2 and "no converged pair" in row["reason"]


def test_extending_on_the_wrong_side_fails_the_study(tmp_path, monkeypatch):
    """A planted sign error in the side rule: the study no longer finds a jump above its first grid."""
    monkeypatch.setattr(posterior_study, "missing_side",
                        lambda measured: {"above": "below", "below": "above", None: None}[_true_side(measured)])
    validate, _ = _stand_in({12: 900.0}, {12: 470.0}, {12: 190.0})
    row = run_posterior_study([12], 4, None, {}, out=str(tmp_path), validate=validate, extensions=3)["rows"][0]
    assert row["sampled"] is None


def _true_side(measured):
    values = [d for d, ok in zip(measured["delta_F"], measured["converged"]) if ok]
    return "above" if all(d > 0 for d in values) else "below" if all(d < 0 for d in values) else None


def test_the_figure_draws_the_three_curves_and_leaves_a_missing_sample_out(tmp_path):
    from emergence.report.figures import posterior_study_figure, save_figure

    validate, _ = _stand_in({8: 215.0, 16: 5000.0}, {8: 260.0, 16: 700.0}, {8: 120.0, 16: 290.0})
    study = run_posterior_study([8, 16], 4, None, {}, out=str(tmp_path), validate=validate, extensions=1)
    figure = posterior_study_figure(study)
    value_axis, ratio_axis = figure.axes[:2]
    lines = {line.get_label(): line for line in value_axis.get_lines()}
    assert list(lines["posterior theory"].get_ydata()) == [260.0, 700.0]
    assert list(lines["saddle (MAP)"].get_ydata()) == [120.0, 290.0]
    sampled = [container for container in value_axis.containers if container.get_label().startswith("sampled")]
    assert len(sampled) == 1 and list(sampled[0].lines[0].get_xdata()) == [8]  # L = 16 has no sampled P*
    ratio_theory = next(line for line in ratio_axis.get_lines() if line.get_label() == "posterior theory")
    assert ratio_theory.get_ydata()[0] == pytest.approx(260.0 / (8 * math.log(8) ** 2), rel=1e-12)
    assert save_figure(figure, tmp_path / "study.png").stat().st_size > 0


def test_the_api_and_the_command_run_the_same_study(tmp_path, monkeypatch, capsys):
    """`emergence.posterior_study` and `validate posterior --study` over a stand-in sampler: the same rows, the
    command's table, JSON and figure, and the record's provenance."""
    import json

    import emergence
    from emergence.cli import main
    from emergence.records import PosteriorStudy

    validate, _ = _stand_in({8: 215.0, 12: 900.0}, {8: 260.0, 12: 470.0}, {8: 120.0, 12: 190.0})
    monkeypatch.setattr(posterior_study, "run_posterior_validation", validate)
    record = emergence.posterior_study([12, 8], 4, out=str(tmp_path / "api"), executor="local", workers=1,
                                       extensions=3)
    assert isinstance(record, PosteriorStudy) and [row["L"] for row in record.rows] == [8, 12]
    assert record.provenance["config"]["sizes"] == [8, 12]
    assert main(["validate", "posterior", "--attention", "softmax", "--V", "4", "--study", "L=8,12",
                 "--extensions", "3", "--out", str(tmp_path / "cli"), "--json", str(tmp_path / "study.json"),
                 "--plot", str(tmp_path / "study.png")]) == 0
    printed = capsys.readouterr().out
    assert "sampled P*/(L ln^2 L)" in printed and (tmp_path / "study.png").stat().st_size > 0
    written = json.loads((tmp_path / "study.json").read_text())
    assert written["rows"] == json.loads(record.to_json())["rows"]


@pytest.mark.parametrize("arguments, message", [
    (["--attention", "softmax", "--V", "4"], "needs --L (or --study"),
    (["--attention", "softmax", "--V", "4", "--study", "L=8,x"], "integers >= 3"),
    (["--attention", "linear", "--V", "4", "--study", "L=8,12"], "softmax umbrella"),
    (["--attention", "softmax", "--V", "4", "--study", "L=8,12", "--L", "8"], "without --L"),
    (["--attention", "softmax", "--V", "4", "--study", "L=100000,8"], "GiB of memory"),
    (["--attention", "softmax", "--V", "4", "--study", "L=8,16", "--size-settings", "16:kappa"], "use L:NAME=VALUE"),
    (["--attention", "softmax", "--V", "4", "--study", "L=8,16", "--size-settings", "16:speed=3"], "use L:NAME=VALUE"),
    (["--attention", "softmax", "--V", "4", "--study", "L=8,16", "--size-settings", "x:kappa=800"], "use L:NAME=VALUE"),
    (["--attention", "softmax", "--V", "4", "--study", "L=8,16", "--size-settings", "16:kappa=stiff"], "not a number"),
    (["--attention", "softmax", "--V", "4", "--study", "L=8,16", "--size-settings", "16:windows=range:0.7:0.1:0.05"],
     "not a number"),
    (["--attention", "softmax", "--V", "4", "--study", "L=8,16", "--size-settings", "16:kappa=800",
      "--size-settings", "16:draws=800"], "given twice"),
    (["--attention", "softmax", "--V", "4", "--L", "8", "--size-settings", "8:kappa=800"], "goes with --study"),
    (["--attention", "softmax", "--V", "4", "--study", "L=8,12", "--size-settings", "16:kappa=800"],
     "--size-settings must map sizes of the study"),
    (["--attention", "softmax", "--V", "4", "--study", "L=8,16", "--size-settings", "16:kappa=-800"],
     "--size-settings at L = 16: kappa must be"),
    (["--attention", "softmax", "--V", "4", "--study", "L=8,16", "--size-settings", "16:windows=0.2:1.5"],
     "--size-settings at L = 16: centres"),
    (["--attention", "softmax", "--V", "4", "--study", "L=8,16", "--size-settings", "16:P-grid=520"],
     "--size-settings at L = 16: P must hold at least 2"),
])
def test_a_study_that_cannot_run_is_one_line_and_exit_2(arguments, message):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "emergence", "validate", "posterior", *arguments],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_the_api_refuses_bad_sizes():
    import emergence
    from emergence.base.arguments import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="sizes"):
        emergence.posterior_study([8, 2], 4)
    with pytest.raises(InvalidArgumentError, match="extensions"):
        emergence.posterior_study([8], 4, extensions=-1)


STIFF = {"centres": [round(0.05 * k, 2) for k in range(1, 16)], "kappa": 800.0, "max_windows": 24}
"""The L = 16 barrier settings of docs/posterior_free_energy.md: 15 windows 0.05 apart at kappa 800."""


def test_each_size_gets_its_own_settings_and_grid(tmp_path):
    """L = 16's settings replace the common ones at L = 16 only, in its first call and in its extensions, and its
    grid replaces the default one; L = 8 runs on the common settings and its default grid."""
    validate, _ = _stand_in({8: 215.0, 16: 700.0}, {8: 260.0, 16: 673.0}, {8: 120.0, 16: 292.0})
    common = {"kappa": 200.0, "draws": 400}
    study = run_posterior_study([8, 16], 4, None, common, out=str(tmp_path), validate=validate, extensions=2,
                                per_size={16: {**STIFF, "P": [620, 520, 570]}})
    by_size = {L: [(P, settings) for size, P, settings in validate.given if size == L] for L in (8, 16)}
    assert by_size[8] == [(None, common)]
    assert by_size[16][0] == ([520, 570, 620], {**common, **STIFF})  # sorted, the stiff windows, draws kept
    assert len(by_size[16]) == 2 and by_size[16][1][1] == {**common, **STIFF}  # the extension keeps them
    assert {row["L"]: row["extensions"] for row in study["rows"]} == {8: 0, 16: 1}
    assert common == {"kappa": 200.0, "draws": 400}  # the caller's settings are not changed


def test_the_size_settings_option_reads_lists_ranges_and_numbers():
    from emergence.cli.commands.validate_posterior import size_settings

    L, settings = size_settings("16:windows=range:0.05:0.75:0.05,kappa=800,max-windows=24,"
                                "P-grid=520:570:620:680:740")
    assert L == 16 and settings == {**STIFF, "P": [520, 570, 620, 680, 740]}
    assert size_settings("12:windows=0.1:0.3:0.5,draws=800,min-overlap=0.2") == (
        12, {"centres": [0.1, 0.3, 0.5], "draws": 800, "min_overlap": 0.2})


def test_the_api_and_the_command_record_the_per_size_settings(tmp_path, monkeypatch, capsys):
    import json

    import emergence
    from emergence.cli import main

    validate, _ = _stand_in({8: 215.0, 16: 616.0}, {8: 260.0, 16: 673.0}, {8: 120.0, 16: 292.0})
    monkeypatch.setattr(posterior_study, "run_posterior_validation", validate)
    record = emergence.posterior_study([8, 16], 4, out=str(tmp_path / "api"), executor="local", workers=1,
                                       per_size={16: {**STIFF, "P": (520, 570, 620, 680, 740)}})
    expected = {"16": {**STIFF, "P": [520, 570, 620, 680, 740]}}
    assert record.provenance["config"]["per_size"] == expected
    assert main(["validate", "posterior", "--attention", "softmax", "--V", "4", "--study", "L=8,16",
                 "--size-settings", "16:windows=range:0.05:0.75:0.05,kappa=800,max-windows=24,"
                                    "P-grid=520:570:620:680:740",
                 "--out", str(tmp_path / "cli"), "--json", str(tmp_path / "study.json")]) == 0
    capsys.readouterr()
    written = json.loads((tmp_path / "study.json").read_text())
    assert written["provenance"]["config"]["per_size"] == expected
    assert written["rows"] == json.loads(record.to_json())["rows"]
    stiff_calls = [settings for L, P, settings in validate.given if L == 16]
    assert all(settings["kappa"] == 800.0 and settings["centres"] == STIFF["centres"] for settings in stiff_calls)
    assert [settings.get("kappa") for L, P, settings in validate.given if L == 8] == [None, 200.0]  # API, command


def _record(L, P, delta_F, converged, *, theory=673.0, saddle=292.0, created="2026-12-06T07:26:55+00:00", commit=None):
    provenance = {"config": {"L": L, "P_grid": P}, "command": f"emergence validate posterior --L {L}", "seed": 0,
                  "created": created, "versions": {"emergence": "0.1.0"}} | ({} if commit is None else {"commit": commit})
    return {"measured": {"P": P, "delta_F": delta_F, "delta_F_error": [0.1] * len(P), "converged": converged},
            "saddle": {"P_star": saddle}, "predicted": {"P_star": theory}, "provenance": provenance}


def test_rows_from_saved_records_merge_the_converged_points():
    """L = 16 from a grid whose two largest points did not converge and their rerun: the rerun's points replace
    those two, never a converged one; the bracket is measured on the merged points; each source is kept."""
    grid = _record(16, [520, 570, 620, 680, 740], [15.0, 9.4, -0.7, -14.9, -28.0], [True, True, True, False, False],
                   commit="cc32530")
    rerun = _record(16, [620, 680, 740], [+5.0, -14.8, -28.0], [False, True, True], created="2026-12-06T07:48:15+00:00")
    small = _record(8, [187, 258], [3.0, -3.8], [True, True], theory=245.5, saddle=None)
    study = posterior_study.rows_from_records([grid, small, rerun])
    assert [row["L"] for row in study["rows"]] == [8, 16]
    row = study["rows"][1]
    assert [(p["P"], p["delta_F"], p["source"]) for p in row["points"]] == [
        (520, 15.0, 0), (570, 9.4, 0), (620, -0.7, 0), (680, -14.8, 1), (740, -28.0, 1)]
    assert row["converged"] == [True] * 5 and row["sampled"]["bracket"] == [570, 620]
    assert row["sampled"]["value"] == pytest.approx(measured_P_star([570, 620], [9.4, -0.7], [0.1, 0.1],
                                                                    [True, True])["value"], rel=1e-12)
    assert [source["commit"] for source in row["sources"]] == ["cc32530", None]
    assert row["sources"][1]["created"] == "2026-12-06T07:48:15+00:00" and row["extensions"] == 0
    assert row["theory_over_sampled"] == pytest.approx(673.0 / row["sampled"]["value"], rel=1e-12)
    assert study["rows"][0]["sampled_over_saddle"] is None and study["summary"]["sizes_measured"] == 2


def test_records_of_one_size_that_disagree_on_the_theory_are_refused():
    with pytest.raises(ValueError, match="L = 16 disagree on predicted"):
        posterior_study.rows_from_records([_record(16, [520, 570], [1.0, -1.0], [True, True]),
                                           _record(16, [620, 680], [-2.0, -3.0], [True, True], theory=700.0)])
