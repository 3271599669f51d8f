"""Every class of bad input in docs/user_guide.md ("Errors"): one line on stderr, exit 2, no traceback, no work.

Each case drives the command line in-process (``emergence.cli.main``); the table in the user guide
lists the same classes.  Refusals happen at parse time or at the top of the command, so each case
returns in well under a second of work (no timing assertions: the machine may be loaded).
"""

import json
import signal
import subprocess
import sys
import time

import pytest

from emergence.cli import main

COPY_HEAD = ["validate", "copy-head", "--attention", "linear", "--L", "8", "--V", "4", "--device", "cpu"]


def refused(capsys, arguments, *fragments):
    """Run ``arguments``; assert exit 2 and a single ``emergence: error:`` line holding every fragment."""
    assert main(arguments) == 2
    captured = capsys.readouterr()
    error = captured.err.strip()
    assert error.startswith("emergence: error: ") and "\n" not in error, captured.err
    assert "Traceback" not in captured.err + captured.out
    for fragment in fragments:
        assert fragment in error, error
    return error


@pytest.mark.parametrize("grid, fragment", [
    ("nan", "not a finite number"),
    ("inf,8", "not a finite number"),
    ("8", "1 distinct point"),
    ("8.5,16", "8.5 is not a whole number"),
    ("0,8", "must be >= 1"),
    ("geom:8:nan:4", "need finite"),
    ("8,x", "cannot read --P-grid"),
])
def test_grids_that_are_not_grids(capsys, grid, fragment):
    refused(capsys, COPY_HEAD + ["--P-grid", grid], "--P-grid", fragment)


@pytest.mark.parametrize("arguments, fragment", [
    (COPY_HEAD + ["--seed", "-1"], "--seed: must be an integer >= 0"),
    (COPY_HEAD + ["--seed", str(2**70)], "--seed: must be an integer >= 0 and <= 4294967295"),
    (["demo", "--seed", "-1"], "--seed"),
    (["validate", "leading-terms", "--seed", "-1"], "--seed"),
    (["basis", "synthetic", "--out", "x.npz", "--seed", "1.5"], "--seed: must be a whole number"),
])
def test_seeds_out_of_range(capsys, arguments, fragment):
    refused(capsys, arguments, fragment)


@pytest.mark.parametrize("arguments, fragment", [
    (COPY_HEAD + ["--workers", "0"], "--workers: must be an integer >= 1, got 0"),
    (COPY_HEAD + ["--L", "1"], "--L: L must be an integer >= 2"),
    (COPY_HEAD + ["--draws", "2"], "--draws"),
    (["validate", "leading-terms", "--batch-size", "0"], "--batch-size"),
    (["validate", "leading-terms", "--lr", "nan"], "--lr: learning rate must be a finite number"),
    (["phase-diagram", "--attention", "linear", "--L", "8", "--V", "4", "--points", "10000000000"], "--points"),
    (["phase-diagram", "--attention", "linear", "--L", "8", "--V", "4", "--P-max", "inf"], "--P-max"),
    (["scaling", "--claim", "linear-second-order", "--dps", "100000"], "--dps"),
    (["associate", "synthetic", "--query", "the", "--top", "0"], "--top"),
])
def test_numbers_out_of_range(capsys, arguments, fragment):
    refused(capsys, arguments, fragment)


def test_unknown_options_and_choices_are_one_line(capsys):
    refused(capsys, COPY_HEAD + ["--frobnicate"], "unrecognized arguments")
    refused(capsys, ["validate", "copy-head", "--attention", "cubic", "--L", "8", "--V", "4"], "invalid choice")


