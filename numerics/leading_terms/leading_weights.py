r"""Predicted weights of Theorem 4.1: corpus statistics times the derived step coefficients.

After s steps of gradient descent at rate \eta from zero, every layer l has at leading order

.. math::

    W_O = a_s\bar B,\quad V^{(l)} = b_s\,\bar\Phi^\top\bar B^\top,\quad
    W^{(l)} = c_s\bar Q,\quad P^{(l)} = c_s\Delta,

with a_s, b_s, c_s from the generated kernel ``leading_coefficients`` (derived in
:mod:`emergence.theory.leading_terms.recursion`), Frobenius error bounds from
``leading_error_bounds`` (``one_layer_error_bounds`` for L = 1) and the window
s <= ``leading_step_limit`` (``one_layer_step_limit``), plus the size conditions
T >= 60, V >= 500 and L <= sqrt(T)/4 (Theorem 4.1's, quoted).  One layer is Theorem D.7,
which has its own window and constants and only the size condition T >= 3 (no condition
on V; L = 1 needs none), as read from the paper's appendix; our theory notes
(leading_terms.md) quote its window and bounds only.

>>> from emergence.numerics.leading_terms.basis_statistics import basis_statistics
>>> import numpy as np
>>> stats = basis_statistics(np.array([[0, 1, 0, 1, 1], [1, 1, 0, 0, 1]]), 2)
>>> weights = predicted_weights(stats, steps=3, lr=0.1, layers=2)
>>> weights["V_l"].shape, weights["P_l"].shape
((2, 2, 2), (2, 4))
>>> bool(np.allclose(weights["W_O"], 0.3 * stats.bigram))
True
"""

from __future__ import annotations

import math
from typing import Any

from emergence.numerics.backend import namespace_of
from emergence.numerics.leading_terms.basis_statistics import BasisStatistics
from emergence.numerics.kernels.leading_terms import (
    leading_coefficients,
    leading_error_bounds,
    leading_step_limit,
    one_layer_error_bounds,
    one_layer_step_limit,
)
from emergence.base.errors import InvalidSizeError
from emergence.base.limits import check_memory

COMPONENTS: tuple[str, ...] = ("W_O", "V", "W", "P")
"""Weight names: output, value, key-query, positional."""
MINIMUM_SEQUENCE_LENGTH = 60
MINIMUM_VOCABULARY = 500
ONE_LAYER_MINIMUM_SEQUENCE_LENGTH = 3


def _check(steps: int, lr: float, layers: int) -> None:
    if steps < 0:
        raise InvalidSizeError(f"number of steps must be >= 0, got {steps}")
    if not (lr > 0 and math.isfinite(lr)):
        raise InvalidSizeError(f"learning rate must be positive and finite, got {lr}")
    if layers < 1:
        raise InvalidSizeError(f"number of layers must be >= 1, got {layers}")


def step_coefficients(steps, lr, *, xp=None) -> dict[str, Any]:
    """a_s (W_O), b_s (V), c_s (W and P) from the generated kernel."""
    output, value, key_query = leading_coefficients(steps, lr, xp=xp)
    return {"W_O": output, "V": value, "W": key_query, "P": key_query}


def error_bounds(steps, lr, context_length: int, layers: int, *, xp=None) -> dict[str, Any]:
    """Theorem 4.1 Frobenius bounds per component (one-layer constants when L = 1)."""
    kernel = one_layer_error_bounds if layers == 1 else leading_error_bounds
    output, value, key_query = kernel(steps, lr, context_length, xp=xp)
    return {"W_O": output, "V": value, "W": key_query, "P": key_query}


def step_limit(lr: float, context_length: int, layers: int) -> float:
    """Largest s of the theorem's window (one-layer window when L = 1)."""
    if layers == 1:
        return float(one_layer_step_limit(lr, context_length))
    return float(leading_step_limit(lr, context_length, layers))


def size_conditions(vocab_size: int, context_length: int, layers: int) -> dict[str, bool]:
    """The theorem's conditions on sizes: T >= 60, V >= 500, L <= sqrt(T)/4; for L = 1 (Theorem D.7) T >= 3.

    >>> size_conditions(60, 16, 1)
    {'T_at_least_3': True}
    >>> size_conditions(60, 16, 2)["T_at_least_60"]
    False
    """
    if layers == 1:
        return {"T_at_least_3": context_length >= ONE_LAYER_MINIMUM_SEQUENCE_LENGTH}
    return {
        "T_at_least_60": context_length >= MINIMUM_SEQUENCE_LENGTH,
        "V_at_least_500": vocab_size >= MINIMUM_VOCABULARY,
        "layers_at_most_sqrt_T_over_4": layers <= math.sqrt(context_length) / 4,
    }


def within_step_window(steps: int, lr: float, context_length: int, layers: int) -> bool:
    """Whether s <= the step limit (the size conditions are reported separately)."""
    return steps <= step_limit(lr, context_length, layers)


def predicted_weights_bytes(stats: BasisStatistics, layers: int) -> float:
    """Bytes of :func:`predicted_weights`' arrays: ``W_O`` (V, V), ``V_l`` and ``W_l`` (L, V, V), ``P_l`` (L, T)."""
    V, T = stats.bigram.shape[0], stats.positional.shape[-1]
    return float(stats.bigram.dtype.itemsize) * (V * V + layers * (2.0 * V * V + T))


def predicted_weights(stats: BasisStatistics, steps: int, lr: float, layers: int) -> dict[str, Any]:
    """``W_O`` (V, V), ``V_l``, ``W_l`` (L, V, V) and ``P_l`` (L, T) after ``steps`` steps.

    Arrays are of the statistics' array module; every layer gets the same leading term.
    """
    _check(steps, lr, layers)
    check_memory(predicted_weights_bytes(stats, layers),
                 f"predict-weights with {layers} layers at V={stats.bigram.shape[0]}, T={stats.positional.shape[-1]}",
                 "use fewer --layers or a smaller --vocab")
    xp = namespace_of(stats.bigram)
    coefficients = {name: float(value) for name, value in step_coefficients(steps, lr, xp=xp).items()}
    per_layer = {
        "V_l": coefficients["V"] * stats.value_feature,
        "W_l": coefficients["W"] * stats.key_query,
        "P_l": coefficients["P"] * stats.positional,
    }
    weights = {"W_O": coefficients["W_O"] * stats.bigram}
    weights.update({name: xp.stack([array] * layers) for name, array in per_layer.items()})
    return weights
