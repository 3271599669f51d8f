"""A text corpus as the copy head's token process: the lag-joint action, the corpus windows, the CLI's refusals.

Tolerances: the lag-moment data term equals the brute-force data term of the L x L attention matrix to 1e-12
relative (sums of ~L^2 terms of order one: a few thousand rounding units); on exact Markov joints the action
equals the generated persistence kernels to 1e-12 (value, gradient) and 1e-7 (Hessian: central differences,
step 1e-5).  The corpus process built from generated Markov(ρ) text measures J_k to about 2e-3 per entry
(100 000 tokens; measured 2.2e-3 at ρ = 0.4, L = 16, V = 4) and reproduces the exact process's P* to 2e-3
relative (measured 7e-5: 294.269 against 294.290); dropping the correlations (the i.i.d. joints) moves P* by 7e-3 at ρ = 0.4, L = 16,
V = 4 (292.35 against 294.29), so the test tells a mis-wired lag law from estimation noise.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

from emergence.base.errors import EmergenceError
from emergence.numerics.copy_head.lag_joint_action import LagJointData, lag_moments
from emergence.numerics.copy_head.token_process import (
    TokenProcess,
    copy_transition,
    cyclic_shift,
    data_term,
    token_process_action,
)
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.token_streams import sample_tokens

OTHER_WORDS = tuple("q" + a + b for a in "abcdefgh" for b in "abcdefgh")
CLASS_WORDS = ("alpha", "beta", "gamma", "delta", "epsilon")


def markov_text(path, rho: float, V: int, tokens: int, seed: int = 0):
    """A one-document text whose V classes (V - 1 words and 64 rarer ones, all <unk>) follow the persistence chain."""
    ids = sample_tokens(f"markov:rho={rho}", 1, tokens, V, torch.Generator().manual_seed(seed))[0].numpy()
    others = np.array(OTHER_WORDS)[np.random.default_rng(seed).integers(len(OTHER_WORDS), size=tokens)]
    words = np.where(ids < V - 1, np.array(CLASS_WORDS[: V - 1])[np.minimum(ids, V - 2)], others)
    path.write_text(" ".join(words) + "\n", encoding="utf-8")
    return path


def symmetric_attention(attention: str, L: int, y) -> np.ndarray:
    """The L x L matrix of the symmetric family at coordinates ``y``: softmax rows ``(a0, aG)``, linear ``(c0, cG, c1)``."""
    S = cyclic_shift(L)
    if attention == "linear":
        c0, cG, c1 = y
        return c0 * np.eye(L) + cG * S + c1 / L
    a0, aG = y
    A = np.full((L, L), (1 - a0 - aG) / (L - 2))
    np.fill_diagonal(A, a0)
    A[S == 1] = aG
    return A


def random_joints(rng, L: int, V: int) -> np.ndarray:
    """The lag joints of a random stationary Markov chain: :math:`J_k[u, v] = \\pi_v (T^k)_{vu}`."""
    T = rng.random((V, V)) + 0.2
    T /= T.sum(axis=1, keepdims=True)
    values, vectors = np.linalg.eig(T.T)
    pi = np.real(vectors[:, np.argmax(np.real(values))])
    pi /= pi.sum()
    return np.stack([(pi[:, None] * np.linalg.matrix_power(T, k)).T for k in range(L)])


@pytest.mark.parametrize("attention, y", [("softmax", (0.12, 0.55)), ("softmax", (0.02, 0.07)), ("linear", (0.3, -0.4, 0.9))])
def test_the_lag_moment_data_term_is_the_brute_force_data_term(attention, y):
    rng = np.random.default_rng(3)
    L, V = 7, 3
    joints = random_joints(rng, L, V)
    data = LagJointData(attention, joints, beta=1 / L, lam=1 / L)
    for P in (3.0, 90.0, 4000.0):
        expected = data_term(symmetric_attention(attention, L, y), joints, P, 1 / L, 1 / L)
        assert np.isclose(data.value([np.array(v) for v in y], P), expected, rtol=1e-12, atol=0)


def test_a_mutated_lag_moment_is_rejected_by_the_brute_force_comparison():
    """Mutation: Q_S built from J_2 instead of J_1 (what a lag off by one in lag_moments gives)."""
    rng = np.random.default_rng(4)
    L, V, y, P = 7, 3, (0.12, 0.55), 90.0
    joints = random_joints(rng, L, V)
    data = LagJointData("softmax", joints, 1 / L, 1 / L)
    mutated = joints.copy()
    mutated[1] = joints[2]
    Q_I, Q_S, Q_J = lag_moments(mutated)
    data.for_C[1], data.for_B[1] = Q_S + Q_S.T, Q_S
    expected = data_term(symmetric_attention("softmax", L, y), joints, P, 1 / L, 1 / L)
    assert not np.isclose(data.value([np.array(v) for v in y], P), expected, rtol=1e-6)


def test_the_data_terms_gradient_is_its_finite_difference():
    rng = np.random.default_rng(5)
    L, V = 9, 4
    data = LagJointData("softmax", random_joints(rng, L, V), 1 / L, 1 / L)
    y, P, h = np.array([0.1, 0.4]), 300.0, 1e-6
    gradient = data.gradient(list(y), P)
    for i in range(2):
        up, down = y.copy(), y.copy()
        up[i] += h
        down[i] -= h
        slope = (data.value(list(up), P) - data.value(list(down), P)) / (2 * h)
        assert np.isclose(gradient[i], slope, rtol=1e-6)


@pytest.mark.parametrize("attention", ["softmax", "linear"])
def test_on_exact_markov_joints_the_action_is_the_persistence_kernels(attention, tmp_path):
    """The corpus route (rho = 0 kernels, data term replaced) against the derived persistence action at rho = 0.4."""
    from emergence.numerics.copy_head.lag_joint_action import LagJointKernels

    L, V = 16, 4
    exact = token_process_action(attention, L, V, TokenProcess.parse("markov:rho=0.4"))
    route = token_process_action(attention, L, V, TokenProcess.parse("markov:rho=0"))
    beta, lam = route.parameters[-1], route.parameters[-2]
    route.kernels = LagJointKernels(route.kernels, attention, TokenProcess.parse("markov:rho=0.4").joints(L, V),
                                   TokenProcess("iid").joints(L, V), beta, lam)
    y = np.random.default_rng(6).normal(0.0, 0.5, (len(exact.coordinates), 5))
    P = np.array([10.0, 100.0, 300.0, 1000.0, 5000.0])
    for method, tolerance in (("value", 1e-12), ("gradient", 1e-12), ("hessian", 1e-7)):
        a, b = getattr(exact, method)(y, P), getattr(route, method)(y, P)
        assert np.max(np.abs(a - b) / np.maximum(1.0, np.abs(a))) < tolerance, method


@pytest.mark.slow
def test_a_corpus_of_markov_text_reproduces_the_markov_p_star(tmp_path):
    from emergence.numerics.copy_head.token_process import copy_transition

    L, V = 16, 4
    text = markov_text(tmp_path / "markov.txt", 0.4, V, 100_000)
    P = np.geomspace(270.0, 320.0, 24)
    exact = copy_transition("softmax", L, V, TokenProcess.parse("markov:rho=0.4"), P)["P_star"]
    measured = copy_transition("softmax", L, V, TokenProcess.parse(f"corpus:{text}"), P)["P_star"]
    iid = copy_transition("softmax", L, V, TokenProcess.parse("iid"), P)["P_star"]
    assert abs(measured / exact - 1) < 2e-3, (measured, exact)
    assert abs(iid / exact - 1) > 2e-3, (iid, exact)  # the tolerance separates correlated from i.i.d. joints


def test_the_measured_joints_of_markov_text_are_the_markov_joints(tmp_path):
    L, V = 16, 4
    text = markov_text(tmp_path / "markov.txt", 0.4, V, 100_000)
    measured = TokenProcess.parse(f"corpus:{text}").joints(L, V)
    assert np.abs(measured - TokenProcess.parse("markov:rho=0.4").joints(L, V)).max() < 6e-3


def test_corpus_windows_are_consecutive_class_ids_with_previous_token_targets(tmp_path):
    L, V = 8, 4
    text = markov_text(tmp_path / "markov.txt", 0.6, V, 5_000)
    process = TokenProcess.parse(f"corpus:{text}")
    batch = copy_task_batch([5, 7], L, V, seeds=[0, 1], tokens=process.label())
    assert tuple(batch.tokens.shape) == (12, L) and tuple(batch.targets.shape) == (12, L, V)
    assert bool((batch.targets[:, 1:, :].argmax(-1) == batch.tokens[:, :-1]).all())
    assert bool((batch.targets[:, 0, :].argmax(-1) == batch.tokens[:, -1]).all())  # cyclic: y_0 = x_{L-1}
    from emergence.numerics.copy_head.corpus_process import corpus_documents

    stream = "," + ",".join(map(str, np.concatenate(corpus_documents(process.source, process.tokenizer, V, L)))) + ","
    assert all("," + ",".join(map(str, row.tolist())) + "," in stream for row in batch.tokens)
    again = copy_task_batch([5, 7], L, V, seeds=[0, 1], tokens=process.label())
    assert torch.equal(batch.tokens, again.tokens)


def test_corpus_windows_of_real_or_generated_text(bigram_text):
    tokens = sample_tokens(f"corpus:{bigram_text}", 64, 16, 4, torch.Generator().manual_seed(0))
    assert tuple(tokens.shape) == (64, 16) and int(tokens.min()) >= 0 and int(tokens.max()) < 4


def test_the_record_names_the_process_its_provenance_and_lag_range(tmp_path, capsys):
    import hashlib

    from emergence.cli import main

    text = markov_text(tmp_path / "markov.txt", 0.4, 3, 3_000)
    out = tmp_path / "diagram.json"
    assert main(["phase-diagram", "--attention", "softmax", "--L", "8", "--V", "3", "--points", "8", "--P-min", "10",
                 "--P-max", "1000", "--tokens", f"corpus:{text}", "--tokenizer", "whitespace", "--json", str(out)]) == 0
    statistics = json.loads(out.read_text())["token_statistics"]
    assert statistics["source"] == "measured" and statistics["lag_range"] == [0, 7]
    assert statistics["sha256"] == hashlib.sha256(text.read_bytes()).hexdigest()
    assert statistics["tokenizer"] == "whitespace" and statistics["V"] == 3 and statistics["tokens"] == 3_000
    assert "sha256" in capsys.readouterr().out


def _refusal(capsys, arguments) -> str:
    from emergence.cli import main

    assert main(arguments) == 2
    captured = capsys.readouterr()
    error = captured.err.strip()
    assert error.startswith("emergence: error: ") and "\n" not in error, captured.err
    assert "Traceback" not in captured.err + captured.out
    return error


@pytest.mark.parametrize("command", [
    ["phase-diagram", "--attention", "softmax", "--L", "16", "--V", "4"],
    ["validate", "copy-head", "--attention", "softmax", "--L", "16", "--V", "4", "--device", "cpu", "--P-grid", "10,20"],
])
@pytest.mark.parametrize("case", ["missing", "folder", "binary", "too little", "vocab", "tokenizer without corpus", "bpe"])
def test_a_bad_corpus_is_one_line_and_exit_2(capsys, tmp_path, command, case):
    short = tmp_path / "short.txt"
    short.write_text("a b c\n\nd e f g\n", encoding="utf-8")
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"abc \xff\xfe\x00 def")
    options = {"missing": ["--tokens", f"corpus:{tmp_path / 'none.txt'}"], "folder": ["--tokens", f"corpus:{tmp_path}"],
               "binary": ["--tokens", f"corpus:{binary}"], "too little": ["--tokens", f"corpus:{short}"],
               "vocab": ["--tokens", f"corpus:{short}", "--vocab", "5"],
               "tokenizer without corpus": ["--tokens", "markov:rho=0.2", "--tokenizer", "whitespace"],
               "bpe": ["--tokens", f"corpus:{short}", "--tokenizer", "bpe"]}[case]
    error = _refusal(capsys, command + options)
    expected = {"missing": "not a readable file", "folder": "not a readable file", "binary": "UTF-8",
                "too little": "windows of L = 16", "vocab": "--vocab", "tokenizer without corpus": "corpus:PATH only",
                "bpe": "not bpe"}[case]
    assert expected in error, error


def test_the_corpus_process_text_round_trips():
    path = os.path.abspath(__file__)
    process = TokenProcess.parse(f"corpus:{path}#tokenizer=whitespace")
    assert (process.source, process.tokenizer) == (path, "whitespace")
    assert TokenProcess.parse(process.label()) == process
    with pytest.raises(EmergenceError):
        TokenProcess.parse("corpus:")


def test_the_rho_sweep_figure_is_registered_and_draws_a_stored_record(tmp_path):
    from emergence.demo.figures import FIGURE_KINDS, draw_stored

    record = {"attention": "softmax", "L": 16, "V": 4, "adam": [{"tokens": "iid", "rho": 0.0, "bracket": [249, 292]}],
              "theory": [{"rho": 0.0, "P_star": 292.3, "spinodals": [279.8, 319.0]}, {"rho": 0.6, "onset": 306.9}],
              "corpus": {"tokens": "corpus:/x/text.txt", "rho_eff": 0.1, "onset": 680.5, "token_statistics": {"file": "/x/text.txt"}}}
    assert FIGURE_KINDS["rho_sweep"] == "RhoSweep"
    assert draw_stored("rho_sweep", record, tmp_path / "sweep.png").stat().st_size > 0


def test_an_adam_point_reads_the_named_transition_and_its_verdict():
    from emergence.numerics.copy_head.rho_sweep import adam_point

    measured = {"P_star": {"bracket": [424, 580], "rise": 0.15}, "onset": {"bracket": [496, 580], "rise": 0.45}}
    record = {"attention": "softmax", "L": 16, "V": 4, "settings": {"tokens": "markov:rho=0.6"}, "measured": measured,
              "predicted": {"transition_type": "continuous", "transitions": {"P_star": None, "onset": 306.9}}}
    verdict = {"passes": False, "transitions": {"onset": {"status": "outside"}}}
    point = adam_point(record, {}, "onset", verdict)
    assert (point["kind"], point["bracket"], point["predicted"], point["rho"]) == ("onset", [496, 580], 306.9, 0.6)
    assert (point["attention"], point["status"], point["passes"]) == ("softmax", "outside", False)
    point = adam_point(record, {}, "P_star", {"passes": True, "transitions": {"P_star": {"status": "within"}}})
    assert (point["kind"], point["bracket"], point["predicted"], point["status"]) == ("P_star", [424, 580], None, "within")


def _linear_adam_record(L: int, P1: float, rho: float = 0.4) -> dict:
    """A linear ``validate copy-head`` record (its JSON) whose measurement has P1 = 100 and crossover 600 (the
    linear verdict's stand-in sweep), predicted at ``P1``."""
    from test_linear_verdict import CROSSOVER, _sweep, _theory

    from emergence.validation.copy_task.analysis import linear_grid

    predicted = _theory(P1=P1) | {"transition_type": "second order + crossover"}
    measured = _sweep(linear_grid(100.0, CROSSOVER))
    return json.loads(json.dumps({"attention": "linear", "L": L, "V": 4, "settings": {"tokens": f"markov:rho={rho}"},
                                  "measured": measured, "predicted": predicted}, default=float))


def test_the_linear_rho_sweep_gives_the_theorys_P1_and_crossover_and_judges_each_adam_record():
    from emergence import api

    grid = np.geomspace(5, 2000, 24)
    right, planted = _linear_adam_record(16, 100.0), _linear_adam_record(16, 300.0, rho=0.2)
    record = api.rho_sweep(16, 4, rho=[0.4], P=grid, adam=[right, planted], attention="linear")
    transition = copy_transition("linear", 16, 4, TokenProcess("markov", 0.4), grid)
    assert (record.attention, record.corpus) == ("linear", None)
    assert {key: record.theory[0][key] for key in ("rho", "type", "P1", "crossover")} == {
        "rho": 0.4, "type": transition["type"], "P1": transition["P1"], "crossover": transition["crossover"]}
    # the page's table (300-point grid): P1 27.06, crossover 191.3 at L = 16, rho = 0.4
    assert round(record.theory[0]["P1"], 2) == 27.06 and round(record.theory[0]["crossover"], 1) == 191.3
    points = {(point["rho"], point["kind"]): point for point in record.adam}
    assert sorted(points) == [(0.2, "P1"), (0.2, "crossover"), (0.4, "P1"), (0.4, "crossover")]
    assert points[0.4, "P1"]["passes"] and points[0.4, "P1"]["status"] == "within"
    assert points[0.4, "P1"]["predicted"] == 100.0 and points[0.4, "crossover"]["bracket"] == right["measured"]["crossover"]["bracket"]
    # the planted P1 (three times the measured one) fails the validation's own verdict
    assert points[0.2, "P1"]["status"] == "outside" and not points[0.2, "P1"]["passes"]
    assert points[0.2, "crossover"]["status"] == "within" and not points[0.2, "crossover"]["passes"]


@pytest.mark.parametrize("case", ["softmax record in a linear sweep", "wrong L", "no verdict to give"])
def test_the_rho_sweep_refuses_an_adam_record_of_another_panel_in_one_line(tmp_path, capsys, case):
    from emergence import api

    from test_copy_task_verdict import _jump_at, _sweep, _theory

    softmax = {"attention": "softmax", "L": 16, "V": 4, "measured": _sweep(_jump_at(957.0)), "settings": {"tokens": "iid"},
               "predicted": _theory() | {"transition_type": "first order"}}
    record, options, expected = {
        "softmax record in a linear sweep": (softmax, ["--attention", "linear", "--L", "16"],
                                             "a record of softmax attention at L = 16, V = 4; this sweep has linear at L = 16"),
        "wrong L": (_linear_adam_record(8, 100.0), ["--attention", "softmax", "linear", "--L", "16", "32"],
                    "this sweep has softmax at L = 16, softmax at L = 32, linear at L = 16, linear at L = 32"),
        "no verdict to give": (softmax | {"measured": {}}, ["--L", "16"],
                               "adam.json: a validate copy-head record without a measurement and prediction to judge")}[case]
    path = tmp_path / "adam.json"
    path.write_text(json.dumps(record, default=float))
    assert expected in _refusal(capsys, ["rho-sweep", "--V", "4", *options, "--adam", str(path)])
    if case == "wrong L":
        with pytest.raises(EmergenceError, match="linear attention at L = 16, V = 4"):
            api.rho_sweep(16, 4, adam=[record], attention="linear")


def test_the_rho_sweep_figure_draws_softmax_and_linear_panels(tmp_path):
    from emergence.demo.figures import draw_stored

    softmax = {"attention": "softmax", "L": 16, "V": 4, "theory": [{"rho": 0.0, "P_star": 292.3, "spinodals": [279.8, 319.0]}],
               "adam": [{"tokens": "markov:rho=0", "rho": 0.0, "kind": "P_star", "bracket": [249, 292], "passes": True}],
               "corpus": None}
    linear = {"attention": "linear", "L": 32, "V": 4,
              "theory": [{"rho": 0.0, "P1": 25.4, "crossover": 489.4}, {"rho": 0.4, "P1": 26.6, "crossover": 505.5}],
              "adam": [{"tokens": "markov:rho=0.4", "rho": 0.4, "kind": "P1", "bracket": [19, 27], "passes": False},
                       {"tokens": "markov:rho=0.4", "rho": 0.4, "kind": "crossover", "bracket": [383, 542], "passes": False}],
              "corpus": {"tokens": "corpus:/x/text.txt", "rho_eff": -0.04, "P1": 20.0, "crossover": 400.0,
                         "token_statistics": {"file": "/x/text.txt"}}}
    figure = draw_stored("rho_sweep", [softmax, linear], tmp_path / "panels.png")
    assert figure.stat().st_size > 0
    from emergence.records import RhoSweep
    from emergence.report.figures import rho_sweep_figure

    drawn = rho_sweep_figure([RhoSweep.from_dict(softmax), RhoSweep.from_dict(linear)])
    titles = [axis.get_title(loc="left") for axis in drawn.axes]
    assert titles == ["copy head, softmax attention, $L = 16$, $V = 4$", "copy head, linear attention, $L = 32$, $V = 4$"]
    labels = drawn.axes[1].get_legend_handles_labels()[1]
    assert {"theory copy crossover", "theory $P_1$ (second order)", "verdict fails",
            "theory, text.txt ($P_1$, crossover)"} <= set(labels)


@pytest.mark.slow
def test_the_rho_sweep_places_the_corpus_and_draws_the_registered_figure(tmp_path, capsys):
    from emergence.cli import main
    from emergence.demo.figures import FIGURE_KINDS, draw_stored
    from emergence.numerics.copy_head.rho_sweep import effective_persistence

    text = markov_text(tmp_path / "markov.txt", 0.6, 3, 20_000)
    from test_copy_task_verdict import _jump_at, _sweep, _theory

    adam = tmp_path / "adam.json"
    measured = _sweep(_jump_at(957.0))  # the softmax verdict's stand-in: a jump at 957 where the theory predicts it
    adam.write_text(json.dumps({"attention": "softmax", "L": 6, "V": 3, "settings": {"tokens": f"corpus:{text}"},
                                "measured": measured, "predicted": _theory() | {"transition_type": "first order"}},
                               default=float))
    out = tmp_path / "sweep.json"
    assert main(["rho-sweep", "--L", "6", "--V", "3", "--rho", "0.6", "--points", "8", "--P-min", "10", "--P-max", "1000",
                 "--tokens", f"corpus:{text}", "--adam", str(adam), "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    assert [entry["rho"] for entry in record["theory"]] == [0.6]
    config = record["provenance"]["config"]
    assert config["adam"] == [str(adam)] and config["json"] == str(out) and config["plot"] is None
    joints = TokenProcess.parse(f"corpus:{text}").joints(6, 3)
    assert record["corpus"]["rho_eff"] == effective_persistence(joints)
    assert abs(record["corpus"]["rho_eff"] - 0.6) < 0.03  # the chain's own rho, to its estimation error
    assert record["adam"][0]["bracket"] == measured["P_star"]["bracket"] and record["adam"][0]["passes"]
    assert record["adam"][0]["rho"] == record["corpus"]["rho_eff"]
    assert FIGURE_KINDS["rho_sweep"] == "RhoSweep"
    assert draw_stored("rho_sweep", record, tmp_path / "sweep.png").stat().st_size > 0
    capsys.readouterr()
    assert _refusal(capsys, ["rho-sweep", "--L", "6", "--V", "4", "--adam", str(adam)]).endswith("at V = 4")


def test_a_sweep_point_on_a_corpus_is_keyed_on_the_files_content(tmp_path):
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.experiment import point_config

    text = markov_text(tmp_path / "markov.txt", 0.4, 3, 2_000)
    convention = CopyTaskConvention.parse("", attention="softmax")
    before = point_config("softmax", "adam", 8, 3, 100, 2, convention, tokens=f"corpus:{text}")
    markov_text(text, 0.4, 3, 2_000, seed=1)
    after = point_config("softmax", "adam", 8, 3, 100, 2, convention, tokens=f"corpus:{text}")
    assert before["tokens"] == after["tokens"] and before["tokens_sha256"] != after["tokens_sha256"]
