r"""Leading asymptotic form of the softmax coexistence point P* (architecture T, bulk-free family).

Scaling ansatz (checked, not assumed, by the limits below): :math:`\beta = \beta_0/L`,
:math:`P = L\,\Pi`, copy weight :math:`a = \sqrt{x/L}`.  Then, as :math:`L\to\infty` at
fixed :math:`x, \Pi`:

- the data part of :math:`[S(a) - S(1/L)]/L` tends to
  :math:`f = -\tfrac{\beta_0\Pi}{2}(1-\tfrac1V)\,\frac{\tilde p x}{1 + \tilde p(1+x)}`
  (:math:`\tilde p = \lambda\beta_0\Pi/V`; SymPy ``limit``);
- the prior part tends to :math:`\ell^2/(2s_G)` with :math:`\ell = \tfrac12\ln(Lx)`.

For :math:`\tilde p\to\infty` (P* grows like :math:`L\ln^2L`, so :math:`\tilde p\sim\ln^2 L`) the
reduced action per L is :math:`\Lambda = \ell^2/(2s_G) - \tfrac{\beta_0\Pi}{2}(1-\tfrac1V)\,x/(1+x)`.
Coexistence of the copy minimum with the uniform one (:math:`\Lambda = 0`,
:math:`\partial_x\Lambda = 0`, :math:`\partial_x\ell = 1/(2x)`) solved by SymPy gives
:math:`x = \ell - 1` and :math:`\Pi = \ell^3/((\ell-1)\beta_0 s_G(1-1/V))`, with
:math:`2\ell = \ln(L(\ell-1))`, i.e. :math:`\ell = 1 - \tfrac12 W_{-1}(-2e^2/L)`.  Hence

.. math:: P^* \simeq \frac{L\,\ell^3}{(\ell-1)\,\beta_0 s_G (1 - 1/V)}
   \sim \frac{L\ln^2 L}{4\beta_0 s_G(1-1/V)},
   \qquad a^* \simeq \sqrt{(\ell-1)/L}\to 0 .

The leading term is taken by hand from :math:`W_{-1}(z)\sim\ln(-z)` as :math:`z\to0^-`
(SymPy's LambertW series at infinity is unreliable); tests compare it with the exact
coexistence of the full reduced action at 50 digits.  Dropped: the Occam term
(:math:`O(V^2\ln\ln L)`), the finite-:math:`\tilde p` correction (relative :math:`O(1/\ln^2L)`).
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.softmax import softmax_data_action, softmax_reduced_action
from emergence.theory.copy_head.symbols import L, P, V, aG, beta, lam, sG

x, Pi, beta0_, ell = sp.symbols("x Pi beta0 ell", positive=True)


@lru_cache(maxsize=None)
def scaled_action_limits() -> dict[str, sp.Expr]:
    """The L -> oo limits of the data and prior parts of [S(sqrt(x/L)) - S(1/L)] / L."""
    action = softmax_reduced_action("raw")
    logit = sp.log(aG / (1 - aG)) + sp.log(L - 1)
    prior = (L - 1) * logit**2 / (2 * sG)
    data = softmax_data_action("raw")
    if sp.simplify(action - prior - data) != 0:
        raise ArithmeticError("the softmax action does not split into the gap prior (L-1) g(a)^2/(2 sG) and "
                              "the population data action")
    scaling = {P: L * Pi, beta: beta0_ / L}
    copy_weight = sp.sqrt(x / L)
    data_limit = sp.limit((data.subs(scaling).subs(aG, copy_weight) - data.subs(scaling).subs(aG, 1 / L)) / L,
                          L, sp.oo)
    half_log = sp.log(L * x) / 2
    prior_remainder = sp.limit(prior.subs(aG, copy_weight) / L - half_log**2 / (2 * sG), L, sp.oo)
    prior_uniform = sp.simplify(sp.expand_log(prior.subs(aG, 1 / L), force=True))
    return {"data": sp.simplify(data_limit), "prior_remainder": prior_remainder, "prior_uniform": prior_uniform}


@lru_cache(maxsize=None)
def coexistence_solution() -> dict[str, sp.Expr]:
    r"""Solve Lambda = 0 and dLambda/dx = 0 for (x, Pi) in terms of ell, then ell(L) via LambertW."""
    limits = scaled_action_limits()
    if limits["prior_remainder"] != 0 or limits["prior_uniform"] != 0:
        raise ArithmeticError(f"unexpected prior limits {limits}")
    p_tilde = lam * beta0_ * Pi / V
    saturated = sp.limit(limits["data"] / Pi, Pi, sp.oo) * Pi
    action = ell**2 / (2 * sG) + saturated
    derivative = sp.diff(ell**2 / (2 * sG), ell) / (2 * x) + sp.diff(saturated, x)
    solutions = sp.solve([action, derivative], [x, Pi], dict=True)
    probe = {ell: 5, V: 7, beta0_: sp.Rational(13, 10), sG: sp.Rational(7, 10), lam: sp.Rational(3, 2)}
    physical = [s for s in solutions if s[x].subs(probe) > 0 and s[Pi].subs(probe) > 0]
    if len(physical) != 1:
        raise ArithmeticError(f"expected one physical coexistence branch, got {solutions}")
    branch = physical[0]
    ell_equation = sp.Eq(2 * ell, sp.log(L * branch[x]))
    ell_solutions = sp.solve(ell_equation, ell)
    # solve() returns the principal branch, whose ell -> 1 (x -> 0: the uniform state itself);
    # the copy minimum is on the W_{-1} branch, where ell grows like ln(L)/2.
    branches = [w.replace(sp.LambertW, lambda z, *k: sp.LambertW(z, -1)) for w in ell_solutions]
    growing = [b for b in branches if sp.N(b.subs(L, 10**6)) > 3]
    if len(growing) != 1:
        raise ArithmeticError(f"expected one growing LambertW branch, got {branches}")
    return {
        "p_tilde": p_tilde,
        "saturated_data": sp.simplify(saturated),
        "reduced_action": action,
        "x": sp.simplify(branch[x]),
        "Pi": sp.simplify(branch[Pi]),
        "ell_equation": ell_equation,
        "ell_lambert_principal": ell_solutions[0],
        "ell_lambert": growing[0],
    }


@lru_cache(maxsize=None)
def leading_P_star() -> dict[str, sp.Expr]:
    r"""P* from the dominant balance (in ell) and its leading law in L.

    >>> leading_P_star()["leading"]
    L*V*log(L)**2/(4*beta0*sG*(V - 1))
    """
    solution = coexistence_solution()
    balance = sp.simplify(L * solution["Pi"])
    # ell = ln(L)/2 + o(ln L): substitute the leading term and keep the leading power of ln L.
    log_L = sp.Symbol("log_L", positive=True)
    in_log = balance.subs(ell, log_L / 2)
    leading = sp.limit(in_log / log_L**2, log_L, sp.oo) * sp.log(L) ** 2
    return {"balance": balance, "leading": sp.simplify(leading)}


lam0, a_star = sp.symbols("lambda0 a_star", positive=True)


@lru_cache(maxsize=None)
def readout_scaled_limits() -> dict[str, sp.Expr]:
    r"""The r = 1 scaling: :math:`\lambda = \lambda_0/L`, :math:`\beta = \beta_0/L`, :math:`P = L\Pi`, a fixed.

    Then :math:`\tilde p\,q \to z = \lambda_0\beta_0\Pi a^2/V` stays finite, and the data part of
    :math:`[S(a) - S(1/L)]/L` tends to :math:`-\tfrac{\beta_0\Pi}{2}(1-\tfrac1V)\,z/(1+z)` (SymPy
    ``limit``; the Occam term is :math:`O(\ln L / L)` per L and drops out).
    """
    data = softmax_data_action("raw")
    scaling = {P: L * Pi, beta: beta0_ / L, lam: lam0 / L}
    scaled = data.subs(scaling)
    limit = sp.limit((scaled.subs(aG, a_star) - scaled.subs(aG, 1 / L)) / L, L, sp.oo)
    return {"data": sp.simplify(limit)}


z_fit = sp.Symbol("z", positive=True)
"""The readout's signal-to-noise at the copy minimum, :math:`z = \\tilde p q \\to \\lambda_0\\beta_0\\Pi a^2/V`."""


