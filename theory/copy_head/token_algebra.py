r"""The algebra of V x V token matrices spanned by I and J = 11^T.

Every V x V matrix the copy-head derivation meets (population moments of one-hot tokens,
the readout Gram matrices C, B, D) lies in span{I, J}.  In the orthogonal projector basis
:math:`\Pi_\perp = I - J/V` (rank V - 1) and :math:`\Pi_\parallel = J/V` (rank 1) the
algebra is diagonal, so products, inverses, traces and determinants act per component:

.. math:: M = \mu_\perp \Pi_\perp + \mu_\parallel \Pi_\parallel,\quad
   \operatorname{tr} M = (V-1)\mu_\perp + \mu_\parallel,\quad
   \ln\det M = (V-1)\ln\mu_\perp + \ln\mu_\parallel .

>>> import sympy as sp
>>> V = sp.Symbol("V", positive=True)
>>> ones = TokenMatrix.ones(V)
>>> (ones * ones).parallel == (V * ones).parallel
True
>>> (TokenMatrix.identity() + ones).inverse().perp
1
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp


@dataclass(frozen=True)
class TokenMatrix:
    r""":math:`\mu_\perp \Pi_\perp + \mu_\parallel \Pi_\parallel` (symmetric, V x V)."""

    perp: sp.Expr
    parallel: sp.Expr

    @classmethod
    def identity(cls) -> "TokenMatrix":
        """I = Pi_perp + Pi_par."""
        return cls(sp.Integer(1), sp.Integer(1))

    @classmethod
    def ones(cls, V) -> "TokenMatrix":
        """J = 11^T = V Pi_par."""
        return cls(sp.Integer(0), V)

    @classmethod
    def from_identity_and_ones(cls, alpha, gamma, V) -> "TokenMatrix":
        """alpha I + gamma J."""
        return cls.identity() * alpha + cls.ones(V) * gamma

    def __add__(self, other: "TokenMatrix") -> "TokenMatrix":
        return TokenMatrix(self.perp + other.perp, self.parallel + other.parallel)

    def __sub__(self, other: "TokenMatrix") -> "TokenMatrix":
        return TokenMatrix(self.perp - other.perp, self.parallel - other.parallel)

    def __mul__(self, other) -> "TokenMatrix":
        if isinstance(other, TokenMatrix):
            return TokenMatrix(self.perp * other.perp, self.parallel * other.parallel)
        return TokenMatrix(self.perp * other, self.parallel * other)

    __rmul__ = __mul__

    def inverse(self) -> "TokenMatrix":
        return TokenMatrix(1 / self.perp, 1 / self.parallel)

    def trace(self, V) -> sp.Expr:
        return (V - 1) * self.perp + self.parallel

    def logdet(self, V) -> sp.Expr:
        return (V - 1) * sp.log(self.perp) + sp.log(self.parallel)

    def identity_and_ones(self, V) -> tuple[sp.Expr, sp.Expr]:
        """(alpha, gamma) with self = alpha I + gamma J."""
        return sp.simplify(self.perp), sp.simplify((self.parallel - self.perp) / V)

    def simplified(self) -> "TokenMatrix":
        return TokenMatrix(sp.simplify(self.perp), sp.simplify(self.parallel))
