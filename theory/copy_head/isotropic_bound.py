r"""Convention study: how far apart can the uniform transition P1 and the copy onset P_G be?

Both are positive roots of quadratics in :math:`y = \beta P` (:mod:`.landau`): the uniform
curvature :math:`1/s_1 + \lambda y(L+V-1) - \lambda y^2(L^2+V-1)/V^2` and the copy-direction
curvature :math:`1/s_G + \lambda y(V-1) - \lambda y^2(L-1)(V-1)/V^2`.  Writing each as
:math:`1 + \zeta b y - \zeta a y^2` with :math:`\zeta = s\lambda` the ratio
:math:`R = P_G/P_1` depends on :math:`(s_1\lambda, s_G\lambda)` only, not on beta.

Isotropic prior (:math:`s_1 = s_G = s`, model M on the bulk-free family): R runs between its
Occam-dominated limit (:math:`\zeta\to\infty`, :math:`R\to(b_Ga_1)/(a_Gb_1)\approx 1`) and its
prior-dominated limit (:math:`\zeta\to 0`)

.. math:: R_0^2 = \frac{a_1}{a_G} = \frac{L^2 + V - 1}{(L-1)(V-1)}
   = \frac LV\cdot\frac{V}{V-1}\cdot\frac{L^2+V-1}{L(L-1)} ,

so the note's :math:`P_G/P_1\le\sqrt{L/V}` holds only up to the factor
:math:`\sqrt{V/(V-1)}\,(1 + O(1/L)) > 1`; the sharp bound is :math:`R_0`.  With
:math:`P_1\propto V^2` the copy scale is at most :math:`\sim L^{1/2}V^{3/2}`, never
:math:`L^{3/2}V^{1/2}` for L > V.  A prior-variance factor :math:`s_1/s_G\sim (L/V)^2`
(model T) multiplies :math:`R_0` by :math:`\sqrt{s_1/s_G}` in the prior-dominated regime.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.landau import copy_direction_curvature, symmetric_point_hessian
from emergence.theory.copy_head.symbols import L, P, V, beta, lam, s1, sG

zeta = sp.Symbol("zeta", positive=True)
y = sp.Symbol("y", positive=True)


def _quadratic_coefficients(curvature: sp.Expr, variance) -> tuple[sp.Expr, sp.Expr]:
    """(a, b) with variance * curvature = 1 + zeta b y - zeta a y^2 (y = beta P, zeta = variance * lam)."""
    normalised = sp.expand(curvature * variance)
    in_y = sp.expand(normalised.subs(P, y / beta))
    polynomial = sp.Poly(in_y, y)
    if sp.simplify(polynomial.coeff_monomial(1) - 1) != 0:
        raise ArithmeticError(f"unexpected constant term in {in_y}")
    b = sp.simplify(polynomial.coeff_monomial(y) / (variance * lam))
    a = sp.simplify(-polynomial.coeff_monomial(y**2) / (variance * lam))
    return a, b


@lru_cache(maxsize=None)
def transition_quadratics() -> dict[str, tuple[sp.Expr, sp.Expr]]:
    """(a, b) of the uniform curvature (per s1) and of the copy-direction curvature (per (L-1)/sG)."""
    uniform = _quadratic_coefficients(symmetric_point_hessian()[0, 0], s1)
    copy = _quadratic_coefficients(copy_direction_curvature() / (L - 1), sG)
    return {"uniform": uniform, "copy": copy}


def _root(a, b) -> sp.Expr:
    """Positive root in y of 1 + zeta b y - zeta a y^2."""
    return (b + sp.sqrt(b**2 + 4 * a / zeta)) / (2 * a)


@lru_cache(maxsize=None)
def isotropic_ratio() -> dict[str, sp.Expr]:
    r"""R(zeta) = P_G/P_1 for s1 = sG, its two limits, and the comparison with sqrt(L/V).

    >>> sp.factor(isotropic_ratio()["prior_dominated_squared"])
    (L**2 + V - 1)/((L - 1)*(V - 1))
    """
    (a1, b1), (aG, bG) = transition_quadratics()["uniform"], transition_quadratics()["copy"]
    ratio = _root(aG, bG) / _root(a1, b1)
    prior_limit = sp.simplify(sp.limit(ratio**2, zeta, 0))
    occam_limit = sp.simplify(sp.limit(ratio, zeta, sp.oo))
    excess = sp.factor(prior_limit / (L / V))
    return {
        "ratio": ratio,
        "prior_dominated_squared": prior_limit,
        "occam_dominated": occam_limit,
        "excess_over_note_bound_squared": excess,
        "excess_large_L": sp.limit(excess, L, sp.oo),
    }


@lru_cache(maxsize=None)
def anisotropic_prior_dominated_ratio() -> sp.Expr:
    r"""Prior-dominated :math:`(P_G/P_1)^2 = (s_1 a_1)/(s_G a_G)` for independent s1, sG.

    For model T (:math:`s_1/s_G = (1 + L/V)^2`) this is :math:`\sim (L/V)^3`, so
    :math:`P_1\propto V^2` gives :math:`P_G\propto L^{3/2}V^{1/2}`.
    """
    (a1, _), (aG, _) = transition_quadratics()["uniform"], transition_quadratics()["copy"]
    return sp.factor(s1 * a1 / (sG * aG))
