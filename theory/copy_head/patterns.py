r"""L x L attention patterns on the symmetric family span{J/L, S, I} and their invariants.

``J = 11^T`` and the shift S (``S[l, l-1] = 1``; cyclic: also ``S[0, L-1] = 1``) are the
two patterns the copy task singles out; the identity I (attend to the token itself) joins them
when tokens are correlated (:math:`\langle I, I\rangle = L`, :math:`\langle I, S\rangle = 0`,
:math:`\langle I, J/L\rangle = 1`).  S is a partial permutation with
:math:`n_S` ones (:math:`n_S = L` cyclic, :math:`L - 1` open), in distinct rows and
columns, so every invariant below is a count:
:math:`\langle J/L, J/L\rangle = 1`, :math:`\langle J/L, S\rangle = n_S/L`,
:math:`\langle S, S\rangle = \|S\mathbf 1\|^2 = \|\mathbf 1^T S\|^2 = \mathbf 1^T S \mathbf 1 = n_S`.

The derivation uses four bilinear invariants of a pattern pair (X, Y):
``frobenius`` tr(X^T Y), ``row_sums`` (X1)^T(Y1), ``column_sums`` (1^T X)(1^T Y)^T and
``total`` 1^T X 1.

>>> import sympy as sp
>>> L = sp.Symbol("L", positive=True)
>>> c1, cG = sp.symbols("c1 cG")
>>> A = Pattern({"uniform": c1, "shift": cG})
>>> sp.expand(frobenius(A, A, L, "cyclic"))
L*cG**2 + c1**2 + 2*c1*cG
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import sympy as sp

BASIS = ("uniform", "shift", "identity")
"""uniform = J/L (uniform pooling), shift = S (copy the previous token), identity = I (attend to the
token itself; a competitor of the copy pattern once tokens are correlated)."""


def shift_entries(L, shift: str) -> sp.Expr:
    """Number of ones of the shift matrix: L (cyclic) or L - 1 (open)."""
    if shift == "cyclic":
        return L
    if shift == "open":
        return L - 1
    raise ValueError(f"unknown shift {shift!r}")


@dataclass(frozen=True)
class Pattern:
    """A linear combination of the basis patterns (missing names have coefficient 0)."""

    coefficients: Mapping[str, sp.Expr] = field(default_factory=dict)

    def coefficient(self, name: str) -> sp.Expr:
        return sp.sympify(self.coefficients.get(name, 0))


SHIFT = Pattern({"shift": sp.Integer(1)})
UNIFORM = Pattern({"uniform": sp.Integer(1)})


def _basis_frobenius(x: str, y: str, L, nS) -> sp.Expr:
    table: dict[tuple[str, ...], sp.Expr] = {("uniform", "uniform"): sp.Integer(1), ("uniform", "shift"): nS / L, ("shift", "shift"): nS,
                                             ("uniform", "identity"): sp.Integer(1), ("shift", "identity"): sp.Integer(0),
                                             ("identity", "identity"): L}
    return table[tuple(sorted((x, y), key=BASIS.index))]


def _basis_sums(x: str, y: str, L, nS) -> sp.Expr:
    """(X1)^T (Y1) for basis patterns; equal to the column-sum product by the 1 <-> 1^T symmetry."""
    table: dict[tuple[str, ...], sp.Expr] = {("uniform", "uniform"): L, ("uniform", "shift"): nS, ("shift", "shift"): nS,
                                             ("uniform", "identity"): L, ("shift", "identity"): nS, ("identity", "identity"): L}
    return table[tuple(sorted((x, y), key=BASIS.index))]


def _bilinear(X: Pattern, Y: Pattern, basis_form, L, shift: str) -> sp.Expr:
    nS = shift_entries(L, shift)
    return sp.Add(*(
        X.coefficient(x) * Y.coefficient(y) * basis_form(x, y, L, nS) for x in BASIS for y in BASIS
    ))


def frobenius(X: Pattern, Y: Pattern, L, shift: str) -> sp.Expr:
    """tr(X^T Y)."""
    return _bilinear(X, Y, _basis_frobenius, L, shift)


def row_sums(X: Pattern, Y: Pattern, L, shift: str) -> sp.Expr:
    """(X 1)^T (Y 1)."""
    return _bilinear(X, Y, _basis_sums, L, shift)


def column_sums(X: Pattern, Y: Pattern, L, shift: str) -> sp.Expr:
    """(1^T X)(1^T Y)^T."""
    return _bilinear(X, Y, _basis_sums, L, shift)


def total(X: Pattern, L, shift: str) -> sp.Expr:
    """1^T X 1."""
    nS = shift_entries(L, shift)
    return X.coefficient("uniform") * L + X.coefficient("shift") * nS + X.coefficient("identity") * L


def attention_invariants(A: Pattern, L, shift: str) -> dict[str, sp.Expr]:
    r"""The four scalars the population action depends on.

    :math:`q = \|A\|_F^2`, :math:`m = \operatorname{tr}(A^T S)`, :math:`r = \|A\mathbf 1\|^2`,
    :math:`n = (A\mathbf 1)^T (S \mathbf 1)`.
    """
    return {
        "q": sp.expand(frobenius(A, A, L, shift)),
        "m": sp.expand(frobenius(A, SHIFT, L, shift)),
        "r": sp.expand(row_sums(A, A, L, shift)),
        "n": sp.expand(row_sums(A, SHIFT, L, shift)),
    }


def two_sided_quadratic_form(A: Pattern, kappa, L, shift: str) -> sp.Expr:
    r""":math:`\operatorname{tr}(A^T K A K)` with :math:`K = I + \kappa J`.

    Expanding :math:`K` gives :math:`\|A\|^2 + \kappa\|A\mathbf 1\|^2 + \kappa\|\mathbf 1^T A\|^2
    + \kappa^2 (\mathbf 1^T A \mathbf 1)^2`.
    """
    return sp.expand(
        frobenius(A, A, L, shift)
        + kappa * row_sums(A, A, L, shift)
        + kappa * column_sums(A, A, L, shift)
        + kappa**2 * total(A, L, shift) ** 2
    )
