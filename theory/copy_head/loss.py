r"""Step 6: predicted train and test loss from the order parameters.

The posterior mean of the readout given the data is
:math:`\bar W = \varepsilon(I + \varepsilon C)^{-1}B` (:math:`\varepsilon = \beta\lambda`, the
Gaussian integral of step 1).  At the population level (step 2) :math:`C = PC_1`,
:math:`B = PB_1`, so the expected squared error per sequence on fresh data is

.. math:: E_{\rm test} = \operatorname{tr}D_1 - 2\operatorname{tr}(\bar W B_1) + \operatorname{tr}(\bar W C_1 \bar W),

evaluated in the token algebra.  The training error of :math:`\bar W` coincides with it at
the population level (the generalisation gap is a fluctuation effect of order V^2/(PL),
dropped with step 2).  As :math:`P\to\infty`, :math:`\bar W \to C_1^{-1}B_1` and

.. math:: E_{\rm test}\to L(1-\tfrac1V)\Big(1 - \frac{m^2}{qL}\Big) + \frac1V\Big(L - \frac{n^2}{r}\Big)

(raw targets, cyclic shift).  Losses below are per position (divided by L).
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.order_parameters import linear_pattern
from emergence.theory.copy_head.patterns import attention_invariants
from emergence.theory.copy_head.population import population_moments
from emergence.theory.copy_head.softmax import softmax_pattern
from emergence.theory.copy_head.symbols import L, P, V, beta, lam, m, n, q, r
from emergence.theory.copy_head.token_algebra import TokenMatrix


def _squared_error(moments: dict[str, TokenMatrix], readout: TokenMatrix) -> sp.Expr:
    C1, B1, D1 = moments["C"], moments["B"], moments["D"]
    return D1.trace(V) - 2 * (readout * B1).trace(V) + (readout * C1 * readout).trace(V)


@lru_cache(maxsize=None)
def posterior_mean_loss(shift: str = "cyclic", targets: str = "raw") -> sp.Expr:
    """Per-position squared error of the posterior-mean readout, in q, m, r, n, P, beta, lam."""
    moments = population_moments(shift, targets)
    epsilon = beta * lam
    readout = (TokenMatrix.identity() + moments["C"] * (epsilon * P)).inverse() * moments["B"] * (epsilon * P)
    return _squared_error(moments, readout) / L


@lru_cache(maxsize=None)
def infinite_data_loss(shift: str = "cyclic", targets: str = "raw") -> sp.Expr:
    r"""Per-position test loss with the optimal readout :math:`C_1^{-1}B_1` (the P -> oo limit)."""
    moments = population_moments(shift, targets)
    readout = moments["C"].inverse() * moments["B"]
    return sp.expand(sp.simplify(_squared_error(moments, readout))) / L


def _on_pattern(expression: sp.Expr, pattern) -> sp.Expr:
    invariants = attention_invariants(pattern, L, "cyclic")
    return expression.subs({q: sp.factor(invariants["q"]), m: sp.factor(invariants["m"]),
                            r: sp.factor(invariants["r"]), n: sp.factor(invariants["n"])},
                           simultaneous=True)


@lru_cache(maxsize=None)
def linear_losses() -> dict[str, sp.Expr]:
    """Per-position losses of A = c1 J/L + cG S: ``infinite_data`` and ``posterior_mean`` (finite P)."""
    return {
        "infinite_data": sp.simplify(_on_pattern(infinite_data_loss(), linear_pattern())),
        "posterior_mean": _on_pattern(posterior_mean_loss(), linear_pattern()),
    }


@lru_cache(maxsize=None)
def softmax_losses() -> dict[str, sp.Expr]:
    """Per-position losses of the softmax pattern with weight aG on the previous token."""
    return {
        "infinite_data": sp.simplify(_on_pattern(infinite_data_loss(), softmax_pattern())),
        "posterior_mean": _on_pattern(posterior_mean_loss(), softmax_pattern()),
    }
