r"""Step 2: the population average over i.i.d. uniform one-hot tokens.

One-hot moments.  A token :math:`x = e_u` with u uniform on V values has
:math:`\mathbb E[x x^T] = \frac1V\sum_u e_u e_u^T = I/V` and
:math:`\mathbb E[x] = \frac1V\sum_u e_u = \mathbf 1/V`.  Positions are independent, so
:math:`\mathbb E[x_\ell x_{\ell'}^T] = \delta_{\ell\ell'}(\mathbb E[xx^T] - \mathbb E[x]\mathbb E[x]^T)
+ \mathbb E[x]\mathbb E[x]^T` and for any L x L matrix M (derived in
:func:`quadratic_form_average`)

.. math:: \mathbb E[X^T M X] = \operatorname{tr}M\,\big(\mathbb E[xx^T]-\mathbb E[x]\mathbb E[x]^T\big)
   + \mathbf 1^T M \mathbf 1\;\mathbb E[x]\mathbb E[x]^T .

The readout Gram matrices of step 1 are sums over P sequences; replacing each by P times its
expectation (self-averaging, valid for PL >> V; the fluctuation corrections are dropped)
and evaluating the step-1 action in :class:`~emergence.theory.copy_head.token_algebra.TokenMatrix`
gives the population action as a function of the four invariants q, m, r, n of A.

>>> from emergence.theory.copy_head.symbols import V
>>> second, outer = one_hot_moments()
>>> second.identity_and_ones(V), outer.identity_and_ones(V)
((1/V, 0), (0, V**(-2)))
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.marginal import B, C, D, readout_marginal
from emergence.theory.copy_head.patterns import shift_entries
from emergence.theory.copy_head.symbols import L, P, V, m, n, q, r
from emergence.theory.copy_head.token_algebra import TokenMatrix

TARGETS = ("raw", "centred")


def one_hot_moments() -> tuple[TokenMatrix, TokenMatrix]:
    r"""(:math:`\mathbb E[xx^T]`, :math:`\mathbb E[x]\mathbb E[x]^T`) of a uniform one-hot token.

    :math:`\sum_u e_u e_u^T = I` and :math:`\sum_u e_u = \mathbf 1`, so the second moment is
    I/V and the outer product of the mean is :math:`\mathbf 1\mathbf 1^T/V^2 = J/V^2`.
    """
    second_moment = TokenMatrix.identity() * (1 / V)
    mean = sp.Integer(1) / V
    mean_outer = TokenMatrix.ones(V) * mean**2
    return second_moment, mean_outer


def quadratic_form_average(trace_M, total_M) -> TokenMatrix:
    r""":math:`\mathbb E[X^T M X]` from tr M and :math:`\mathbf 1^T M\mathbf 1` (the population lemma).

    >>> alpha, gamma = quadratic_form_average(sp.Symbol("t"), sp.Symbol("s")).identity_and_ones(V)
    >>> alpha, sp.factor(gamma)
    (t/V, (s - t)/V**2)
    """
    second_moment, mean_outer = one_hot_moments()
    return (second_moment - mean_outer) * trace_M + mean_outer * total_M


def mean_times_ones(total_M) -> TokenMatrix:
    r""":math:`\mathbb E[X^T M \mathbf 1_L]\,\mathbf 1_V^T / V = (\mathbf 1^T M\mathbf 1)\,J/V^2` (centring terms)."""
    _, mean_outer = one_hot_moments()
    return mean_outer * total_M


def population_moments(shift: str = "cyclic", targets: str = "raw") -> dict[str, TokenMatrix]:
    r"""Per-sequence expectations of C, B, D in terms of q, m, r, n.

    :math:`C_1 = \mathbb E[X^TA^TAX]` (tr = q, total = r); :math:`B_1 = \mathbb E[X^TA^TY]`
    with Y = SX (raw) or :math:`S(X - \mathbf 1\mathbf 1^T/V)` (centred); :math:`D_1 = \mathbb E[Y^TY]`.
    """
    if targets not in TARGETS:
        raise ValueError(f"unknown targets {targets!r}")
    nS = shift_entries(L, shift)
    C1 = quadratic_form_average(q, r)
    B1 = quadratic_form_average(m, n)
    D1 = quadratic_form_average(nS, nS)
    if targets == "centred":
        B1 = B1 - mean_times_ones(n)
        D1 = D1 - mean_times_ones(nS) * 2 + mean_times_ones(nS)
    return {"C": C1.simplified(), "B": B1.simplified(), "D": D1.simplified()}


def evaluate_in_token_algebra(expression: sp.Basic, environment: dict[str, TokenMatrix]) -> sp.Expr:
    """Evaluate a scalar expression of traces and log-determinants of V x V matrix expressions.

    Matrix symbols are looked up in ``environment``; ``Identity``, sums, scalar multiples,
    products, transposes (every element is symmetric) and inverses map to the algebra.
    """

    def matrix(node) -> TokenMatrix:
        if isinstance(node, sp.MatrixSymbol):
            return environment[node.name]
        if isinstance(node, sp.Identity):
            return TokenMatrix.identity()
        if isinstance(node, sp.MatAdd):
            result = matrix(node.args[0])
            for item in node.args[1:]:
                result = result + matrix(item)
            return result
        if isinstance(node, sp.MatMul):
            scalar, factors = node.as_coeff_matrices()
            result = matrix(factors[0])
            for item in factors[1:]:
                result = result * matrix(item)
            return result * scalar
        if isinstance(node, sp.Transpose):
            return matrix(node.arg)
        if isinstance(node, sp.Inverse):
            return matrix(node.arg).inverse()
        if isinstance(node, sp.MatPow) and node.exp == -1:
            return matrix(node.base).inverse()
        raise TypeError(f"no token-algebra rule for {type(node).__name__}: {node}")

    def scalar(node) -> sp.Expr:
        if isinstance(node, sp.Trace):
            return matrix(node.arg).trace(V)
        if isinstance(node, sp.log) and isinstance(node.args[0], sp.Determinant):
            return matrix(node.args[0].arg).logdet(V)
        if isinstance(node, (sp.Add, sp.Mul)):
            return node.func(*(scalar(arg) for arg in node.args))
        if not node.free_symbols & {C, B, D}:
            return node
        raise TypeError(f"no scalar rule for {node}")

    return scalar(expression)


@lru_cache(maxsize=None)
def population_action(shift: str = "cyclic", targets: str = "raw") -> sp.Expr:
    r"""The data part of S(G) at the population level, in q, m, r, n, P, L, V, beta, lam.

    For raw targets and the cyclic shift, with :math:`\tilde p = \lambda\beta P/V`, it
    simplifies to the form of the note:
    :math:`\tfrac{\beta P L}{2} - \tfrac{\beta P\tilde p}{2}\big[(1-\tfrac1V)\tfrac{m^2}{1+\tilde p q}
    + \tfrac{n^2}{V(1+\tilde p r)}\big] + \tfrac{V(V-1)}{2}\ln(1+\tilde p q) + \tfrac V2\ln(1+\tilde p r)`.
    """
    moments = population_moments(shift, targets)
    environment = {name: moment * P for name, moment in moments.items()}
    return evaluate_in_token_algebra(readout_marginal()["action"], environment)
