"""Step 4: Landau coefficients and P1 against finite differences of the full reduced action."""

import warnings

import mpmath
import numpy as np
import torch
from scipy import optimize
from hypothesis import example, given, settings
from hypothesis import strategies as st

from emergence.numerics.kernels.copy_head_linear import (
    linear_action, linear_action_gradient, linear_action_hessian, linear_action_mp, linear_copy_mode_onset,
    linear_landau, linear_second_order_point,
)
from emergence.numerics.kernels.copy_head_scales import copy_head_scales
from emergence.theory.copy_head.landau import leading_second_order_point
from emergence.theory.copy_head.symbols import lam as lam_symbol, sigma2


def default_point(L, V, P_factor):
    s1, sG, lam, beta = copy_head_scales(L, V, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0)
    P1 = linear_second_order_point(L, V, s1, lam, beta)
    return float(P1 * P_factor), float(s1), float(sG), float(lam), float(beta)


def conditional_minimum_action(c1, P, L, V, s1, sG, lam, beta, ctx):
    """min over cG of S_lin(c1, cG) at 50 digits (Newton on dS/dcG by mpmath)."""
    def dS(cG):
        return ctx.diff(lambda y: linear_action_mp(c1, y, P, L, V, s1, sG, lam, beta, ctx=ctx), cG)
    root = ctx.findroot(dS, ctx.mpf(0))
    return linear_action_mp(c1, root, P, L, V, s1, sG, lam, beta, ctx=ctx)


def relaxed_direction_onset(L, V, s1, sG, lam, beta):
    """P_22: the root in P of H_22 = d^2 S / d cG^2 at the symmetric point (brentq on the generated Hessian).

    It lies just below the copy onset P_G, which is the curvature along S - J/L rather than along cG
    (L = 22, V = 14: P_22 = 1.421 P1, P_G = 1.526 P1).
    """
    def h22(P):
        return linear_action_hessian(0.0, 0.0, P, L, V, s1, sG, lam, beta)[2]

    upper = float(linear_second_order_point(L, V, s1, lam, beta))
    while h22(upper) > 0:  # P_22 / P1 grows like L / V (3.6e3 at L = 512, V = 2)
        upper *= 2
    return optimize.brentq(h22, 1e-9 * upper, upper, xtol=1e-12 * upper)


def landau_domain_point(L, V, P_factor):
    """A P where the Landau expansion about the symmetric point exists: P = P_factor min(P1, 0.4 P_22).

    S_eff(c1) relaxes cG about cG = 0, the conditional minimum only while H_22 > 0, i.e. below P_22.
    For L < 2V, P_22 falls within 2 P1 (L = 22, V = 14: 1.421 P1; L = 16, V = 16: 0.82 P1), so a draw
    of P up to 2 P1 left the expansion's domain. With P_factor <= 2 the point stays at or below 0.8 P_22.
    """
    P1, s1, sG, lam, beta = default_point(L, V, 1.0)
    return P_factor * min(P1, 0.4 * relaxed_direction_onset(L, V, s1, sG, lam, beta)), s1, sG, lam, beta


def finite_difference_landau(P, L, V, s1, sG, lam, beta):
    """(r, u) from S_eff(c1) = S0 + r c1^2 + u c1^4 + w c1^6 fitted exactly at c1 = 0, h, 2h, 3h (50 digits)."""
    ctx = mpmath.mp.clone()
    ctx.dps = 50
    h = ctx.mpf("1e-4")
    values = [conditional_minimum_action(j * h, P, L, V, s1, sG, lam, beta, ctx) for j in range(4)]
    matrix = ctx.matrix([[1, (j * h) ** 2, (j * h) ** 4, (j * h) ** 6] for j in range(4)])
    _, r_fd, u_fd, _ = ctx.lu_solve(matrix, ctx.matrix(values))
    return float(r_fd), float(u_fd)


@settings(max_examples=6, deadline=None)
@given(L=st.integers(16, 512), V=st.integers(2, 16), P_factor=st.floats(0.5, 2.0))
@example(L=22, V=14, P_factor=1.421875)  # CI's random draw before the domain was stated: P = 1.42 P1 > P_22
def test_landau_coefficients_equal_finite_differences_of_the_relaxed_action(L, V, P_factor):
    P, s1, sG, lam, beta = landau_domain_point(L, V, P_factor)
    r_fd, u_fd = finite_difference_landau(P, L, V, s1, sG, lam, beta)
    r, u = linear_landau(P, L, V, s1, sG, lam, beta)
    assert abs(r_fd - r) <= 1e-7 * max(1.0, abs(r))
    assert abs(u_fd - u) <= 1e-4 * max(1.0, abs(u))


def test_landau_expansion_fails_above_the_relaxed_direction_onset():
    """Above P_22 the symmetric point is a maximum along cG; the relaxed r no longer describes the
    conditional minimum. CI's random draw L = 22, V = 14, P = 1.4219 P1 sat just above P_22 = 1.4207 P1:
    there the minimum over cG jumps to 6.5e-3 at c1 = 1e-4 and the fitted r is -9.6e4 against 2.5e4."""
    P1, s1, sG, lam, beta = default_point(22, 14, 1.0)
    P = 1.421875 * P1
    assert P > relaxed_direction_onset(22, 14, s1, sG, lam, beta)
    r_fd, _ = finite_difference_landau(P, 22, 14, s1, sG, lam, beta)
    r, _ = linear_landau(P, 22, 14, s1, sG, lam, beta)
    assert abs(r_fd - r) > 0.1 * abs(r)


