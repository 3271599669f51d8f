"""The copy-head data term on correlated token streams: brute force, Monte Carlo, the i.i.d. limit, and mutations.

Tolerances: exact enumeration and the symbolic action agree with the lag-joint formula to 1e-12 relative
(a few hundred rounding units of float64 on sums of ~10 terms); Monte Carlo within 5 standard errors per entry.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy as sp
import torch

from emergence.numerics.copy_head.phase_diagram import phase_diagram
from emergence.numerics.copy_head.reduced_action import reduced_action
from emergence.numerics.copy_head.token_process import (
    TokenProcess, cyclic_shift, data_moments, data_term, quadratic_moment, readout_action, token_process_action,
)
from emergence.base.errors import EmergenceError
from emergence.theory.copy_head import token_process as theory
from emergence.theory.copy_head.symbols import L, P, V, aG, beta, c1, cG, lam, s1, sG
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.token_streams import sample_tokens

PROCESSES = ("markov:rho=0.2", "markov:rho=0.6", "zipf:alpha=1")


def sequence_probabilities(process: TokenProcess, L_: int, V_: int):
    """Every sequence (V^L, L) and its probability under ``process`` (the chain or the unigram, by definition)."""
    sequences = np.array(list(itertools.product(range(V_), repeat=L_)))
    pi = process.unigram(V_)
    if process.kind == "markov":
        rho = process.parameter
        transition = rho * np.eye(V_) + (1 - rho) / V_
        probability = pi[sequences[:, 0]] * np.prod(transition[sequences[:, :-1], sequences[:, 1:]], axis=1)
    else:
        probability = np.prod(pi[sequences], axis=1)
    return sequences, probability


def enumerated_moments(A, process: TokenProcess, L_: int, V_: int) -> dict[str, np.ndarray]:
    """E[X^T A^T A X], E[X^T A^T S X], E[X^T S^T S X] by summing over every sequence."""
    sequences, probability = sequence_probabilities(process, L_, V_)
    X = np.eye(V_)[sequences]
    S = cyclic_shift(L_)
    Phi, Y = np.einsum("ij,njv->niv", A, X), np.einsum("ij,njv->niv", S, X)
    weigh = lambda left, right: np.einsum("n,niu,niv->uv", probability, left, right)  # noqa: E731
    return {"C": weigh(Phi, Phi), "B": weigh(Phi, Y), "D": weigh(Y, Y)}


def random_attention(rng, L_: int) -> np.ndarray:
    """A random attention pattern: softmax rows of Gaussian logits."""
    logits = rng.normal(0.0, 1.5, (L_, L_))
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("text", PROCESSES)
def test_lag_joint_data_term_equals_exact_enumeration(text):
    process, rng = TokenProcess.parse(text), np.random.default_rng(7)
    joints = process.joints(4, 2)
    for _ in range(5):
        A = random_attention(rng, 4)
        derived, exact = data_moments(A, joints), enumerated_moments(A, process, 4, 2)
        for name in "CBD":
            np.testing.assert_allclose(derived[name], exact[name], rtol=1e-12, atol=1e-14)
        action = data_term(A, joints, 50.0, 0.25, 0.5)
        brute = readout_action(50 * exact["C"], 50 * exact["B"], 50 * exact["D"], 0.25, 0.5)
        np.testing.assert_allclose(action, brute, rtol=1e-12)


@pytest.mark.parametrize("text", PROCESSES)
def test_lag_joint_data_term_equals_monte_carlo_over_drawn_sequences(text):
    process, rng = TokenProcess.parse(text), np.random.default_rng(3)
    tokens = sample_tokens(text, 100_000, 4, 2, torch.Generator().manual_seed(11)).numpy()
    X = np.eye(2)[tokens]
    S = cyclic_shift(4)
    for _ in range(3):
        A = random_attention(rng, 4)
        Phi, Y = np.einsum("ij,njv->niv", A, X), np.einsum("ij,njv->niv", S, X)
        derived = data_moments(A, process.joints(4, 2))
        for name, (left, right) in {"C": (Phi, Phi), "B": (Phi, Y), "D": (Y, Y)}.items():
            samples = np.einsum("niu,niv->nuv", left, right)
            error = samples.std(axis=0) / np.sqrt(len(samples)) + 1e-12
            assert np.all(np.abs(samples.mean(axis=0) - derived[name]) < 5 * error), name


@pytest.mark.parametrize("text", PROCESSES)
def test_a_mutated_lag_coefficient_fails_the_enumeration(text):
    """J_k replaced by J_{k+1} (markov: rho^k -> rho^(k+1); zipf: J_0 = pi pi^T) is rejected by the same comparison."""
    process, rng = TokenProcess.parse(text), np.random.default_rng(7)
    joints = process.joints(5, 2)
    mutated = joints[1:] if process.kind == "markov" else np.concatenate([joints[1:2], joints[1:4]])
    A = random_attention(rng, 4)
    exact = enumerated_moments(A, process, 4, 2)
    assert np.abs(data_moments(A, mutated)["C"] - exact["C"]).max() > 1e-3


def test_quadratic_moment_of_iid_tokens_is_the_population_lemma():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(6, 6))
    moment = quadratic_moment(M, TokenProcess("iid").joints(6, 3))
    lemma = np.trace(M) * np.eye(3) / 3 + (M.sum() - np.trace(M)) * np.ones((3, 3)) / 9
    np.testing.assert_allclose(moment, lemma, rtol=1e-13, atol=1e-15)


@pytest.fixture(scope="module")
def symbolic_actions():
    linear = sp.lambdify((theory.c0, cG, c1, P, L, V, theory.rho, s1, sG, lam, beta), theory.persistence_linear_action())
    softmax = sp.lambdify((theory.a0, aG, P, L, V, theory.rho, sG, lam, beta), theory.persistence_softmax_action())
    return linear, softmax


@pytest.mark.parametrize("rho", [0.2, 0.6])
def test_symbolic_persistence_action_equals_the_lag_joint_data_term(symbolic_actions, rho):
    """The SymPy action (prior + data) on the family equals prior + the brute lag-joint data term of the same A."""
    linear, softmax = symbolic_actions
    rng = np.random.default_rng(int(rho * 10))
    L_, V_, Pv, s1v, sGv, lamv, betav = 7, 3, 40.0, 0.3, 0.05, 0.4, 0.2
    joints = TokenProcess("markov", rho).joints(L_, V_)
    S, J, identity = cyclic_shift(L_), np.ones((L_, L_)), np.eye(L_)
    for _ in range(4):
        c0v, cGv, c1v = rng.normal(0, 0.3, 3)
        u = c0v + cGv + c1v
        prior = u**2 / (2 * s1v) + ((L_ - 1) * (c0v**2 + cGv**2) - 2 * c0v * cGv) / (2 * sGv)
        brute = prior + data_term(c0v * identity + cGv * S + c1v * J / L_, joints, Pv, betav, lamv)
        np.testing.assert_allclose(linear(c0v, cGv, c1v, Pv, L_, V_, rho, s1v, sGv, lamv, betav), brute, rtol=1e-12)
        a0v, aGv = rng.uniform(0.02, 0.45, 2)
        rest = (1 - a0v - aGv) / (L_ - 2)
        gaps = np.log(a0v / rest), np.log(aGv / rest)
        prior = ((L_ - 1) * (gaps[0] ** 2 + gaps[1] ** 2) - 2 * gaps[0] * gaps[1]) / (2 * sGv)
        A = (a0v - rest) * identity + (aGv - rest) * S + rest * J
        brute = prior + data_term(A, joints, Pv, betav, lamv)
        np.testing.assert_allclose(softmax(a0v, aGv, Pv, L_, V_, rho, sGv, lamv, betav), brute, rtol=1e-12)


def test_family_priors_are_architecture_T_costs():
    assert theory.linear_family_prior_check() == 0
    assert sp.simplify(theory.family_logit_cost()
                       - ((L - 1) * (theory.g0**2 + theory.gG**2) - 2 * theory.g0 * theory.gG) / (2 * theory.sigma2)) == 0


def _transitions_agree(iid, other, relative):
    for name in ("P1", "P_star", "crossover", "crossover_literal", "spinodals"):
        a, b = iid.transitions[name], other.transitions[name]
        if name == "spinodals" and other.attention == "softmax" and a is not None:
            assert b is not None and np.allclose(a, b, rtol=1e-5), (a, b)  # fold by bisection (2-D) vs Brent (1-D)
            continue
        assert (a is None) == (b is None), name
        if a is not None and name != "spinodals":
            assert abs(a - b) <= relative * a, (name, a, b)


@pytest.mark.parametrize("attention", ["softmax", "linear"])
@pytest.mark.parametrize("text", ["markov:rho=0", "zipf:alpha=0"])
def test_rho_zero_and_alpha_zero_reproduce_the_iid_phase_diagram(attention, text):
    """Order parameters to 1e-9 and transitions to 1e-9 relative (the linear copy onset, a finite-difference slope
    maximum, to 1e-6)."""
    P = np.geomspace(10, 1e5, 60)
    iid = phase_diagram(reduced_action(attention, 16, 4), P)
    other = phase_diagram(token_process_action(attention, 16, 4, TokenProcess.parse(text)), P)
    np.testing.assert_allclose(other.cG, iid.cG, atol=1e-9)
    np.testing.assert_allclose(other.c1, iid.c1, atol=1e-9)
    np.testing.assert_allclose(other.action, iid.action, rtol=1e-11)
    _transitions_agree(iid, other, 1e-9 if attention == "softmax" else 1e-6)


def test_persistence_moves_the_softmax_jump_and_a_mutated_rho_is_seen():
    """At rho = 0.4 the softmax transition is still a jump, with a different landing from rho = 0 (guards a kernel
    that ignored rho)."""
    P = np.geomspace(100, 2000, 60)
    base = phase_diagram(token_process_action("softmax", 16, 4, TokenProcess("markov", 0.0)), P)
    moved = phase_diagram(token_process_action("softmax", 16, 4, TokenProcess("markov", 0.4)), P)
    assert moved.transitions["P_star"] is not None
    jump = np.searchsorted(P, moved.transitions["P_star"])
    a_moved = (moved.c1 + 16 * moved.cG) / 16
    a_base = (base.c1 + 16 * base.cG) / 16
    assert abs(a_moved[jump - 1] - a_base[jump - 1]) > 0.01


def test_markov_stream_has_its_lag_joints_and_iid_data_are_unchanged():
    tokens = sample_tokens("markov:rho=0.6", 50_000, 6, 3, torch.Generator().manual_seed(5))
    X = torch.nn.functional.one_hot(tokens, 3).double().numpy()
    joints = TokenProcess("markov", 0.6).joints(6, 3)
    for k in range(6):
        empirical = np.einsum("nu,nv->uv", X[:, 5], X[:, 5 - k]) / len(X)
        assert np.abs(empirical - joints[k]).max() < 0.01
    batch = copy_task_batch([4, 3], 5, 3, seeds=[1, 2])
    old = torch.cat([torch.randint(3, (4, 5), generator=torch.Generator().manual_seed(1)),
                     torch.randint(3, (3, 5), generator=torch.Generator().manual_seed(2))])
    assert torch.equal(batch.tokens, old)


@pytest.mark.parametrize("text", ["markov", "markov:rho=1", "markov:alpha=0.2", "zipf:alpha=-1", "gauss", "iid:x"])
def test_invalid_token_process_is_one_error(text):
    with pytest.raises(EmergenceError):
        TokenProcess.parse(text)


@pytest.mark.parametrize("command", [
    ["phase-diagram", "--attention", "softmax", "--L", "16", "--V", "4", "--tokens", "markov:rho=2"],
    ["validate", "copy-head", "--attention", "softmax", "--L", "16", "--V", "4", "--device", "cpu", "--tokens", "zipf"],
])
def test_a_bad_token_process_on_the_command_line_is_one_line_and_exit_2(capsys, command):
    from emergence.cli import main

    assert main(command) == 2
    captured = capsys.readouterr()
    error = captured.err.strip()
    assert error.startswith("emergence: error: ") and "\n" not in error and "token process" in error, captured.err
    assert "Traceback" not in captured.err + captured.out
