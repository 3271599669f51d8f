r"""Step 3: the architecture prior on the symmetric family and the reduced linear action.

Symmetric family.  Dropping the bulk, the attention matrix is restricted to
:math:`A = c_1 J/L + c_G S` (uniform pooling and copy), or equivalently
:math:`A = u\,J/L + c_G (S - J/L)` with :math:`u = c_1 + c_G = \mathbf 1^TA\mathbf 1/L`.

Architecture T.  The logits :math:`G = Z W_{QK} Z^T` with :math:`Z = [X, I_L]` are
independent of the tokens exactly for :math:`W_{tt} = tJ_V`, :math:`W_{tp} = \mathbf 1_V u^T`,
:math:`W_{pt} = v\mathbf 1_V^T` and any :math:`W_{pp}` (one-hot rows: :math:`X\mathbf 1_V =
\mathbf 1_L`).  The Gaussian prior restricted to that subspace pushes forward to a Gaussian
on G whose covariance operator is the sum over unit-norm generators
(:func:`query_key_logit_covariance`):

.. math:: \Sigma(G) = \sigma^2 (I + J/V)\, G\, (I + J/V),

so uniform pooling is cheap: along J/L the variance is :math:`\sigma^2(1 + L/V)^2`, along the
copy direction (zero row and column sums) it is :math:`\sigma^2`.  Architecture M has
:math:`\Sigma = \sigma^2\,\mathrm{id}`.  Linear attention A = G/L^k rescales both by
:math:`L^{-2k}`: for T with k = 1, :math:`s_1 = \sigma^2(1/V + 1/L)^2`, :math:`s_G = \sigma^2/L^2`.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.patterns import Pattern, attention_invariants, shift_entries, two_sided_quadratic_form
from emergence.theory.copy_head.population import population_action
from emergence.theory.copy_head.model import SCALE_LAWS
from emergence.theory.copy_head.symbols import L, V, c1, cG, lam, m, n, q, r, r_W, s1, sG, sigma2, u

J_LEFT, J_RIGHT = sp.symbols("J_left J_right", positive=True)
"""Left and right multiplication by J = 11^T (commuting operators on L x L matrices)."""


def query_key_generators() -> list[tuple[str, sp.Expr]]:
    r"""Unit-norm generators of the token-independent W_QK family and their covariance terms.

    A unit generator g contributes :math:`G \mapsto \langle g, G\rangle g` to :math:`\Sigma/\sigma^2`:

    - :math:`W_{pp} = E_{ij}` (all i, j): the identity;
    - :math:`W_{tt} = J_V/V` (unit norm) gives :math:`X J_V X^T/V = J_L/V`, so :math:`J G J / V^2`;
    - :math:`W_{tp} = \mathbf 1_V e_k^T/\sqrt V` gives :math:`\mathbf 1_L e_k^T/\sqrt V`; summed over k,
      :math:`\sum_k (\mathbf 1^T G e_k)\mathbf 1 e_k^T / V = J G/V`;
    - :math:`W_{pt} = e_k \mathbf 1_V^T/\sqrt V` likewise gives :math:`G J/V`.
    """
    return [
        ("position-position", sp.Integer(1)),
        ("token-token", J_LEFT * J_RIGHT / V**2),
        ("token-position", J_LEFT / V),
        ("position-token", J_RIGHT / V),
    ]


def _reduce_in_algebra(expression: sp.Expr) -> sp.Expr:
    r"""Reduce a polynomial in J_left, J_right with :math:`J^2 = LJ` on each side (degree <= 1 in each)."""
    polynomial = sp.Poly(sp.expand(expression), J_LEFT, J_RIGHT)
    reduced = sp.Integer(0)
    for (left_power, right_power), coefficient in polynomial.terms():
        left = L ** (left_power - 1) * J_LEFT if left_power else 1
        right = L ** (right_power - 1) * J_RIGHT if right_power else 1
        reduced += coefficient * left * right
    return sp.expand(reduced)


@lru_cache(maxsize=None)
def query_key_logit_covariance() -> dict[str, sp.Expr]:
    r"""Covariance operator of the token-independent logits of architecture T (per :math:`\sigma^2`).

    Returns ``operator`` (the sum of the generator terms of :func:`query_key_generators`, a
    polynomial in J_left, J_right), its factorised form, its ``precision`` (the inverse
    :math:`p_0 + p_1J_{\rm left} + p_2J_{\rm right} + p_3J_{\rm left}J_{\rm right}`, solved in the
    algebra :math:`J^2 = LJ`) and the precision's ``kappa``: the precision must factorise as
    :math:`(I + \kappa J)\,G\,(I + \kappa J)`, which is checked, not assumed.

    >>> query_key_logit_covariance()["factorised"]
    (J_left + V)*(J_right + V)/V**2
    >>> query_key_logit_covariance()["kappa"]
    -1/(L + V)
    """
    operator = sp.Add(*(term for _, term in query_key_generators()))
    factorised = sp.factor(operator)
    p0, p1, p2, p3 = sp.symbols("p0:4")
    inverse = p0 + p1 * J_LEFT + p2 * J_RIGHT + p3 * J_LEFT * J_RIGHT
    product = sp.Poly(_reduce_in_algebra(operator * inverse) - 1, J_LEFT, J_RIGHT)
    solution = sp.solve(product.coeffs(), [p0, p1, p2, p3], dict=True)
    if len(solution) != 1:
        raise ArithmeticError(f"the logit covariance {operator} has no unique inverse: {solution}")
    precision = {symbol: sp.factor(solution[0][symbol]) for symbol in (p0, p1, p2, p3)}
    kappa = precision[p1]
    two_sided = {p0: 1, p1: kappa, p2: kappa, p3: kappa**2}
    if any(sp.simplify(precision[symbol] - value) != 0 for symbol, value in two_sided.items()):
        raise ArithmeticError(f"the logit precision {precision} is not of the two-sided form (I + kappa J) G (I + kappa J)")
    return {"operator": operator, "factorised": factorised,
            "precision": inverse.subs(precision), "kappa": sp.simplify(kappa)}


def logit_precision_kappa(architecture: str) -> sp.Expr:
    """kappa of the precision I + kappa J acting on both sides (0 for architecture M)."""
    if architecture == "T":
        return query_key_logit_covariance()["kappa"]
    if architecture == "M":
        return sp.Integer(0)
    raise ValueError(f"unknown architecture {architecture!r}")


def logit_prior_cost(G: Pattern, architecture: str, shift: str = "cyclic") -> sp.Expr:
    r""":math:`\langle G, \Sigma^{-1} G\rangle / 2 = \operatorname{tr}(G^TKGK)/(2\sigma^2)` for a logit pattern G."""
    kappa = logit_precision_kappa(architecture)
    return two_sided_quadratic_form(G, kappa, L, shift) / (2 * sigma2)


def linear_pattern(uniform_coefficient=c1, copy_coefficient=cG) -> Pattern:
    """A = c1 J/L + cG S."""
    return Pattern({"uniform": uniform_coefficient, "shift": copy_coefficient})


def linear_attention_prior_cost(architecture: str, normalisation_exponent: int = 1,
                                shift: str = "cyclic") -> sp.Expr:
    """Prior cost of A = c1 J/L + cG S for linear attention A = G / L**k (in sigma2)."""
    G = linear_pattern(c1 * L**normalisation_exponent, cG * L**normalisation_exponent)
    return sp.expand(logit_prior_cost(G, architecture, shift))


@lru_cache(maxsize=None)
def effective_linear_scales(architecture: str = "T", normalisation_exponent: int = 1) -> dict[str, sp.Expr]:
    r"""s1 and sG: prior variances of A along the unit directions J/L and (S - J/L)/sqrt(L - 1).

    Derived from the Hessian of the cyclic prior cost in the orthogonal coordinates
    :math:`(u, c_G)`, :math:`u = c_1 + c_G`; the off-diagonal entry vanishes (returned as
    ``coupling`` for the record).

    >>> effective_linear_scales("T")["s1"]
    sigma2*(L + V)**2/(L**2*V**2)
    >>> effective_linear_scales("T")["sG"]
    sigma2/L**2
    """
    cost = linear_attention_prior_cost(architecture, normalisation_exponent, "cyclic")
    in_orthogonal = sp.expand(cost.subs(c1, u - cG))
    hessian = sp.hessian(in_orthogonal, (u, cG))
    copy_norm2 = shift_entries(L, "cyclic") - 1
    return {
        "s1": sp.factor(1 / hessian[0, 0]),
        "sG": sp.factor(copy_norm2 / hessian[1, 1]),
        "coupling": sp.simplify(hessian[0, 1]),
    }


def linear_prior_in_scales() -> sp.Expr:
    r""":math:`u^2/(2 s_1) + (L-1) c_G^2/(2 s_G)` with u = c1 + cG (cyclic shift, either architecture)."""
    return (c1 + cG) ** 2 / (2 * s1) + (L - 1) * cG**2 / (2 * sG)


@lru_cache(maxsize=None)
def linear_reduced_action(targets: str = "raw") -> sp.Expr:
    r"""S_lin(c1, cG): prior (in s1, sG) plus the population data action on the symmetric family.

    Cyclic shift; the invariants of :math:`A = c_1J/L + c_GS` are
    :math:`q = c_1^2 + 2c_1c_G + Lc_G^2`, :math:`m = c_1 + Lc_G`,
    :math:`r = L(c_1+c_G)^2`, :math:`n = L(c_1 + c_G)`.
    """
    invariants = attention_invariants(linear_pattern(), L, "cyclic")
    data = population_action("cyclic", targets).subs({q: invariants["q"], m: invariants["m"],
                                                      r: invariants["r"], n: invariants["n"]},
                                                     simultaneous=True)
    return linear_prior_in_scales() + data


def linear_prior_check(architecture: str, normalisation_exponent: int = 1) -> sp.Expr:
    """Difference between the architecture's cyclic prior cost and the (s1, sG) form (0 when consistent)."""
    scales = effective_linear_scales(architecture, normalisation_exponent)
    in_scales = linear_prior_in_scales().subs({s1: scales["s1"], sG: scales["sG"]})
    return sp.simplify(linear_attention_prior_cost(architecture, normalisation_exponent) - in_scales)