@settings(max_examples=10, deadline=None)
@given(L=st.integers(8, 2048), V=st.integers(2, 64), P_factor=st.floats(0.2, 5.0),
       c1=st.floats(-1, 1), cG=st.floats(-0.3, 0.3))
@example(L=8, V=2, P_factor=1.0, c1=5e-324, cG=0.0)  # found with torch 2.3.1: gradient 1.5e-323 against 0
def test_gradient_and_hessian_kernels_equal_torch_autograd(L, V, P_factor, c1, cG):
    P, s1, sG, lam, beta = default_point(L, V, P_factor)
    x = torch.tensor([c1, cG], dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        def action(z):
            return linear_action(z[0], z[1], P, L, V, s1, sG, lam, beta, xp=torch)
        gradient = torch.autograd.grad(action(x), x)[0].numpy()
        hessian = torch.autograd.functional.hessian(action, x).numpy()
    generated_gradient = np.array(linear_action_gradient(c1, cG, P, L, V, s1, sG, lam, beta))
    h11, h12, h22 = linear_action_hessian(c1, cG, P, L, V, s1, sG, lam, beta)
    # Both sides round differently; below the smallest normal float (a subnormal c drawn by Hypothesis
    # gives a gradient of 1e-323 against an exact 0) no relative accuracy exists, hence the floor `tiny`.
    tiny = np.finfo(np.float64).tiny
    np.testing.assert_allclose(generated_gradient, gradient, rtol=1e-8, atol=1e-8 * np.abs(gradient).max() + tiny)
    np.testing.assert_allclose(np.array([[h11, h12], [h12, h22]]), hessian, rtol=1e-8,
                               atol=1e-8 * np.abs(hessian).max() + tiny)


@settings(max_examples=15, deadline=None)
@given(V=st.integers(2, 64), ratio=st.floats(1.0, 64.0), a=st.floats(0, 2), c=st.floats(0, 2),
       d=st.floats(0, 2), sigma=st.floats(0.2, 5), lam_scale=st.floats(0.2, 5))
def test_P1_is_a_second_order_point(V, ratio, a, c, d, sigma, lam_scale):
    """The relaxed r changes sign once with u > 0 there; the closed-form P1 (H_11 = 0) is its L >> V limit.

    Measured over random conventions: |P1 / root(r) - 1| <= 7e-3 for L >= 2V, 5e-4 for L >= 4V, but up to 1.9
    for L ~ V, where the copy coupling H_1G matters.
    """
    L = max(int(V * ratio), 2)
    s1, sG, lam, beta = copy_head_scales(L, V, sigma, a, lam_scale, c, 0.0, 1.0, d, 0.0)
    P1 = float(linear_second_order_point(L, V, s1, lam, beta))
    h11, _, _ = linear_action_hessian(0.0, 0.0, P1, L, V, s1, sG, lam, beta)
    assert abs(h11) <= 1e-8 / s1
    r_of = lambda P: linear_landau(P, L, V, s1, sG, lam, beta)[0]
    low, high = P1, P1
    while r_of(low) <= 0:
        low /= 1.5
    while r_of(high) >= 0:
        high *= 1.5
    root = optimize.brentq(r_of, low, high, rtol=1e-13)
    assert linear_landau(root, L, V, s1, sG, lam, beta)[1] > 0
    if L >= 4 * V:
        assert abs(P1 / root - 1) <= 1e-3


def test_copy_mode_onset_zeroes_the_copy_curvature():
    P, s1, sG, lam, beta = default_point(256, 16, 1.0)
    PG = linear_copy_mode_onset(256, 16, s1, sG, lam, beta)
    h11, h12, h22 = linear_action_hessian(0.0, 0.0, PG, 256, 16, s1, sG, lam, beta)
    assert abs(h11 - 2 * h12 + h22) <= 1e-8 * (255 / sG)


def test_leading_P1_matches_the_closed_form_at_large_L_and_V():
    """P1 / V^2 -> (1 + sqrt(1 + 4/(lam sigma^2)))/2, checked at L = 1e9, V = 1e3 (50 digits)."""
    coefficient = leading_second_order_point()["coefficient_of_V2"]
    for sigma, lam in ((1.0, 1.0), (0.5, 2.0)):
        expected = float(coefficient.subs({sigma2: sigma, lam_symbol: lam}))
        s1, sG, lam_value, beta = copy_head_scales(1e9, 1e3, sigma, 0.0, lam, 0.0, 0.0, 1.0, 1.0, 0.0)
        P1 = linear_second_order_point(1e9, 1e3, s1, lam_value, beta)
        assert abs(P1 / 1e6 - expected) <= 2e-3 * expected
    assert abs(float(coefficient.subs({sigma2: 1, lam_symbol: 1})) - (1 + 5**0.5) / 2) < 1e-15