@pytest.mark.parametrize("option, name, fragment", [
    ("--plot", "x.xyz", "unsupported format '.xyz'"),
    ("--json", "x.txt", "unsupported format '.txt'"),
    ("--plot", "folder.png", "is a folder"),
    ("--json", "/proc/emergence/r.json", "cannot write"),  # no file can be created there, not even by root
    ("--out", "/proc/emergence-runs", "cannot write"),
])
def test_output_paths_are_checked_before_computing(capsys, tmp_path, monkeypatch, option, name, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.png").mkdir()
    refused(capsys, COPY_HEAD + ["--P-grid", "8,16", option, name], option, fragment)


def test_other_commands_check_their_outputs(capsys, tmp_path):
    refused(capsys, ["phase-diagram", "--attention", "linear", "--L", "8", "--V", "4", "--plot", str(tmp_path / "p.xyz")],
            "--plot")
    refused(capsys, ["basis", "synthetic", "--out", str(tmp_path / "stats.txt")], "--out", ".npz")
    refused(capsys, ["predict-weights", "synthetic", "--steps", "2", "--lr", "0.1", "--layers", "1",
                     "--out", "/proc/emergence/w.npz"], "cannot write")


def test_infinite_results_are_refused_not_written(capsys, tmp_path):
    refused(capsys, ["predict-weights", "synthetic", "--steps", "10", "--lr", "1e308", "--layers", "2",
                     "--out", str(tmp_path / "w.npz")], "overflow")
    assert not (tmp_path / "w.npz").exists()
    refused(capsys, ["predict-weights", "synthetic", "--steps", "10", "--lr", "inf", "--layers", "2",
                     "--out", str(tmp_path / "w.npz")], "--lr: learning rate must be a finite number")


@pytest.mark.parametrize("arguments, fragment", [
    (["--P-grid", "100000000"], "P up to 100000000"),
    (["--P-grid", "8,100000000"], "P up to 100000000"),
    (["--V", "1000000", "--P-grid", "8,16"], "V=1000000"),
    (["--L", "100000", "--P-grid", "8,16"], "L=100000"),
])
def test_memory_is_estimated_and_refused_before_training(capsys, arguments, fragment):
    error = refused(capsys, COPY_HEAD + arguments, "needs an estimated", "of memory, more than the budget", fragment)
    assert "TiB" in error or "GiB" in error


def test_memory_budget_is_configurable(capsys, monkeypatch):
    monkeypatch.setenv("EMERGENCE_MEMORY_BUDGET", "1M")
    refused(capsys, COPY_HEAD + ["--P-grid", "8,16"], "budget of 1 MiB")
    monkeypatch.setenv("EMERGENCE_MEMORY_BUDGET", "lots")
    refused(capsys, COPY_HEAD + ["--P-grid", "8,16"], "cannot read a memory size")


def test_corrupt_resumable_files_are_set_aside_and_recomputed(capsys, tmp_path):
    arguments = COPY_HEAD + ["--P-grid", "4,8", "--steps", "5", "--seeds", "1", "--workers", "1",
                             "--convention", "architecture=M", "--out", str(tmp_path / "runs")]
    assert main(arguments) == 0
    stored = sorted((tmp_path / "runs").glob("*.json"))
    assert len(stored) == 2
    stored[0].write_text(stored[0].read_text()[:40])  # truncated, as by a full disk
    capsys.readouterr()
    assert main(arguments) == 0
    err = capsys.readouterr().err
    assert f"{stored[0].name} is corrupt" in err and "moved aside" in err and "Traceback" not in err
    assert (tmp_path / "runs" / (stored[0].name + ".corrupt")).exists()
    json.loads(stored[0].read_text())  # recomputed


def test_a_corrupt_file_that_is_read_not_resumed_names_itself(capsys, tmp_path):
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"copy_head": ')
    refused(capsys, ["check", "--baseline", str(baseline)], str(baseline), "is corrupt", "delete it")


def test_check_reports_stale_baseline_entries(capsys, tmp_path):
    from emergence.validation.golden import BASELINE_PATH

    baseline = json.loads(BASELINE_PATH.read_text())
    baseline["retired.number"] = {"value": 1.0, "rel_tol": 1e-9, "description": "no longer computed"}
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(baseline))
    assert main(["check", "--baseline", str(path)]) == 1
    out = capsys.readouterr().out
    assert "retired.number" in out and "STALE" in out and "1 stale" in out
    from generated_files import regenerate

    regenerate.report_baseline_changes(path)
    out = capsys.readouterr().out
    assert "dropped (no longer computed): retired.number" in out and "added: none" in out


def test_bench_with_an_unknown_name_fails(capsys):
    refused(capsys, ["bench", "--only", "nosuch"], "matches no benchmark")


