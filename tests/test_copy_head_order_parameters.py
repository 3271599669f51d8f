"""Step 3: the architecture-T prior on the token-independent family, by brute force."""

import numpy as np
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from emergence.theory.copy_head.order_parameters import (
    effective_linear_scales, linear_attention_prior_cost, linear_prior_check, query_key_logit_covariance,
)
from emergence.theory.copy_head.patterns import attention_invariants
from emergence.theory.copy_head.order_parameters import linear_pattern
from emergence.theory.copy_head.symbols import L as L_symbol, V as V_symbol, c1, cG, sigma2
from test_copy_head_marginal import one_hot_sequences, shift_matrix


def logits(W, X):
    """G = Z W Z^T with Z = [X, I_L] for one sequence X (L x V)."""
    Z = np.concatenate([X, np.eye(X.shape[0])], axis=1)
    return Z @ W @ Z.T


def family_generators(L, V):
    """Unit-norm basis of the token-independent W_QK family (as (V+L) x (V+L) matrices)."""
    generators = []
    block = np.zeros((V + L, V + L))
    block[:V, :V] = 1.0 / V
    generators.append(block)
    for k in range(L):
        block = np.zeros((V + L, V + L))
        block[:V, V + k] = 1.0 / np.sqrt(V)
        generators.append(block)
        block = np.zeros((V + L, V + L))
        block[V + k, :V] = 1.0 / np.sqrt(V)
        generators.append(block)
    for i in range(L):
        for j in range(L):
            block = np.zeros((V + L, V + L))
            block[V + i, V + j] = 1.0
            generators.append(block)
    return generators


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), L=st.integers(2, 5), V=st.integers(2, 5))
def test_family_logits_do_not_depend_on_tokens_and_have_the_derived_covariance(seed, L, V):
    rng = np.random.default_rng(seed)
    X1, X2 = one_hot_sequences(rng, 2, L, V)
    images = []
    for generator in family_generators(L, V):
        G1, G2 = logits(generator, X1), logits(generator, X2)
        np.testing.assert_allclose(G1, G2, atol=1e-12)
        images.append(G1.reshape(-1))
    images = np.array(images)
    covariance = images.T @ images  # vec(G) covariance per sigma^2 (row-major vec)
    K = np.eye(L) + np.ones((L, L)) / V
    np.testing.assert_allclose(covariance, np.kron(K, K), atol=1e-12)
    kappa = float(query_key_logit_covariance()["kappa"].subs({L_symbol: L, V_symbol: V}))
    np.testing.assert_allclose(np.linalg.inv(K), np.eye(L) + kappa * np.ones((L, L)), atol=1e-12)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31), L=st.integers(3, 5), V=st.integers(2, 4),
       uniform=st.floats(-2, 2), copy=st.floats(-2, 2), shift=st.sampled_from(["cyclic", "open"]))
@example(seed=1, L=3, V=4, uniform=0.0, copy=1.0, shift="cyclic")  # 12 sequences did not span the constraints
def test_prior_cost_is_the_minimum_norm_over_all_token_independent_weights(seed, L, V, uniform, copy, shift):
    """Brute force: min ||W_QK||^2 / 2 subject to Z W Z^T = L A for enough random token sequences
    that the constraints have full rank (fewer constraints admit a smaller norm)."""
    rng = np.random.default_rng(seed)
    target = L * (uniform * np.ones((L, L)) / L + copy * shift_matrix(L, shift))
    rows, right = [], []
    for X in one_hot_sequences(rng, 100, L, V):
        Z = np.concatenate([X, np.eye(L)], axis=1)
        rows.append(np.kron(Z, Z))  # vec(Z W Z^T) = (Z kron Z) vec(W), row-major
        right.append(target.reshape(-1))
    assert np.linalg.matrix_rank(np.concatenate(rows)) == np.linalg.matrix_rank(np.concatenate(rows[:50]))
    solution, *_ = np.linalg.lstsq(np.concatenate(rows), np.concatenate(right), rcond=None)
    assert np.allclose(np.concatenate(rows) @ solution, np.concatenate(right), atol=1e-8)
    brute = 0.5 * solution @ solution
    derived = linear_attention_prior_cost("T", 1, shift).subs(
        {c1: uniform, cG: copy, L_symbol: L, V_symbol: V, sigma2: 1})
    assert abs(brute - float(derived)) <= 1e-8 * max(1.0, brute)


@settings(max_examples=15, deadline=None)
@given(L=st.integers(2, 9), uniform=st.floats(-3, 3), copy=st.floats(-3, 3), shift=st.sampled_from(["cyclic", "open"]))
def test_invariants_of_the_symmetric_family(L, uniform, copy, shift):
    S = shift_matrix(L, shift)
    A = uniform * np.ones((L, L)) / L + copy * S
    ones = np.ones(L)
    expected = {"q": np.sum(A * A), "m": np.trace(A.T @ S), "r": (A @ ones) @ (A @ ones), "n": (A @ ones) @ (S @ ones)}
    for name, expression in attention_invariants(linear_pattern(), L_symbol, shift).items():
        value = float(expression.subs({c1: uniform, cG: copy, L_symbol: L}))
        assert abs(value - expected[name]) <= 1e-10 * max(1.0, abs(expected[name])), name


def test_effective_scales_are_diagonal_in_the_orthogonal_coordinates():
    for architecture in ("T", "M"):
        for exponent in (0, 1):
            assert effective_linear_scales(architecture, exponent)["coupling"] == 0
            assert linear_prior_check(architecture, exponent) == 0
    scales = effective_linear_scales("T", 1)
    assert sp.simplify(scales["s1"] - sigma2 * (1 / V_symbol + 1 / L_symbol) ** 2) == 0
    assert sp.simplify(scales["sG"] - sigma2 / L_symbol**2) == 0


def _operator_matrix(expression, L, V):
    """The derived operator on row-major vec(G): J_left -> J kron I, J_right -> I kron J."""
    ones = np.ones((L, L))
    polynomial = sp.Poly(sp.expand(expression), sp.Symbol("J_left", positive=True), sp.Symbol("J_right", positive=True))
    matrix = np.zeros((L * L, L * L))
    for (left_power, right_power), coefficient in polynomial.terms():
        left = np.linalg.matrix_power(ones, left_power)
        right = np.linalg.matrix_power(ones, right_power)
        matrix += float(coefficient.subs({L_symbol: L, V_symbol: V})) * np.kron(left, right)
    return matrix


@settings(max_examples=6, deadline=None)
@given(L=st.integers(2, 5), V=st.integers(2, 5))
def test_derived_covariance_operator_and_precision_match_the_generators(L, V):
    """The SymPy operator (sum of the generator terms) and its precision against dense linear algebra.

    Fails when a generator term is changed (e.g. the token-token block /V**2 -> /V).
    """
    images = np.array([logits(generator, np.eye(V)[np.zeros(L, dtype=int)]).reshape(-1)
                       for generator in family_generators(L, V)])
    brute_covariance = images.T @ images
    derived = query_key_logit_covariance()
    np.testing.assert_allclose(_operator_matrix(derived["operator"], L, V), brute_covariance, atol=1e-12)
    np.testing.assert_allclose(_operator_matrix(derived["precision"], L, V), np.linalg.inv(brute_covariance), atol=1e-10)
    kappa = float(derived["kappa"].subs({L_symbol: L, V_symbol: V}))
    K = np.eye(L) + kappa * np.ones((L, L))
    np.testing.assert_allclose(np.kron(K, K), np.linalg.inv(brute_covariance), atol=1e-10)
