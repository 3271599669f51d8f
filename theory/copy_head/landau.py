r"""Step 4: Landau expansion of the linear-attention action around the symmetric point.

The population action depends on A only through :math:`m^2, n^2, q, r`, all even in
:math:`(c_1, c_G)`, so the symmetric point :math:`c_1 = c_G = 0` is always stationary (Z2).
With the copy parameter at its conditional minimum, :math:`c_G = \alpha c_1 + O(c_1^3)`,
:math:`\alpha = -H_{1G}/H_{GG}`, the effective action is

.. math:: S_{\rm eff}(c_1) = S_0 + r\,c_1^2 + u\,c_1^4 + O(c_1^6)

(the :math:`O(c_1^3)` correction of :math:`c_G` enters only at :math:`c_1^6`).  A second-order
transition sits where r changes sign with u > 0.  Ignoring the copy coupling,
:math:`r = H_{11}/2` is quadratic in P and :func:`second_order_point` solves it in closed form.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.order_parameters import linear_reduced_action
from emergence.theory.copy_head.symbols import L, P, V, beta, c1, cG, lam, s1, sG, sigma2

tau = sp.Symbol("tau", positive=True)
"""tau = c1**2 along the line cG = alpha c1."""


@lru_cache(maxsize=None)
def symmetric_point_hessian(targets: str = "raw") -> sp.Matrix:
    """Hessian of S_lin in (c1, cG) at c1 = cG = 0 (2 x 2)."""
    action = linear_reduced_action(targets)
    hessian = sp.hessian(action, (c1, cG)).subs({c1: 0, cG: 0})
    return hessian.applyfunc(sp.simplify)


@lru_cache(maxsize=None)
def landau_coefficients(targets: str = "raw", coupled: bool = True) -> dict[str, sp.Expr]:
    r"""r and u (coefficients of c1^2 and c1^4) with cG relaxed (``coupled``) or held at 0.

    Returns also ``alpha`` (the slope of the conditional minimum of cG).
    """
    hessian = symmetric_point_hessian(targets)
    alpha = -hessian[0, 1] / hessian[1, 1] if coupled else sp.Integer(0)
    slope = sp.Symbol("alpha", real=True)
    line = sp.expand(linear_reduced_action(targets).subs({cG: slope * c1}).subs(c1, sp.sqrt(tau)))
    first = sp.diff(line, tau).subs(tau, 0)
    second = sp.diff(line, tau, 2).subs(tau, 0) / 2
    alpha = sp.factor(alpha)
    return {
        "alpha": alpha,
        "r": sp.factor(first.subs(slope, alpha)),
        "u": sp.together(second.subs(slope, alpha)),
    }


@lru_cache(maxsize=None)
def second_order_point(targets: str = "raw") -> sp.Expr:
    r"""P1: the positive root in P of the uncoupled curvature :math:`H_{11} = 0`.

    :math:`H_{11} = 1/s_1 + \lambda\beta P(V - 1 + L) - \lambda\beta^2P^2(1 - 1/V + L^2/V)/V`
    (raw targets) is quadratic in P with one positive root.
    """
    curvature = symmetric_point_hessian(targets)[0, 0]
    roots = sp.solve(sp.Eq(curvature, 0), P)
    positive = [root for root in roots if _is_positive_branch(root)]
    if len(positive) != 1:
        raise ArithmeticError(f"expected one positive root for P1, got {roots}")
    return sp.simplify(positive[0])


def _is_positive_branch(root: sp.Expr) -> bool:
    """Whether a solve() branch is positive at a generic interior point (spurious branches fail)."""
    point = {L: 37, V: 5, s1: sp.Rational(3, 7), sG: sp.Rational(2, 9), lam: sp.Rational(5, 4),
             beta: sp.Rational(1, 11), sigma2: sp.Rational(4, 3)}
    value = sp.N(root.subs(point), 30)
    return bool(value.is_real and value > 0)


@lru_cache(maxsize=None)
def copy_direction_curvature(targets: str = "raw") -> sp.Expr:
    r"""Curvature of S_lin along the pure copy direction :math:`S - J/L` (u fixed) at the symmetric point.

    In (c1, cG) the direction is (-1, 1): :math:`H_{11} - 2H_{1G} + H_{GG}`.  It does not
    involve s1 (the direction is orthogonal to J/L):
    :math:`(L-1)[1/s_G + \lambda\beta P(V-1) - \lambda\beta^2P^2(L-1)(V-1)/V^2]`.
    """
    hessian = symmetric_point_hessian(targets)
    return sp.factor(sp.expand(hessian[0, 0] - 2 * hessian[0, 1] + hessian[1, 1]))


@lru_cache(maxsize=None)
def copy_mode_onset(targets: str = "raw") -> sp.Expr:
    r"""P_G: the positive root of the copy-direction curvature at the symmetric point.

    Past P_G the copy direction would be unstable on its own; with uniform pooling already
    condensed it is the onset of the copy mode (the smooth crossover of the note).
    """
    roots = sp.solve(sp.Eq(copy_direction_curvature(targets), 0), P)
    positive = [root for root in roots if _is_positive_branch(root)]
    if len(positive) != 1:
        raise ArithmeticError(f"expected one positive root for P_G, got {roots}")
    return sp.simplify(positive[0])


@lru_cache(maxsize=None)
def leading_second_order_point() -> dict[str, sp.Expr]:
    r"""P1 for model T (s1 = sigma2 (1/V + 1/L)^2, beta = 1/L) as L -> oo, then its V -> oo form.

    >>> golden = (1 + sp.sqrt(1 + 4 / (lam * sigma2))) / 2
    >>> sp.simplify(leading_second_order_point()["L_to_infinity"] / V**2 - golden)
    0
    """
    model_t = second_order_point().subs({s1: sigma2 * (1 / V + 1 / L) ** 2, beta: 1 / L})
    large_L = sp.simplify(sp.limit(model_t, L, sp.oo))
    return {"model_T": model_t, "L_to_infinity": large_L,
            "coefficient_of_V2": sp.simplify(sp.limit(large_L / V**2, V, sp.oo))}


@lru_cache(maxsize=None)
def leading_copy_mode_onset() -> dict[str, sp.Expr]:
    r"""P_G for model T (sG = sigma2/L^2, beta = 1/L): its L^{3/2} coefficient as L -> oo.

    >>> leading_copy_mode_onset()["coefficient_of_L32"]
    V/(sqrt(lam)*sqrt(sigma2)*sqrt(V - 1))
    """
    model_t = copy_mode_onset().subs({sG: sigma2 / L**2, beta: 1 / L})
    coefficient = sp.simplify(sp.limit(model_t / L ** sp.Rational(3, 2), L, sp.oo))
    return {"model_T": model_t, "coefficient_of_L32": coefficient}
