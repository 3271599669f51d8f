"""Step 5: the softmax pushforward against Monte Carlo, the gauge by brute force, the reduced action."""

import warnings

import mpmath
import numpy as np
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from emergence.numerics.kernels.copy_head_scales import copy_head_softmax_scales
from emergence.numerics.kernels.copy_head_softmax import (
    softmax_action, softmax_action_M, softmax_action_derivative, softmax_action_second_derivative,
)
from emergence.theory.copy_head.population import population_action
from emergence.theory.copy_head.softmax import gap, gauge_fixed_copy_cost, logit_gap, others_square_sum, s, t, variance_rate
from emergence.theory.copy_head.symbols import L as L_symbol, P as P_symbol, V as V_symbol, aG, beta, lam, m, n, q, r, sigma2
from test_copy_head_marginal import shift_matrix


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31), weight=st.floats(0.05, 0.95), variance=st.floats(0.05, 2.0))
def test_pushforward_equals_monte_carlo_softmax_of_gaussian_logits(seed, weight, variance):
    """Rows with the derived gap g(a, t) over L - 1 Gaussian logits of variance t put weight a on the copy entry."""
    rng = np.random.default_rng(seed)
    L, rows = 20000, 64
    g = float(logit_gap().subs({aG: weight, L_symbol: L, t: variance}))
    others = rng.normal(0.0, np.sqrt(variance), size=(rows, L - 1))
    logits = np.concatenate([np.full((rows, 1), g), others], axis=1)
    logits -= logits.max(axis=1, keepdims=True)
    A = np.exp(logits)
    A /= A.sum(axis=1, keepdims=True)
    # Finite-L relative fluctuation of sum_j e^{G_j}: sqrt((e^t - 1)/(L - 1)); tolerance 6 of them.
    tolerance = 6 * np.sqrt((np.exp(variance) - 1) / (L - 1) / rows) + 1e-3 * np.sqrt(variance / L)
    assert abs(A[:, 0].mean() - weight) <= tolerance * 4 * weight
    squares = float(others_square_sum().subs({aG: weight, L_symbol: L, t: variance}))
    assert abs((A[:, 1:] ** 2).sum(axis=1).mean() / squares - 1) <= 0.05 + 10 * np.sqrt((np.exp(4 * variance) - 1) / L)


@settings(max_examples=10, deadline=None)
@given(L=st.integers(3, 12), V=st.integers(2, 8), g=st.floats(-4, 4), architecture=st.sampled_from(["T", "M"]))
def test_gauge_fixed_cost_is_the_minimum_over_all_row_constants(L, V, g, architecture):
    kappa = -1.0 / (V + L) if architecture == "T" else 0.0
    K = np.eye(L) + kappa * np.ones((L, L))
    S = shift_matrix(L, "cyclic")

    def cost(rho):
        G = g * S + np.outer(rho, np.ones(L))
        return 0.5 * np.trace(G.T @ K @ G @ K)

    best = optimize.minimize(cost, np.zeros(L), method="BFGS", options={"gtol": 1e-12})
    derived = float(gauge_fixed_copy_cost(architecture).subs({gap: g, L_symbol: L, sigma2: 1}))
    assert abs(best.fun - derived) <= 1e-7 * max(1.0, derived)


@settings(max_examples=8, deadline=None)
@given(ratio=st.floats(1.05, 4.0))
def test_variance_rate_equals_the_chi_square_tail(ratio):
    """-ln P(chi2_n / n >= t/s) / n -> I(t) with a ln(n)/n correction (n = 2e5, mpmath tail)."""
    dof = 200000
    probability = mpmath.gammainc(dof / 2, ratio * dof / 2, mpmath.inf, regularized=True)
    tail = float(-mpmath.log(probability) / dof)
    rate = float(variance_rate().subs({t: ratio, s: 1}))
    assert abs(tail - rate) <= 2 * np.log(dof) / dof


@settings(max_examples=10, deadline=None)
@given(L=st.integers(4, 64), V=st.integers(2, 32), weight=st.floats(0.01, 0.99), P=st.floats(10, 1e5))
def test_reduced_action_equals_the_explicit_softmax_pattern(L, V, weight, P):
    """Prior from the gauge-fixed logits, data term from q, m, r, n of the explicit matrix A."""
    sG, lam_value, beta_value = copy_head_softmax_scales(L, V, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0)
    g = np.log(weight / (1 - weight)) + np.log(L - 1)
    G = g * shift_matrix(L, "cyclic")
    A = np.exp(G) / np.exp(G).sum(axis=1, keepdims=True)
    assert np.allclose(np.diag(A[1:, :-1]), weight)
    S = shift_matrix(L, "cyclic")
    ones = np.ones(L)
    values = {q: np.sum(A * A), m: np.trace(A.T @ S), r: (A @ ones) @ (A @ ones), n: (A @ ones) @ (S @ ones),
              L_symbol: L, V_symbol: V, P_symbol: P, beta: beta_value, lam: lam_value}
    expected = (L - 1) * g**2 / (2 * sG) + float(population_action("cyclic", "raw").subs(values))
    value = softmax_action(weight, P, L, V, sG, lam_value, beta_value)
    assert abs(value - expected) <= 1e-9 * max(1.0, abs(expected))


@settings(max_examples=10, deadline=None)
@given(L=st.integers(8, 2048), V=st.integers(2, 64), weight=st.floats(0.01, 0.99), P=st.floats(10, 1e5),
       variance=st.floats(0.05, 3.0))
def test_derivatives_equal_torch_autograd(L, V, weight, P, variance):
    sG, lam_value, beta_value = copy_head_softmax_scales(L, V, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0)
    x = torch.tensor(weight, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        action = softmax_action(x, P, L, V, sG, lam_value, beta_value, xp=torch)
        (first,) = torch.autograd.grad(action, x, create_graph=True)
        (second,) = torch.autograd.grad(first, x)
        y = torch.tensor([weight, variance], dtype=torch.float64, requires_grad=True)
        action_M, *_ = softmax_action_M(y[0], y[1], P, L, V, 1.0, lam_value, beta_value, xp=torch)
        gradient_M = torch.autograd.grad(action_M, y)[0].numpy()
    assert np.isclose(softmax_action_derivative(weight, P, L, V, sG, lam_value, beta_value), first.item(), rtol=1e-8,
                      atol=1e-8 * abs(first.item()) + 1e-10)
    assert np.isclose(softmax_action_second_derivative(weight, P, L, V, sG, lam_value, beta_value), second.item(),
                      rtol=1e-7)
    _, dS_da, dS_dt = softmax_action_M(weight, variance, P, L, V, 1.0, lam_value, beta_value)
    np.testing.assert_allclose([dS_da, dS_dt], gradient_M, rtol=1e-8, atol=1e-8 * np.abs(gradient_M).max())


def test_gap_vanishes_at_uniform_weight():
    assert sp.simplify(sp.expand_log(logit_gap().subs({t: 0, aG: 1 / L_symbol}), force=True)) == 0
