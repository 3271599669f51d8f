r"""Compiled (Numba) pair passes of the basis statistics: each pass one fused loop over the causal pairs.

The same sums as the NumPy reference (:mod:`emergence.numerics.leading_terms.basis_statistics`),
for windows x_1..x_T (inputs) and y_t = x_{t+1} (targets), N windows, 1-based positions:

.. math::

    C[y_t, x_\tau] \mathrel{+}= \frac{1}{tNT}\quad(\tau\le t),\qquad
    \bar\Phi = C - \tfrac1V\mathbf 1 m^\top,\ m = \mathbf 1^\top C,

    M_{t\tau} = \bar G[y_t, x_\tau],\quad
    Q_{t\tau} = \tfrac1t\big(M_{t\tau} - \tfrac1t\textstyle\sum_{k\le t} M_{tk}\big),\quad
    \bar Q[x_t, x_\tau] \mathrel{+}= \frac{Q_{t\tau}}{NT},\quad
    \Delta_{t-\tau} \mathrel{+}= \frac{Q_{t\tau}}{NT}.

\bar G needs \bar\Phi, so there are two passes (context, then key-query and positional); each
is one loop over the pairs that builds no key or weight arrays (the NumPy path materialises
keys, weights and gathered scores per chunk, about 16 ns per pair).  Cache locality: for a
fixed query row t every pair of pass 1 writes row y_t of C, and every pair of pass 2 reads row
y_t of \bar G and writes row x_t of \bar Q, so each inner loop touches one V-row (24 kB at
V = 3000) instead of scattering into the whole V x V table.

Numba is the optional extra ``fast`` (``pip install 'emergence[fast]'``); without it
:func:`compiled_pair_pass_available` is False and the NumPy passes run.  Set
``EMERGENCE_PAIR_PASS=numpy`` to force the reference path.

>>> import numpy as np
>>> from emergence.numerics.leading_terms.basis_statistics import basis_statistics
>>> windows = np.random.default_rng(0).integers(0, 5, size=(3, 9))
>>> reference = basis_statistics(windows, 5, pair_pass="numpy")
>>> fast = basis_statistics(windows, 5)  # compiled when Numba is installed
>>> bool(abs(fast.key_query - reference.key_query).max() < 1e-15)
True
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np

from emergence.base.errors import BackendUnavailableError

PAIR_PASS_ENVIRONMENT = "EMERGENCE_PAIR_PASS"
"""Environment variable: ``numpy`` forces the reference passes, ``compiled`` or unset uses Numba when installed."""

PAIR_PASS_NAMES = ("auto", "numpy", "compiled")
"""``auto``: compiled where Numba is installed and the arrays are NumPy's, else the NumPy passes."""

_kernels = None


def compiled_pair_pass_available() -> bool:
    """Whether Numba is installed and the compiled passes are not switched off by the environment."""
    if os.environ.get(PAIR_PASS_ENVIRONMENT, "").lower() == "numpy":
        return False
    return importlib.util.find_spec("numba") is not None


def uses_compiled_pair_pass(pair_pass: str, xp) -> bool:
    """Whether ``basis_statistics`` runs the compiled passes for ``pair_pass`` on array module ``xp``.

    Raises :class:`BackendUnavailableError` for an unknown name, or for ``compiled`` without
    Numba or on a non-NumPy array module.
    """
    if pair_pass not in PAIR_PASS_NAMES:
        raise BackendUnavailableError(f"unknown pair pass {pair_pass!r}; choose one of {', '.join(PAIR_PASS_NAMES)}")
    on_numpy = xp is np
    if pair_pass == "compiled" and not (on_numpy and compiled_pair_pass_available()):
        raise BackendUnavailableError(
            "pair pass 'compiled' needs NumPy arrays and Numba (pip install 'emergence[fast]')"
        )
    return pair_pass != "numpy" and on_numpy and compiled_pair_pass_available()


def _compiled_kernels():
    """Compile the two loops on first use (cached on disk by Numba); returns (context, key_query)."""
    global _kernels
    if _kernels is not None:
        return _kernels
    import numba

    @numba.njit(cache=True, nogil=True)
    def context_pass(inputs, targets, context, weight_scale):
        count, length = inputs.shape
        for n in range(count):
            for t in range(length):
                row = targets[n, t]
                weight = weight_scale / (t + 1.0)
                for tau in range(t + 1):
                    context[row, inputs[n, tau]] += weight

    @numba.njit(cache=True, nogil=True)
    def key_query_pass(inputs, targets, composed, key_query, positional, weight_scale):
        count, length = inputs.shape
        scores = np.empty(length)
        for n in range(count):
            for t in range(length):
                source = targets[n, t]
                destination = inputs[n, t]
                total = 0.0
                for tau in range(t + 1):
                    score = composed[source, inputs[n, tau]]
                    scores[tau] = score
                    total += score
                inverse = 1.0 / (t + 1.0)
                mean = total * inverse
                weight = weight_scale * inverse
                for tau in range(t + 1):
                    applied = (scores[tau] - mean) * weight
                    key_query[destination, inputs[n, tau]] += applied
                    positional[t - tau] += applied

    _kernels = (context_pass, key_query_pass)
    return _kernels


def compiled_context(inputs, targets, positions: int, vocab_size: int):
    r"""Pass 1: \bar\Phi (V x V) from ``inputs`` x and ``targets`` y (N, T) int64, NT = ``positions``."""
    context_pass, _ = _compiled_kernels()
    context = np.zeros((vocab_size, vocab_size))
    context_pass(np.ascontiguousarray(inputs), np.ascontiguousarray(targets), context, 1.0 / positions)
    context -= context.sum(axis=0)[None, :] / vocab_size
    return context


def compiled_key_query_and_positional(inputs, targets, composed, positions: int):
    r"""Pass 2: (\bar Q (V x V), \Delta (T,)) from x, y (N, T) and \bar G (V x V)."""
    _, key_query_pass = _compiled_kernels()
    vocab_size, context_length = composed.shape[0], inputs.shape[1]
    key_query = np.zeros((vocab_size, vocab_size))
    positional = np.zeros(context_length)
    key_query_pass(
        np.ascontiguousarray(inputs),
        np.ascontiguousarray(targets),
        np.ascontiguousarray(composed),
        key_query,
        positional,
        1.0 / positions,
    )
    return key_query, positional
