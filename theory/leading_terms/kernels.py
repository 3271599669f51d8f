"""Generated kernels of the leading-term theory: coefficients, error bounds, window.

``leading_coefficients(s, eta)`` gives the multiples of B̄, Φ̄ᵀB̄ᵀ and (Q̄, Δ) in the
predicted weights; ``leading_error_bounds(s, eta, T)`` and
``one_layer_error_bounds(s, eta, T)`` the theorem's Frobenius bounds;
``leading_step_limit(eta, T, layers)`` and ``one_layer_step_limit(eta, T)`` the largest
step count of the validity window.

>>> [k.name for k in kernel_modules()[0].kernels]
['leading_coefficients', 'leading_error_bounds', 'one_layer_error_bounds', 'leading_step_limit', 'one_layer_step_limit']
"""

from __future__ import annotations

from emergence.theory.codegen import DomainKind, Kernel, KernelModule
from emergence.theory.leading_terms.bounds import (
    T,
    layers,
    multi_layer_error_bounds,
    one_layer_error_bounds,
    one_layer_step_limit,
    step_limit,
)
from emergence.theory.leading_terms.recursion import eta, s, step_coefficients

_DOMAIN: dict[str, tuple[float, float, DomainKind]] = {
    "s": (1.0, 200.0, "int"),
    "eta": (1e-4, 1.0, "log"),
    "T": (60.0, 2048.0, "int"),
    "layers": (1.0, 8.0, "int"),
}


def _named(expressions: dict[str, object], suffix: str) -> tuple[tuple[str, object], ...]:
    return tuple((f"{name}_{suffix}", expressions[name]) for name in ("output", "value", "key_query"))


def kernel_modules() -> list[KernelModule]:
    """The one kernel module ``leading_terms`` with coefficients, bounds and windows."""
    coefficients = step_coefficients()
    kernels = (
        Kernel(
            "leading_coefficients",
            (s, eta),
            _named(coefficients, "coefficient"),
            "Multiples of B̄ (W_O), Φ̄ᵀB̄ᵀ (V) and Q̄, Δ (W, P) after s steps at rate eta.",
            {name: _DOMAIN[name] for name in ("s", "eta")},
        ),
        Kernel(
            "leading_error_bounds",
            (s, eta, T),
            _named(multi_layer_error_bounds(), "bound"),
            "Theorem 4.1 Frobenius error bounds (L layers; the key-query bound also bounds P).",
            {name: _DOMAIN[name] for name in ("s", "eta", "T")},
        ),
        Kernel(
            "one_layer_error_bounds",
            (s, eta, T),
            _named(one_layer_error_bounds(), "bound"),
            "Theorem 4.1 Frobenius error bounds of the one-layer variant.",
            {name: _DOMAIN[name] for name in ("s", "eta", "T")},
        ),
        Kernel(
            "leading_step_limit",
            (eta, T, layers),
            (("step_limit", step_limit()),),
            "Largest step count s of the L-layer validity window of Theorem 4.1.",
            {name: _DOMAIN[name] for name in ("eta", "T", "layers")},
        ),
        Kernel(
            "one_layer_step_limit",
            (eta, T),
            (("step_limit", one_layer_step_limit()),),
            "Largest step count s of the one-layer validity window of Theorem 4.1.",
            {name: _DOMAIN[name] for name in ("eta", "T")},
        ),
    )
    return [KernelModule("leading_terms", "emergence.theory.leading_terms", kernels)]
