"""Model M with its bulk: orthogonal decomposition of A and the radial entropy terms."""

import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from emergence.theory.copy_head.bulk import PART_DIMENSIONS, R_bulk, R_row, dimension_check, linear_reduced_action_M, s_A
from emergence.theory.copy_head.population import population_action
from emergence.theory.copy_head.symbols import L as L_symbol, P, V, beta, c1, cG, lam, m, n, q, r
from test_copy_head_marginal import shift_matrix


def decompose(A):
    """(u, cG, R_row, R_bulk) of an L x L matrix by explicit projections."""
    L = A.shape[0]
    J = np.ones((L, L))
    copy = shift_matrix(L, "cyclic") - J / L
    u = np.sum(A * J / L)
    cG_value = np.sum(A * copy) / np.sum(copy * copy)
    rest = A - u * J / L - cG_value * copy
    row_part = np.outer(rest @ np.ones(L), np.ones(L)) / L
    bulk = rest - row_part
    assert abs(np.sum(bulk @ np.ones(L))) < 1e-9 and abs(np.sum(bulk * copy)) < 1e-9
    return u, cG_value, np.sum(row_part**2), np.sum(bulk**2)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), L=st.integers(3, 12))
def test_invariants_from_the_parts(seed, L):
    A = np.random.default_rng(seed).normal(size=(L, L))
    S = shift_matrix(L, "cyclic")
    ones = np.ones(L)
    u, copy, row, bulk = decompose(A)
    expected = {q: np.sum(A * A), m: np.trace(A.T @ S), r: (A @ ones) @ (A @ ones), n: (A @ ones) @ (S @ ones)}
    values = {c1: u - copy, cG: copy, R_row: row, R_bulk: bulk, L_symbol: L, s_A: 1.3, P: 50, V: 3, beta: 0.2,
              lam: 0.7}
    data = {key: float(value) for key, value in expected.items()}
    direct = float(population_action("cyclic", "raw").subs({**data, L_symbol: L, P: 50, V: 3, beta: 0.2, lam: 0.7}))
    full = linear_reduced_action_M("raw").subs(values)
    prior_and_entropy = (np.sum(A * A) / (2 * 1.3) - ((L - 1) / 2 - 1) * np.log(row)
                         - ((L * L - L - 1) / 2 - 1) * np.log(bulk))
    assert abs(float(full) - (direct + prior_and_entropy)) <= 1e-9 * max(1.0, abs(float(full)))


@settings(max_examples=10, deadline=None)
@given(L=st.integers(3, 40), radius=st.floats(0.01, 100.0), variance=st.floats(0.1, 10.0))
def test_radial_entropy_is_the_chi_square_density_of_the_squared_norm(L, radius, variance):
    """prior + entropy of a d-dimensional part = -ln Gamma(d/2, scale 2s) density of R, up to a constant."""
    for part, symbol in (("row", R_row), ("bulk", R_bulk)):
        d = int(PART_DIMENSIONS[part].subs(L_symbol, L))
        action = symbol / (2 * s_A) - (sp.Rational(d, 2) - 1) * sp.log(symbol)
        values = [float(action.subs({symbol: x, s_A: variance})) for x in (radius, 2 * radius)]
        logpdf = stats.gamma.logpdf([radius, 2 * radius], d / 2, scale=2 * variance)
        assert abs((values[1] - values[0]) + (logpdf[1] - logpdf[0])) <= 1e-9 * (1 + abs(values[0]))


def test_parts_span_all_matrices():
    assert dimension_check() == 0


@settings(max_examples=8, deadline=None)
@given(L=st.integers(4, 512), V=st.integers(2, 32), c1_value=st.floats(-1, 1), cG_value=st.floats(-0.3, 0.3),
       row=st.floats(1e-3, 5.0), bulk=st.floats(1e-2, 50.0), P_value=st.floats(10, 1e5))
def test_model_M_gradient_equals_torch_autograd(L, V, c1_value, cG_value, row, bulk, P_value):
    import warnings

    import torch

    from emergence.numerics.kernels.copy_head_linear import linear_action_M

    point = torch.tensor([c1_value, cG_value, row, bulk], dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        action, *_ = linear_action_M(point[0], point[1], point[2], point[3], P_value, L, V, 1.0 / L**2, 1.0, 1.0 / L,
                                     xp=torch)
        gradient = torch.autograd.grad(action, point)[0].numpy()
    _, *generated = linear_action_M(c1_value, cG_value, row, bulk, P_value, L, V, 1.0 / L**2, 1.0, 1.0 / L)
    np.testing.assert_allclose(generated, gradient, rtol=1e-8, atol=1e-8 * np.abs(gradient).max())
