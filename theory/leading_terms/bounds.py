r"""Error bounds and validity window of Theorem 4.1 (Im et al., arXiv 2601.19208).

These are *quoted* from the theorem, not derived here: the proof bounds every
higher-order term of the gradient expansion, which this engine does not redo.  What is
derived (the leading coefficients) lives in :mod:`emergence.theory.leading_terms.recursion`.

Frobenius-norm bounds on (trained weight - leading term) after s steps at rate \eta, in a
model with T positions and L layers:

.. math::

    \|W_O - a_s\bar B\| \le 3 s^2\eta^2,\quad
    \|V^{(l)} - b_s\bar\Phi^\top\bar B^\top\| \le 12 s^3\eta^3,\quad
    \|W^{(l)} - c_s\bar Q\|,\ \|P^{(l)} - c_s\Delta\| \le 13 s^5\eta^5 T,

valid for :math:`s \le \eta^{-1}\min(5/(8\sqrt T),\ 1/(12L))` when L <= sqrt(T)/4,
T >= 60 and V >= 500.  The one-layer variant has constants 3, 4, 6 and the window
:math:`s \le \eta^{-1}\,3/(8T^{3/8})`.

>>> multi_layer_error_bounds()["key_query"]
13*T*eta**5*s**5
>>> step_limit()
Min(5/(8*sqrt(T)), 1/(12*layers))/eta
"""

from __future__ import annotations

import sympy as sp

from emergence.theory.leading_terms.recursion import eta, s

T = sp.Symbol("T", positive=True, integer=True)
"""Sequence length (number of positions)."""
layers = sp.Symbol("layers", positive=True, integer=True)
"""Number of attention layers L."""

MINIMUM_SEQUENCE_LENGTH = 60
"""The theorem assumes T >= 60."""
MINIMUM_VOCABULARY = 500
"""The theorem assumes V >= 500."""


def multi_layer_error_bounds() -> dict[str, sp.Expr]:
    """Frobenius error bounds of Theorem 4.1 (L layers), keyed like the step coefficients."""
    return {
        "output": 3 * s**2 * eta**2,
        "value": 12 * s**3 * eta**3,
        "key_query": 13 * s**5 * eta**5 * T,
    }


def one_layer_error_bounds() -> dict[str, sp.Expr]:
    """Frobenius error bounds of the one-layer variant of Theorem 4.1."""
    return {
        "output": 3 * s**2 * eta**2,
        "value": 4 * s**3 * eta**3,
        "key_query": 6 * s**5 * eta**5 * T,
    }


def step_limit() -> sp.Expr:
    r"""Largest step count of the L-layer window, :math:`\eta^{-1}\min(5/(8\sqrt T), 1/(12L))`."""
    return sp.Min(sp.Rational(5, 8) / sp.sqrt(T), 1 / (12 * layers)) / eta


def one_layer_step_limit() -> sp.Expr:
    r"""Largest step count of the one-layer window, :math:`\eta^{-1}\,3/(8T^{3/8})`."""
    return sp.Rational(3, 8) / T ** sp.Rational(3, 8) / eta


def layer_limit() -> sp.Expr:
    r"""Largest layer count the theorem allows, :math:`\sqrt T/4`."""
    return sp.sqrt(T) / 4
