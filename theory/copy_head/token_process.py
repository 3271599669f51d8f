r"""Step 2 for a stationary token process: the data term from the lag joints :math:`J_k`.

Lag joints.  A stationary stream of one-hot tokens has the unigram :math:`\pi` and the lag-k joints
:math:`J_k = \mathbb E[x_\ell x_{\ell-k}^T]` (:math:`J_0 = \operatorname{diag}\pi`,
:math:`J_{-k} = J_k^T`).  For any L x L matrix M

.. math:: \mathbb E[X^T M X] = \sum_{\ell,\ell'} M_{\ell\ell'}\,J_{\ell-\ell'},

so the readout Gram matrices of step 1 (:math:`C_1 = \mathbb E[X^TA^TAX]`, :math:`B_1 = \mathbb E[X^TA^TSX]`,
:math:`D_1 = \mathbb E[X^TS^TSX]`, cyclic shift on a stream of L tokens: position 0's target is
:math:`x_{L-1}`, at lag :math:`-(L-1)`) weigh each lag by the diagonal sums of :math:`A^TA` and
:math:`A^TS`.  I.i.d. uniform tokens (:mod:`.population`) are :math:`J_0 = I/V`,
:math:`J_{k\ne0} = \mathbf 1\mathbf 1^T/V^2`.

Symmetric family.  :math:`A = c_0 I + c_G S + c_1 J/L`: self-attention, copy, uniform pool.  With the
cyclic S, :math:`S^TS = I`, :math:`S^TJ = JS = J`, :math:`J^2 = LJ`, so :math:`A^TA` and :math:`A^TS`
stay in span{I, S, S^T, J} (:func:`transpose_product`), whose lag profiles are counts
(:data:`LAG_PROFILES`): I has L entries at lag 0; S has L - 1 at lag 1 and the wrap at lag -(L - 1);
J has :math:`L - |k|` at lag k.  Three order parameters are needed, and why:

- :math:`c_G` (copy): the target itself;
- :math:`c_0` (self): :math:`x_\ell` predicts :math:`x_{\ell-1}` through :math:`J_1`; on the
  i.i.d. task it carries no signal and the saddle has :math:`c_0 = 0` (checked by test);
- :math:`c_1` (uniform pool): the pooled stream predicts the target through
  :math:`\sum_k J_k` (topic information), and fixes the row sums, which carry the unigram.

Persistence process.  :math:`x_\ell = x_{\ell-1}` with probability :math:`\rho`, else a fresh
uniform token: the transition matrix is :math:`T = \rho I + (1-\rho)J/V`, stationary
:math:`\pi = \mathbf 1/V`, and :math:`J_k = \operatorname{diag}(\pi)T^k` is derived in the token
algebra: :math:`J_k = \tfrac{\rho^k}{V}\Pi_\perp + \tfrac1V\Pi_\parallel` (:func:`persistence_lag_joint`).
Hence :math:`\mathbb E[X^TMX] = \tfrac1V\langle M, R_\rho\rangle\Pi_\perp +
\tfrac1V\mathbf 1^TM\mathbf 1\,\Pi_\parallel` with :math:`(R_\rho)_{\ell\ell'} = \rho^{|\ell-\ell'|}`:
the i.i.d. invariants q, m become :math:`q_\rho = \langle A^TA, R_\rho\rangle`,
:math:`m_\rho = \langle A^TS, R_\rho\rangle` (r, n and D are unchanged), and at :math:`\rho = 0`,
:math:`R_0 = I`, the i.i.d. action returns.

Zipf unigram, no correlation: :math:`J_0 = \operatorname{diag}\pi`, :math:`J_{k\ne0} = \pi\pi^T`,
so :math:`\mathbb E[X^TMX] = \operatorname{tr}M\,(\operatorname{diag}\pi - \pi\pi^T) +
\mathbf 1^TM\mathbf 1\,\pi\pi^T`: the i.i.d. invariants q, m, r, n, in a V x V algebra that is no
longer span{I, J}; the numerics evaluate it with V x V matrices
(:mod:`emergence.numerics.copy_head.token_process`).

>>> profile_sum("S", 0), profile_sum("S", 1)
(L, rho*(L - 1) + rho**(L - 1))
>>> profile_sum("J", 0)
L**2
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.marginal import readout_marginal
from emergence.theory.copy_head.order_parameters import logit_prior_cost
from emergence.theory.copy_head.patterns import Pattern
from emergence.theory.copy_head.population import evaluate_in_token_algebra
from emergence.theory.copy_head.symbols import L, P, V, aG, beta, c1, cG, lam, s1, sG, sigma2
from emergence.theory.copy_head.token_algebra import TokenMatrix

rho = sp.Symbol("rho", nonnegative=True)
"""Persistence: probability that a token repeats the previous one."""
c0 = sp.Symbol("c0", real=True)
"""Self-attention coefficient of A = c0 I + cG S + c1 J/L."""
a0 = sp.Symbol("a0", positive=True)
"""Softmax: mean attention of a position on itself."""
lag = sp.Symbol("k", integer=True, nonnegative=True)
g0, gG, h = sp.symbols("g0 gG h", real=True)

BASIS = ("I", "S", "St", "J")
"""L x L matrices I, S (cyclic shift), S^T and J = 11^T."""

LAG_PROFILES: dict[str, tuple[tuple[sp.Expr, sp.Expr, bool], ...]] = {
    "I": ((sp.Integer(0), L, False),),
    "S": ((sp.Integer(1), L - 1, False), (L - 1, sp.Integer(1), True)),
    "St": ((sp.Integer(1), L - 1, True), (L - 1, sp.Integer(1), False)),
}
r"""(|lag|, number of entries, transposed) of each basis matrix: entry (l, l') of M picks
:math:`J_{\ell-\ell'}`, which is :math:`J_{|k|}^T` for :math:`\ell < \ell'`.  J (every lag, both signs,
:math:`L - |k|` entries each) is summed in :func:`lag_average`."""


def transpose_product(X: str, Y: str) -> dict[str, sp.Expr]:
    r""":math:`X^TY` for X, Y in {I, S, J} (cyclic S), as coefficients over :data:`BASIS`.

    :math:`I^TY = Y`, :math:`S^TI = S^T`, :math:`S^TS = I`, :math:`S^TJ = J`, :math:`J^TI = J^TS = J`,
    :math:`J^TJ = LJ` (S is a permutation, J has equal entries).
    """
    if X == "I":
        return {Y: sp.Integer(1)}
    table = {("S", "I"): {"St": sp.Integer(1)}, ("S", "S"): {"I": sp.Integer(1)}, ("S", "J"): {"J": sp.Integer(1)},
             ("J", "I"): {"J": sp.Integer(1)}, ("J", "S"): {"J": sp.Integer(1)}, ("J", "J"): {"J": L}}
    return table[(X, Y)]


def family_product(left: dict[str, sp.Expr], right: dict[str, sp.Expr]) -> dict[str, sp.Expr]:
    """:math:`A^TB` for A, B given as coefficients over {I, S, J}."""
    product: dict[str, sp.Expr] = {}
    for X, x in left.items():
        for Y, y in right.items():
            for Z, z in transpose_product(X, Y).items():
                product[Z] = sp.expand(product.get(Z, 0) + x * y * z)
    return product


def linear_family(self_coefficient=c0, copy_coefficient=cG, uniform_coefficient=c1) -> dict[str, sp.Expr]:
    """A = c0 I + cG S + c1 J/L over {I, S, J}."""
    return {"I": self_coefficient, "S": copy_coefficient, "J": uniform_coefficient / L}


def softmax_family() -> dict[str, sp.Expr]:
    r"""Rows with :math:`a_0` on the token itself, :math:`a_G` on the previous one and
    :math:`a_r = (1 - a_0 - a_G)/(L-2)` on each of the others: :math:`A = (a_0-a_r)I + (a_G-a_r)S + a_rJ`."""
    rest = (1 - a0 - aG) / (L - 2)
    return {"I": a0 - rest, "S": aG - rest, "J": rest}


def profile_sum(name: str, power) -> sp.Expr:
    r""":math:`\sum_{\ell\ell'} X_{\ell\ell'}\,\rho^{\,p|\ell-\ell'|}` for basis matrix X (p = ``power``; 0 counts entries).

    For J the lag sum :math:`L + 2\sum_{k=1}^{L-1}(L-k)\rho^{pk}` is done by SymPy (the
    :math:`\rho \ne 1` branch of its closed form).
    """
    weight = rho**power if power else sp.Integer(1)
    if name == "J":
        total = sp.Sum(2 * (L - lag) * weight**lag, (lag, 1, L - 1)).doit()
        general = total.replace(lambda node: isinstance(node, sp.Piecewise), lambda node: node.args[-1][0])
        return sp.factor(sp.simplify(L + general))
    return sp.Add(*(count * weight**distance for distance, count, _ in LAG_PROFILES[name]))


def persistence_lag_joint(k=lag) -> TokenMatrix:
    r""":math:`J_k = \operatorname{diag}(\pi)T^k` of the persistence chain, :math:`T = \rho I + (1-\rho)J/V`.

    The chain's stationary law is checked: :math:`\pi^TT = \pi^T` for :math:`\pi = \mathbf 1/V`
    (in the token algebra, :math:`\Pi_\parallel` is T's eigenvector with eigenvalue 1).

    >>> persistence_lag_joint(0)
    TokenMatrix(perp=1/V, parallel=1/V)
    >>> persistence_lag_joint()
    TokenMatrix(perp=rho**k/V, parallel=1/V)
    """
    transition = TokenMatrix.identity() * rho + TokenMatrix.ones(V) * ((1 - rho) / V)
    transition = transition.simplified()
    if sp.simplify(transition.parallel - 1) != 0:
        raise ArithmeticError(f"the persistence chain does not keep the uniform law: {transition}")
    unigram = TokenMatrix.identity() * (1 / V)
    return unigram * TokenMatrix(transition.perp**k, transition.parallel**k)


def persistence_quadratic_moment(matrix: dict[str, sp.Expr]) -> TokenMatrix:
    r""":math:`\mathbb E[X^TMX] = \sum_{\ell\ell'}M_{\ell\ell'}J_{\ell-\ell'}` for M over :data:`BASIS`.

    :math:`J_k` of :func:`persistence_lag_joint` is symmetric and a polynomial in :math:`\rho^k`, so
    each basis matrix contributes its entry count to the :math:`\Pi_\parallel` part and its
    :math:`\rho^{|k|}`-weighted count to the :math:`\Pi_\perp` part.
    """
    joint = persistence_lag_joint(lag)
    perp_per_weight = sp.simplify(joint.perp / rho**lag)
    result = TokenMatrix(sp.Integer(0), sp.Integer(0))
    for name, coefficient in matrix.items():
        result = result + TokenMatrix(perp_per_weight * profile_sum(name, 1), joint.parallel * profile_sum(name, 0)) * coefficient
    return result


def persistence_moments(attention: dict[str, sp.Expr]) -> dict[str, TokenMatrix]:
    """Per-sequence C_1, B_1, D_1 of the persistence process for an attention matrix over {I, S, J} (cyclic shift, raw targets)."""
    shift = {"S": sp.Integer(1)}
    return {
        "C": persistence_quadratic_moment(family_product(attention, attention)),
        "B": persistence_quadratic_moment(family_product(attention, shift)),
        "D": persistence_quadratic_moment(family_product(shift, shift)),
    }


def persistence_data_action(attention: dict[str, sp.Expr]) -> sp.Expr:
    """The readout-marginal action (step 1) at P times the persistence moments."""
    environment = {name: moment * P for name, moment in persistence_moments(attention).items()}
    return evaluate_in_token_algebra(readout_marginal()["action"], environment)


def persistence_posterior_loss(attention: dict[str, sp.Expr]) -> sp.Expr:
    r"""Per-position squared error of the posterior-mean readout :math:`\bar W = \varepsilon P(I + \varepsilon PC_1)^{-1}B_1`."""
    moments = persistence_moments(attention)
    C1, B1, D1 = moments["C"], moments["B"], moments["D"]
    epsilon = beta * lam * P
    readout = (TokenMatrix.identity() + C1 * epsilon).inverse() * B1 * epsilon
    return (D1.trace(V) - 2 * (readout * B1).trace(V) + (readout * C1 * readout).trace(V)) / L


@lru_cache(maxsize=None)
def family_logit_cost() -> sp.Expr:
    r"""Prior cost of logits :math:`g_0 I + g_G S` of architecture T modulo a constant (the softmax gauge).

    >>> sp.factor(family_logit_cost() - ((L - 1) * (g0**2 + gG**2) - 2 * g0 * gG) / (2 * sigma2))
    0
    """
    cost = sp.expand(logit_prior_cost(Pattern({"identity": g0, "shift": gG, "uniform": h * L}), "T", "cyclic"))
    optimum = sp.solve(sp.Eq(sp.diff(cost, h), 0), h)
    return sp.factor(sp.simplify(cost.subs(h, optimum[0])))


def linear_family_prior() -> sp.Expr:
    r"""Prior of A = c0 I + cG S + c1 J/L in the scales (s1, sG) of :func:`~.order_parameters.effective_linear_scales`:

    :math:`u^2/(2s_1) + [(L-1)(c_0^2 + c_G^2) - 2c_0c_G]/(2s_G)`, u = c0 + cG + c1 (the zero-sum part
    :math:`c_0(I - J/L) + c_G(S - J/L)` has variance sG per unit norm; ``linear_prior_check`` compares).
    """
    u = c0 + cG + c1
    return u**2 / (2 * s1) + ((L - 1) * (c0**2 + cG**2) - 2 * c0 * cG) / (2 * sG)


def linear_family_prior_check() -> sp.Expr:
    """Architecture T's cost of the logits L*A (A = G/L) minus :func:`linear_family_prior` at T's scales (0 when consistent)."""
    from emergence.theory.copy_head.order_parameters import effective_linear_scales

    scales = effective_linear_scales("T")
    cost = logit_prior_cost(Pattern({"identity": c0 * L, "shift": cG * L, "uniform": c1 * L}), "T", "cyclic")
    return sp.simplify(cost - linear_family_prior().subs({s1: scales["s1"], sG: scales["sG"]}))


@lru_cache(maxsize=None)
def persistence_linear_action() -> sp.Expr:
    """S_lin(c0, cG, c1) of the persistence process: the family prior plus the data action."""
    return linear_family_prior() + persistence_data_action(linear_family())


@lru_cache(maxsize=None)
def persistence_softmax_action() -> sp.Expr:
    r"""S_soft(a0, aG) of the persistence process, architecture T on the bulk-free family.

    The logit gaps over the other L - 2 positions are :math:`g = \ln(a/a_r)` (the softmax of
    :math:`g_0 I + g_G S` puts :math:`a_0, a_G, a_r` on self, previous and the rest); their
    gauge-fixed cost is :func:`family_logit_cost` with :math:`\sigma^2 \to s_G`.
    """
    rest = (1 - a0 - aG) / (L - 2)
    gaps = {g0: sp.log(a0) - sp.log(rest), gG: sp.log(aG) - sp.log(rest)}
    prior = family_logit_cost().subs(sigma2, sG).subs(gaps, simultaneous=True)
    return prior + persistence_data_action(softmax_family())