@lru_cache(maxsize=None)
def readout_coexistence() -> dict[str, sp.Expr]:
    r"""Where the softmax jump lands for :math:`\lambda = \lambda_0/L` (dominant balance, a = a* fixed).

    :math:`\Lambda(a) = \ell^2/(2s_G) + f(a, \Pi)` with :math:`\ell = \ln(a/(1-a)) + \ln(L-1)`
    (so :math:`\partial_a\ell = 1/(a(1-a))`).  Stationarity is linear in :math:`\ell`; with
    :math:`\Pi = zV/(\lambda_0\beta_0a^2)` coexistence :math:`\Lambda = 0` becomes
    :math:`\lambda_0 a^2(1+z)^3 = s_G(V-1)(1-a)^2z^2`, which SymPy solves for a.  Parametrised
    by z:

    .. math:: \frac{a}{1-a} = \sqrt{\frac{s_G(V-1)}{\lambda_0}}\,\frac{z}{(1+z)^{3/2}},\qquad
       \ell = \frac{1+z}{1-a},\qquad \Pi = \frac{zV}{\lambda_0\beta_0a^2},

    closed by :math:`\ell = \ln(a/(1-a)) + \ln(L-1)` (:func:`emergence.numerics.copy_head.scaling_certification.readout_landing`).  As
    :math:`L\to\infty`: :math:`z \simeq \ln L`, :math:`a^* \simeq \sqrt{s_G(V-1)/(\lambda_0\ln L)}`
    (the head still weakens, but only like :math:`(\ln L)^{-1/2}`) and
    :math:`P^* \simeq V L\ln^2 L/(\beta_0 s_G (V-1))`.
    """
    f = readout_scaled_limits()["data"]
    action = ell**2 / (2 * sG) + f
    derivative = ell / (sG * a_star * (1 - a_star)) + sp.diff(f, a_star)
    ell_solutions = sp.solve(derivative, ell)
    if len(ell_solutions) != 1:
        raise ArithmeticError(f"expected one stationary ell, got {ell_solutions}")
    to_z = {Pi: z_fit * V / (lam0 * beta0_ * a_star**2)}
    odds = sp.Symbol("odds", positive=True)
    coexistence = sp.numer(sp.factor(sp.together(action.subs(ell, ell_solutions[0]).subs(to_z))))
    odds_solutions = sp.solve(coexistence.subs(a_star, odds / (1 + odds)), odds)
    if len(odds_solutions) != 1:
        raise ArithmeticError(f"expected one positive copy odds, got {odds_solutions}")
    a_of_z = odds_solutions[0] / (1 + odds_solutions[0])
    return {"data": f, "odds": odds_solutions[0], "a": a_of_z,
            "ell": sp.factor(sp.simplify(ell_solutions[0].subs(to_z).subs(a_star, a_of_z))),
            "Pi": sp.factor(sp.simplify(to_z[Pi].subs(a_star, a_of_z)))}


