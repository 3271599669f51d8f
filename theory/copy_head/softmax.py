r"""Step 5: the softmax pushforward of the Gaussian logit prior and the reduced softmax action.

Row softmax.  A row whose previous-token logit exceeds the others by g, the other L - 1
logits being Gaussian with variance t around a common value, puts weight

.. math:: a = \frac{e^{g}}{e^{g} + \sum_{j\ne} e^{G_j - G_{\rm others}}}
   \approx \frac{e^{g}}{e^{g} + (L-1)\,\mathbb E e^{G}}
   \;\Rightarrow\; g(a, t) = \ln\frac{a}{1-a} + \ln(L-1) + \frac t2

on the previous token (law of large numbers over the L - 1 others; :func:`logit_gap`), and
the squared weights of the others sum to :math:`(1-a)^2 e^{t}/(L-1)` (:func:`others_square_sum`).

Gauge.  Adding a constant to a row leaves the softmax unchanged, so the cost of a pattern is
minimised over row constants.  For architecture T on the symmetric family (bulk dropped,
t = 0) the cheapest logits for copy weight a are :math:`g(S - J/L)` at prior cost
:math:`(L-1)g^2/(2\sigma^2)`; for M the same minimisation per row gives
:math:`(L-1)g^2/(2sL)` per row, and the empirical variance t of the other logits costs the
Cramer rate :math:`\tfrac{L-1}{2}(t/s - 1 - \ln(t/s))` per row.

With :math:`q = \|A\|^2`, :math:`m = La`, :math:`r = n = L` (rows sum to one) the data action of
step 2 completes the reduced action; it is non-convex in a and has two competing minima.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.order_parameters import logit_prior_cost
from emergence.theory.copy_head.patterns import Pattern, attention_invariants
from emergence.theory.copy_head.population import population_action
from emergence.theory.copy_head.symbols import L, aG, m, n, q, r, sG, sigma2

t = sp.Symbol("t", positive=True)
"""Variance of the non-copy logits of a row (model M; 0 on the bulk-free family of T)."""
s = sp.Symbol("s", positive=True)
"""Entry variance of the positional logits (model M)."""
gap = sp.Symbol("g", real=True)


@lru_cache(maxsize=None)
def gaussian_exponential_moments() -> tuple[sp.Expr, sp.Expr]:
    r""":math:`\mathbb E e^{G}` and :math:`\mathbb E e^{2G}` for :math:`G \sim \mathcal N(0, t)` (integrated by SymPy).

    >>> gaussian_exponential_moments()
    (exp(t/2), exp(2*t))
    """
    x = sp.Symbol("x", real=True)
    density = sp.exp(-x**2 / (2 * t)) / sp.sqrt(2 * sp.pi * t)
    moments = (sp.integrate(sp.exp(k * x) * density, (x, -sp.oo, sp.oo), conds="none") for k in (1, 2))
    return tuple(sp.simplify(sp.simplify(moment).rewrite(sp.erf)) for moment in moments)


@lru_cache(maxsize=None)
def logit_gap() -> sp.Expr:
    r"""g(a, t) solving :math:`a = e^g/(e^g + (L-1)\mathbb E e^G)`.

    The solution is rewritten through the odds o = a/(1 - a) > 0 so that the logarithm splits
    without branch terms.

    >>> logit_gap() - (sp.log(aG / (1 - aG)) + sp.log(L - 1) + t / 2)
    0
    """
    first, _ = gaussian_exponential_moments()
    solutions = sp.solve(sp.Eq(aG, sp.exp(gap) / (sp.exp(gap) + (L - 1) * first)), gap)
    if len(solutions) != 1:
        raise ArithmeticError(f"expected one real gap, got {solutions}")
    odds = sp.Symbol("odds", positive=True)
    exponential = sp.simplify(sp.exp(solutions[0]).subs(aG, odds / (1 + odds)))
    split = sp.expand_log(sp.log(exponential), force=True)
    return split.subs(odds, aG / (1 - aG))


@lru_cache(maxsize=None)
def others_square_sum() -> sp.Expr:
    r""":math:`\sum_{j\ne} A_j^2 = (1-a)^2\,(L-1)\mathbb E e^{2G} / ((L-1)\mathbb E e^{G})^2`."""
    first, second = gaussian_exponential_moments()
    return sp.simplify((1 - aG) ** 2 * (L - 1) * second / ((L - 1) * first) ** 2)


@lru_cache(maxsize=None)
def variance_rate() -> sp.Expr:
    r"""Cramer rate of the empirical variance t of i.i.d. :math:`\mathcal N(0, s)` logits, per logit.

    Legendre transform of :math:`\Lambda(\theta) = \ln\mathbb E e^{\theta G^2} = -\tfrac12\ln(1-2s\theta)`:

    >>> sp.simplify(variance_rate() - (t / s - 1 - sp.log(t / s)) / 2)
    0
    """
    theta = sp.Symbol("theta", real=True)
    cumulant = -sp.log(1 - 2 * s * theta) / 2
    stationary = sp.solve(sp.Eq(sp.diff(theta * t - cumulant, theta), 0), theta)
    if len(stationary) != 1:
        raise ArithmeticError(f"expected one Legendre point, got {stationary}")
    return sp.expand_log(sp.simplify((theta * t - cumulant).subs(theta, stationary[0])), force=True)


@lru_cache(maxsize=None)
def gauge_fixed_copy_cost(architecture: str = "T") -> sp.Expr:
    r"""Prior cost of logits g S modulo row constants (cyclic shift), minimised over the gauge.

    For T in sigma2 (entry variance of :math:`W_{QK}`); for M in the entry variance of G.

    >>> gauge_fixed_copy_cost("T")
    g**2*(L - 1)/(2*sigma2)
    """
    h = sp.Symbol("h", real=True)
    cost = sp.expand(logit_prior_cost(Pattern({"shift": gap, "uniform": h * L}), architecture, "cyclic"))
    optimum = sp.solve(sp.Eq(sp.diff(cost, h), 0), h)
    return sp.factor(cost.subs(h, optimum[0]))


def softmax_pattern() -> Pattern:
    """A = a S + (1 - a)(J - S)/(L - 1): weight a on the previous token, the rest spread evenly."""
    spread = (1 - aG) / (L - 1)
    return Pattern({"shift": aG - spread, "uniform": spread * L})


@lru_cache(maxsize=None)
def softmax_data_action(targets: str = "raw") -> sp.Expr:
    """The population data action of step 2 at the invariants of :func:`softmax_pattern` (cyclic shift)."""
    invariants = attention_invariants(softmax_pattern(), L, "cyclic")
    return population_action("cyclic", targets).subs(
        {q: sp.factor(invariants["q"]), m: sp.factor(invariants["m"]),
         r: sp.factor(invariants["r"]), n: sp.factor(invariants["n"])}, simultaneous=True)


@lru_cache(maxsize=None)
def softmax_reduced_action(targets: str = "raw") -> sp.Expr:
    r"""S_soft(a) of architecture T on the bulk-free family (t = 0), copy-direction variance sG.

    sG is the prior variance of the logits along the unit copy direction (sigma2 for T),
    so the prior term is :math:`(L-1)g(a,0)^2/(2 s_G)`.
    """
    prior = gauge_fixed_copy_cost("T").subs(sigma2, sG).subs(gap, logit_gap().subs(t, 0))
    return prior + softmax_data_action(targets)


@lru_cache(maxsize=None)
def softmax_reduced_action_M(targets: str = "raw") -> sp.Expr:
    r"""S_soft(a, t) of architecture M (positional logits with entry variance s; bulk kept per row).

    :math:`L[(L-1)g(a,t)^2/(2sL) + (L-1) I(t)] + S_{\rm data}(q(a,t), La, L, L)` with
    :math:`q = L[a^2 + (1-a)^2e^t/(L-1)]`.
    """
    per_row_gap_cost = gauge_fixed_copy_cost("M").subs(sigma2, s) / L
    prior = L * (per_row_gap_cost.subs(gap, logit_gap()) + (L - 1) * variance_rate())
    square_sum = L * (aG**2 + others_square_sum())
    data = population_action("cyclic", targets).subs(
        {q: square_sum, m: L * aG, r: L, n: L}, simultaneous=True)
    return prior + data