@lru_cache(maxsize=None)
def matched_linear_normalisation() -> dict[str, sp.Expr]:
    r"""The linear normalisation :math:`A = G/L^{k(r)}` that makes the linear action independent of r.

    The population data action depends on the readout variance only through
    :math:`\tilde p = \lambda\beta P/V` multiplying the invariants q, m^2, r, n^2, which are
    quadratic in A; rescaling :math:`A\to\alpha A` together with
    :math:`\lambda\to\lambda/\alpha^2` and the prior variances of A by :math:`\alpha^2` leaves
    the action unchanged.  So the action depends only on :math:`\lambda s_1` and
    :math:`\lambda s_G` (``invariance`` checks :math:`\partial_r` of both vanishes, and that
    the linear action itself, written in :math:`\alpha A`, is unchanged), and k solves
    :math:`\lambda(r)\,L^{-2k} = \lambda(0)\,L^{-2}`.

    >>> matched_linear_normalisation()["k"]
    1 - r_W/2
    >>> matched_linear_normalisation()["invariance"]
    (0, 0, 0)
    """
    k = sp.Symbol("k", real=True)
    law = SCALE_LAWS["lam"]
    solutions = sp.solve(sp.Eq(sp.log(law * L ** (-2 * k)), sp.log(law.subs(r_W, 0) * L**-2)), k)
    if len(solutions) != 1:
        raise ArithmeticError(f"expected one matched normalisation exponent, got {solutions}")
    k_matched = sp.expand(solutions[0])
    general = effective_linear_scales("T", 0)
    products = [sp.factor(sp.powsimp(sp.expand_power_base(law * general[name] * L ** (-2 * k_matched), force=True), force=True))
                for name in ("s1", "sG")]
    alpha = sp.Symbol("alpha", positive=True)
    action = linear_reduced_action("raw")
    rescaled = action.subs({c1: alpha * c1, cG: alpha * cG, lam: lam / alpha**2, s1: s1 * alpha**2,
                            sG: sG * alpha**2}, simultaneous=True)
    invariance = tuple(sp.simplify(sp.diff(sp.expand_log(sp.log(p), force=True), r_W)) for p in products)
    return {"k": k_matched, "lam_s1": products[0], "lam_sG": products[1],
            "invariance": invariance + (sp.simplify(rescaled - action),)}
