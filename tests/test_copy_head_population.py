"""Step 2: the one-hot population lemma (exact enumeration) and the population action (sampling)."""

import itertools

import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.theory.copy_head.population import population_action, population_moments, quadratic_form_average
from emergence.theory.copy_head.symbols import L as L_symbol, P as P_symbol, V as V_symbol, beta, lam, m, n, q, r
from test_copy_head_marginal import one_hot_sequences, shift_matrix


def dense(token_matrix, V):
    """alpha I + gamma J as a V x V array."""
    alpha, gamma = token_matrix.identity_and_ones(V_symbol)
    values = {V_symbol: V}
    return float(alpha.subs(values)) * np.eye(V) + float(gamma.subs(values)) * np.ones((V, V))


def all_sequences(L, V):
    eye = np.eye(V)
    return np.array([eye[list(tokens)] for tokens in itertools.product(range(V), repeat=L)])


def invariants(A, S):
    ones = np.ones(A.shape[0])
    return {q: np.sum(A * A), m: np.trace(A.T @ S), r: (A @ ones) @ (A @ ones), n: (A @ ones) @ (S @ ones)}


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), L=st.integers(1, 4), V=st.integers(2, 4))
def test_lemma_equals_exact_enumeration(seed, L, V):
    M = np.random.default_rng(seed).normal(size=(L, L))
    X = all_sequences(L, V)
    exact = np.einsum("sla,lk,skb->ab", X, M, X) / len(X)
    predicted = dense(quadratic_form_average(sp.Float(np.trace(M)), sp.Float(M.sum())), V)
    np.testing.assert_allclose(predicted, exact, rtol=1e-10, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), L=st.integers(2, 4), V=st.integers(2, 4),
       shift=st.sampled_from(["cyclic", "open"]), targets=st.sampled_from(["raw", "centred"]))
def test_population_moments_equal_exact_enumeration(seed, L, V, shift, targets):
    A = np.random.default_rng(seed).normal(size=(L, L))
    S = shift_matrix(L, shift)
    X = all_sequences(L, V)
    Y = np.einsum("lk,skb->slb", S, X)
    if targets == "centred":
        Y = Y - np.einsum("lk,kb->lb", S, np.ones((L, V)) / V)[None]
    AX = np.einsum("lk,skb->slb", A, X)
    exact = {"C": np.einsum("sla,slb->ab", AX, AX) / len(X), "B": np.einsum("sla,slb->ab", AX, Y) / len(X),
             "D": np.einsum("sla,slb->ab", Y, Y) / len(X)}
    values = {**{key: sp.Float(value) for key, value in invariants(A, S).items()}, L_symbol: L}
    for name, moment in population_moments(shift, targets).items():
        substituted = type(moment)(moment.perp.subs(values), moment.parallel.subs(values))
        np.testing.assert_allclose(dense(substituted, V), exact[name], rtol=1e-10, atol=1e-12, err_msg=name)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31), targets=st.sampled_from(["raw", "centred"]))
def test_population_action_matches_sampled_data_at_large_P(seed, targets):
    """The exact marginal with sampled tokens converges to the population action as P grows.

    The sample Gram matrices fluctuate by O(1/sqrt(P)) around P times the expectation; the
    action's fluctuation is measured over independent data sets and the population value must
    lie within 5 standard errors of the sampled mean plus V^2: the replacement of the sample
    Gram matrices by their expectations (Jensen on the log-det and the fit term) leaves an
    O(V^2) bias that does not grow with P, while the action grows like P (here ~1500).
    """
    rng = np.random.default_rng(seed)
    L, V, P, beta_value, lam_value = 6, 3, 1500, 0.4, 0.7
    A = rng.normal(size=(L, L)) / L
    S = shift_matrix(L, "cyclic")
    samples = []
    for _ in range(8):
        X = one_hot_sequences(rng, P, L, V)
        Phi = np.einsum("lk,skb->slb", A, X).reshape(P * L, V)
        Y = np.einsum("lk,skb->slb", S, X)
        if targets == "centred":
            Y = Y - 1.0 / V
        Y = Y.reshape(P * L, V)
        samples.append(sampled_action(Phi, Y, beta_value, lam_value))
    values = {**{key: sp.Float(value) for key, value in invariants(A, S).items()},
              L_symbol: L, V_symbol: V, P_symbol: P, beta: beta_value, lam: lam_value}
    predicted = float(population_action("cyclic", targets).subs(values))
    mean, error = np.mean(samples), np.std(samples, ddof=1) / np.sqrt(len(samples))
    assert abs(mean - predicted) <= 5 * error + V**2, (mean, predicted, error)


def sampled_action(Phi, Y, beta_value, lam_value):
    """The V x V action evaluated with numpy on the sampled Gram matrices (no population average)."""
    V = Phi.shape[1]
    C, B, D = Phi.T @ Phi, Phi.T @ Y, Y.T @ Y
    eps = beta_value * lam_value
    inner = np.eye(V) + eps * C
    _, logdet = np.linalg.slogdet(inner)
    return 0.5 * beta_value * np.trace(D) - 0.5 * beta_value * eps * np.trace(B.T @ np.linalg.solve(inner, B)) \
        + 0.5 * V * logdet