@lru_cache(maxsize=None)
def readout_leading_P_star() -> dict[str, sp.Expr]:
    r"""The leading law of the :math:`\lambda = \lambda_0/L` balance (the default model, r = 1).

    On the landing curve of :func:`readout_coexistence`, as :math:`z\to\infty`:
    :math:`\ell(z)/z \to 1` and :math:`\ln(a/(1-a))/z \to 0` (SymPy limits, checked here), so the
    closure :math:`\ell = \ln(a/(1-a)) + \ln(L-1)` gives :math:`z/\ln L \to 1`, and
    :math:`P^* = L\Pi \sim L\ln^2 L\,\lim_{z\to\infty}\Pi/z^2`.

    >>> readout_leading_P_star()["leading"]
    L*V*log(L)**2/(beta0*sG*(V - 1))
    """
    landing = readout_coexistence()
    checks = {"ell_over_z": sp.limit(landing["ell"] / z_fit, z_fit, sp.oo),
              "log_odds_over_z": sp.limit(sp.log(landing["odds"]) / z_fit, z_fit, sp.oo)}
    if checks != {"ell_over_z": 1, "log_odds_over_z": 0}:
        raise ArithmeticError(f"the landing curve does not give z ~ ln L: {checks}")
    constant = sp.simplify(sp.limit(landing["Pi"] / z_fit**2, z_fit, sp.oo))
    return {"coefficient_of_L_log2L": constant, "leading": sp.simplify(L * sp.log(L) ** 2 * constant), **checks}