def test_short_corpus_hint_names_only_options_the_command_has(capsys, tmp_path):
    corpus = tmp_path / "short.txt"
    corpus.write_text("a tiny corpus\n")
    error = refused(capsys, ["demo", "--quick", "--out", str(tmp_path / "out"), "--corpus", str(corpus)],
                    "too short for the demo")
    assert "--T" not in error and "--oov" not in error and "--vocab" not in error
    error = refused(capsys, ["basis", str(corpus), "--out", str(tmp_path / "s.npz"), "--oov", "drop", "--vocab", "2"],
                    "nothing left after filtering")
    assert "oov=unk" in error and "--windows" not in error


def test_demo_refuses_to_replace_a_report_of_the_other_kind(capsys, tmp_path):
    out = tmp_path / "demo"
    out.mkdir()
    (out / "results.json").write_text(json.dumps({"provenance": {"config": {"quick": False}}}))
    refused(capsys, ["demo", "--quick", "--out", str(out)], "holds a full demo report", "--force")


def test_ctrl_c_stops_with_one_line_and_no_traceback(tmp_path):
    """SIGINT during a sweep on two worker processes: exit 130, what was kept, no worker tracebacks."""
    command = [sys.executable, "-m", "emergence", *COPY_HEAD[:-2], "--P-grid", "3000,6000", "--steps", "100000",
               "--workers", "2", "--out", str(tmp_path / "runs")]
    # A test runner started as a background job of a non-interactive shell (nohup, `cmd &`) hands its
    # children SIGINT *ignored*, and the command rightly keeps that: give it the terminal's default.
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not (tmp_path / "runs").exists() and time.monotonic() < deadline:  # the sweep has started
        time.sleep(0.2)
    time.sleep(2)
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    assert process.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert f"interrupted; finished steps are kept in {tmp_path / 'runs'}" in err


def test_a_missing_baseline_is_refused_not_compared(capsys, tmp_path):
    """A baseline path that does not exist is a typo, not an empty baseline: no table of NEW rows, exit 2."""
    refused(capsys, ["check", "--baseline", str(tmp_path / "missing.json")], "missing.json", "no such file")
    assert "NEW" not in capsys.readouterr().out


def test_a_missing_checkpoint_folder_is_named_as_missing(capsys, tmp_path):
    refused(capsys, ["checkpoints", str(tmp_path / "nonexistent"), "--corpus", "synthetic"],
            "nonexistent", "no such folder")


def test_the_parser_states_the_theorys_smallest_L(capsys):
    """The parser's minimum is the reduced action's (numerics.copy_head.sizes), not a looser one that fails later."""
    from emergence.numerics.copy_head.sizes import MINIMUM_L

    for command in (["phase-diagram", "--attention", "softmax"], ["validate", "posterior", "--attention", "softmax"]):
        refused(capsys, command + ["--L", str(MINIMUM_L - 1), "--V", "4"], f"--L: L must be an integer >= {MINIMUM_L}")


def test_a_P_range_below_every_transition_is_said_to_be_too_small(capsys):
    """At L = 1e10 the softmax jump lies far above P = 1e8: the summary says the range is too small."""
    assert main(["phase-diagram", "--attention", "softmax", "--L", "10000000000", "--V", "8", "--points", "16"]) == 0
    out = capsys.readouterr().out
    assert "none in range" in out and "P range too small" in out and "--P-max" in out, out


def test_an_unknown_query_is_named_before_the_window_length(capsys, tmp_path):
    """On a corpus too short for one window, a query that is not in it is reported as such."""
    corpus = tmp_path / "short.txt"
    corpus.write_text("the cat sat on the mat.\n\nthe dog ran in the park.\n")
    error = refused(capsys, ["associate", str(corpus), "--query", "zzzz"], "'zzzz'", "not in the corpus vocabulary")
    assert "window" not in error
    refused(capsys, ["associate", str(corpus), "--query", "cat"], "nothing left after filtering")


def test_predicted_weights_are_estimated_before_they_are_stacked(capsys, tmp_path):
    """(layers, V, V) arrays grow with --layers: refused with the estimate, nothing written."""
    refused(capsys, ["predict-weights", "synthetic", "--steps", "10", "--lr", "0.1", "--layers", "100000000",
                     "--out", str(tmp_path / "w.npz")], "predict-weights with 100000000 layers", "needs an estimated")
    assert not (tmp_path / "w.npz").exists()


def test_leading_term_training_is_estimated_before_the_model_is_built(capsys):
    refused(capsys, ["validate", "leading-terms", "--layers", "100000"], "validate leading-terms with 100000 layers",
            "needs an estimated")
