r"""The copy-head model: task, architectures and the scales every convention fixes.

Task.  P sequences of L tokens, each token uniform on V values and one-hot, i.i.d.; the
target at position l is the token at l - 1 (Y = S X with the cyclic or open shift S); raw
or centred (:math:`Y = S(X - \mathbf 1\mathbf 1^T/V)`) targets.

Network.  One attention layer, one head: F = A X W with W (V x V) the readout,
A = G / L^k (linear attention; k = 1 - r/2 for ``"matched"``, 1 for ``"G/L"``) or A = softmax_row(G).

- Architecture M: G (L x L) free positional logits, :math:`G_{ij}\sim\mathcal N(0,\sigma^2)`.
- Architecture T: :math:`z_\ell = (x_\ell; e_\ell)\in\mathbb R^{V+L}`,
  :math:`G_{\ell\ell'} = z_\ell^T W_{QK} z_{\ell'}`, entries of :math:`W_{QK}\sim\mathcal N(0,\sigma^2)`.

Priors :math:`\sigma^2 = \sigma_G^2 L^{-a}`, :math:`W_{uv}\sim\mathcal N(0,\lambda)` with
:math:`\lambda = \sigma_W^2 V^{-c} L^{-r}`; Gibbs likelihood
:math:`\exp[-\tfrac\beta2\sum_\mu\|Y^\mu - A^\mu X^\mu W\|_F^2]`, :math:`\beta = \beta_0 L^{-d}V^{-e}`.

>>> from emergence.theory.copy_head.conventions import Convention
>>> convention_scales(Convention())
{'sigma2': 1, 'lam': 1/L, 'beta': 1/L}
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from emergence.theory.copy_head.conventions import Convention
from emergence.theory.copy_head.symbols import L, V, a, beta0, c, d, e, r_W, sigma_G2, sigma_W2

ARCHITECTURES = ("T", "M")
ATTENTIONS = ("linear", "softmax")

SCALE_LAWS: dict[str, sp.Expr] = {
    "sigma2": sigma_G2 * L ** (-a),
    "lam": sigma_W2 * V ** (-c) * L ** (-r_W),
    "beta": beta0 * L ** (-d) * V ** (-e),
}
"""Entry variance of the attention weight, readout prior variance, inverse temperature."""


def _exact_if_simple(value: float) -> sp.Expr:
    """A Rational when the float is one with denominator <= 1000 (1.0 -> 1, 0.5 -> 1/2), else a Float.

    Exact rationals with huge denominators would make SymPy attempt exact roots such as 96**(p/2**52).
    """
    fraction = Fraction(value).limit_denominator(1000)
    if abs(float(fraction) - value) <= 1e-12 * max(1.0, abs(value)):
        return sp.Rational(fraction.numerator, fraction.denominator)
    return sp.Float(value)


def convention_scales(convention: Convention) -> dict[str, sp.Expr]:
    """The three scale laws with the convention's numbers substituted (symbolic in L, V)."""
    numbers = {
        sigma_G2: convention.sigma_G2, a: convention.a, sigma_W2: convention.sigma_W2,
        c: convention.c, r_W: convention.r, beta0: convention.beta0, d: convention.d, e: convention.e,
    }
    values = {symbol: _exact_if_simple(value) for symbol, value in numbers.items()}
    return {name: law.subs(values) for name, law in SCALE_LAWS.items()}
