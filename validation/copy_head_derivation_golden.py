"""Headline numbers of the copy-head derivation (model T defaults, reference point L = 256, V = 16).

Closed forms come from the generated kernels; the softmax coexistence point is solved at 50
digits with the kernels' mpmath twins (:func:`softmax_coexistence`).
"""

from __future__ import annotations

import mpmath

from emergence.numerics.kernels.copy_head_linear import linear_copy_mode_onset, linear_landau, linear_second_order_point
from emergence.numerics.kernels.copy_head_scales import copy_head_scales, copy_head_softmax_scales
from emergence.numerics.kernels.copy_head_softmax import (
    softmax_action_derivative_mp, softmax_action_mp, softmax_action_second_derivative_mp,
)
from emergence.theory.copy_head.conventions import DEFAULT_CONVENTION
from emergence.validation.golden import HeadlineNumber

REFERENCE_L, REFERENCE_V = 256, 16
DEFAULT_KNOBS = tuple(getattr(DEFAULT_CONVENTION, name) for name in ("sigma_G2", "a", "sigma_W2", "c", "r", "beta0", "d", "e"))
"""The model-T default knobs (sigma_G2, a, sigma_W2, c, r, beta0, d, e); r = 1: lambda = 1/L."""


def _ell(L, ctx):
    return 1 - ctx.lambertw(-2 * ctx.e**2 / ctx.mpf(L), -1).real / 2


def softmax_coexistence(L: int, V: int, dps: int = 50, r: float = DEFAULT_CONVENTION.r) -> dict[str, mpmath.mpf]:
    """P* where the uniform and copy minima of the model-T softmax action have equal action.

    Defaults except the readout exponent ``r`` (lambda = L^-r; 0 or 1; default: the default model's).  Starts from the dominant
    balance of :mod:`emergence.theory.copy_head.asymptotics` (r = 0: a* = sqrt((ell - 1)/L);
    r = 1: :func:`~emergence.numerics.copy_head.scaling_certification.readout_landing`); fails (mpmath
    raises) when the two minima merge, i.e. for small L.  Returns ``P_star``, ``a_uniform``,
    ``a_copy`` and the ``balance`` estimate of P*.
    """
    ctx = mpmath.mp.clone()
    ctx.dps = dps
    knobs = DEFAULT_KNOBS[:4] + (r,) + DEFAULT_KNOBS[5:]
    sG, lam, _ = copy_head_softmax_scales(L, V, *knobs)
    beta = 1 / ctx.mpf(L)

    def minimum(start, P):
        first = lambda a: softmax_action_derivative_mp(a, P, L, V, float(sG), float(lam), beta, ctx=ctx)
        second = lambda a: softmax_action_second_derivative_mp(a, P, L, V, float(sG), float(lam), beta, ctx=ctx)
        return ctx.findroot(first, ctx.mpf(start), df=second, solver="newton")

    if r == 0:
        ell = _ell(L, ctx)
        copy_start = ctx.sqrt((ell - 1) / L)
        balance = L * V * ell**3 / ((V - 1) * (ell - 1))
    elif r == 1:
        from emergence.numerics.copy_head.scaling_certification import readout_landing

        landing = readout_landing(L, V, dps=dps)
        copy_start, balance = ctx.mpf(landing["a_star"]), ctx.mpf(landing["P_star"])
    else:
        raise ValueError(f"the dominant balance is derived for r = 0 and r = 1, got {r}")

    def gap(P):
        action = lambda a: softmax_action_mp(a, P, L, V, float(sG), float(lam), beta, ctx=ctx)
        return action(minimum(copy_start, P)) - action(minimum(1 / ctx.mpf(L), P))

    P_star = ctx.findroot(gap, balance)
    return {"P_star": P_star, "a_uniform": minimum(1 / ctx.mpf(L), P_star), "a_copy": minimum(copy_start, P_star),
            "balance": balance}


def _linear_reference() -> dict[str, float]:
    L, V = REFERENCE_L, REFERENCE_V
    s1, sG, lam, beta = copy_head_scales(L, V, *DEFAULT_KNOBS)
    P1 = linear_second_order_point(L, V, s1, lam, beta)
    _, u = linear_landau(P1, L, V, s1, sG, lam, beta)
    return {"P1": float(P1), "PG": float(linear_copy_mode_onset(L, V, s1, sG, lam, beta)),
            "s1_over_sG": float(s1 / sG), "u_at_P1": float(u)}


def headline_numbers() -> list[HeadlineNumber]:
    reference = f"L={REFERENCE_L}, V={REFERENCE_V}, model T defaults"
    return [
        HeadlineNumber("copy_head.linear.P1", f"second-order point P1 (closed form), {reference}",
                       lambda: _linear_reference()["P1"]),
        HeadlineNumber("copy_head.linear.PG", f"copy-mode onset P_G (closed form), {reference}",
                       lambda: _linear_reference()["PG"]),
        HeadlineNumber("copy_head.linear.s1_over_sG", f"prior variance ratio s1/sG = (1 + L/V)^2, {reference}",
                       lambda: _linear_reference()["s1_over_sG"]),
        HeadlineNumber("copy_head.linear.landau_u_at_P1", f"quartic Landau coefficient at P1, {reference}",
                       lambda: _linear_reference()["u_at_P1"]),
        HeadlineNumber("copy_head.softmax.P_star", f"first-order coexistence point P* (50 digits), {reference}",
                       lambda: float(softmax_coexistence(REFERENCE_L, REFERENCE_V)["P_star"])),
        HeadlineNumber("copy_head.softmax.a_copy_at_P_star", f"copy weight of the copy minimum at P*, {reference}",
                       lambda: float(softmax_coexistence(REFERENCE_L, REFERENCE_V)["a_copy"])),
        HeadlineNumber("copy_head.softmax.P_star_over_balance_L1e6",
                       "P* / dominant-balance estimate at L = 1e6, V = 16 (-> 1 as L grows)",
                       lambda: float(softmax_coexistence(10**6, 16)["P_star"] / softmax_coexistence(10**6, 16)["balance"])),
        HeadlineNumber("copy_head.softmax.readout_r0.P_star",
                       f"P* with readout variance lambda = 1 (convention r=0, the earlier default), {reference}",
                       lambda: float(softmax_coexistence(REFERENCE_L, REFERENCE_V, r=0)["P_star"])),
        HeadlineNumber("copy_head.softmax.readout_r0.a_copy_at_P_star",
                       f"where the jump lands, lambda = 1 (convention r=0), {reference}",
                       lambda: float(softmax_coexistence(REFERENCE_L, REFERENCE_V, r=0)["a_copy"])),
    ]
