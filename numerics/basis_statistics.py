r"""Corpus statistics ("basis functions") of the leading-term theory, in O(N T^2).

For N windows of T + 1 tokens (inputs x_1..x_T one-hot rows of X, targets y_t = x_{t+1}
rows of Y), U = 1/V, residual R = Y - U and uniform causal attention (A_0)_{t\tau} = 1/t
for \tau \le t (1-based):

.. math::

    \bar B = \frac{1}{NT}\sum X^\top (Y - U),\qquad
    \Sigma_{\bar B} = \bar B^\top\bar B,\qquad
    \bar\Phi = \frac{1}{NT}\sum (Y - U)^\top A_0 X,\qquad
    \bar G = \Sigma_{\bar B}\bar\Phi = \bar B^\top(\bar B\bar\Phi),

    M_{t\tau} = r_t^\top\bar G x_\tau,\quad
    Q_{t\tau} = \tfrac1t\big(M_{t\tau} - \tfrac1t\textstyle\sum_{k\le t} M_{tk}\big)\ (\tau\le t),\quad
    \bar Q = \frac{1}{NT}\sum X^\top Q X,\quad
    \Delta_d = \frac{1}{NT}\sum\sum_t Q_{t,t-d}.

Index conventions: \bar B[current, next]; \bar\Phi[target, prefix token];
\bar Q[query token x_t, key token x_\tau]; \Delta[lag d = t - \tau], d = 0..T-1.

The paper builds a T x T x T softmax-Jacobian tensor per sequence for Q (O(N T^3));
here M_{t\tau} = \bar G[y_t, x_\tau] - \mathrm{mean}_k \bar G[k, x_\tau] is gathered
directly, the Jacobian is applied as a row-centring, and everything is scattered with
``bincount``: two chunked passes of O(N T^2) time and O(chunk T^2 + V^2) memory
(:mod:`numerics.basis_reference` is the literal construction, for tests).  \bar G is
formed as \bar B^\top(\bar B\bar\Phi), never through \Sigma_{\bar B}, and with
\bar B = S - u\mathbf 1^\top (S the sparse bigram counts / NT, at most NT entries;
u_j = \sum_k S_{jk}/V) both products cost O(N T V + V^2) instead of O(V^3).

Works with NumPy (default) and CuPy arrays (``xp=array_module("cupy")``).

>>> import numpy as np
>>> stats = basis_statistics(np.array([[0, 1, 0, 1], [1, 1, 0, 0]]), 2)
>>> stats.bigram
array([[-0.08333333,  0.08333333],
       [ 0.08333333, -0.08333333]])
>>> float(abs(stats.key_query.sum(axis=1)).max()) < 1e-15
True
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from theory.errors import EmergenceError, InvalidSizeError

DENSE_VOCABULARY_ARRAYS = 10
"""V x V float64 arrays alive at the peak (statistics, products, bincount buffers); the
benchmark measured a peak of 670 MB = 9.3 such arrays at V = 3000."""
DEFAULT_CHUNK_ELEMENTS = 1 << 21
"""Sequences per chunk are chosen so that chunk * T^2 stays below this."""


@dataclass(frozen=True)
class BasisStatistics:
    """\\bar B, \\Sigma_{\\bar B} (``None`` when skipped), \\bar\\Phi, \\bar G, \\bar Q (V x V) and \\Delta (T,)."""

    bigram: Any
    interchangeability: Any
    context: Any
    composed: Any
    key_query: Any
    positional: Any
    num_sequences: int
    context_length: int

    @property
    def value_feature(self):
        """\\bar\\Phi^\\top\\bar B^\\top = (\\bar B\\bar\\Phi)^\\top, what V^{(l)} becomes (V x V)."""
        return (self.bigram @ self.context).T


def dense_statistics_bytes(vocab_size: int) -> int:
    """Bytes of the dense V x V float64 arrays the statistics need at their peak."""
    return DENSE_VOCABULARY_ARRAYS * 8 * vocab_size * vocab_size


def available_memory_bytes() -> int:
    """Memory available to this process now (``MemAvailable`` on Linux, else physical memory)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def require_dense_memory(vocab_size: int, limit_bytes: int | None = None) -> None:
    """Raise :class:`InvalidSizeError` before allocating if the V x V arrays would not fit."""
    needed = dense_statistics_bytes(vocab_size)
    limit = available_memory_bytes() if limit_bytes is None else limit_bytes
    if needed > limit:
        raise InvalidSizeError(
            f"vocabulary V={vocab_size} needs about {needed / 2**30:.1f} GiB for dense V x V "
            f"statistics but only {limit / 2**30:.1f} GiB is available; choose a smaller --vocab"
        )


def _validated_tokens(sequences, vocab_size: int, xp):
    tokens = xp.asarray(sequences)
    if tokens.ndim != 2 or tokens.shape[0] < 1 or tokens.shape[1] < 2:
        raise InvalidSizeError(
            f"token windows must have shape (N >= 1, T + 1 >= 2), got {tuple(tokens.shape)}"
        )
    if vocab_size < 1:
        raise InvalidSizeError(f"vocabulary size must be positive, got {vocab_size}")
    if int(tokens.min()) < 0 or int(tokens.max()) >= vocab_size:
        raise EmergenceError(f"token ids must lie in 0..{vocab_size - 1}")
    return tokens.astype(xp.int64)


def _sparse_module(xp):
    """``scipy.sparse`` for NumPy, ``cupyx.scipy.sparse`` for CuPy."""
    if xp.__name__.startswith("cupy"):
        import cupyx.scipy.sparse as sparse
    else:
        import scipy.sparse as sparse
    return sparse


def _chunks(count: int, context_length: int, chunk_elements: int):
    step = max(1, chunk_elements // (context_length * context_length))
    for start in range(0, count, step):
        yield slice(start, min(start + step, count))


def basis_statistics(
    sequences,
    vocab_size: int,
    *,
    xp=None,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
    include_interchangeability: bool = True,
    memory_limit_bytes: int | None = None,
) -> BasisStatistics:
    """All statistics of ``sequences`` (N, T + 1) token ids in ``0..vocab_size-1``.

    ``xp`` is the array module to compute in (NumPy when omitted; pass CuPy for a GPU);
    results are arrays of that module.  ``include_interchangeability=False`` skips
    \\Sigma_{\\bar B}, which nothing else needs.  Raises :class:`InvalidSizeError` when the
    dense V x V arrays would exceed ``memory_limit_bytes`` (default: available memory).
    """
    xp = np if xp is None else xp
    require_dense_memory(vocab_size, memory_limit_bytes)
    tokens = _validated_tokens(sequences, vocab_size, xp)
    count, context_length = tokens.shape[0], tokens.shape[1] - 1
    V, T = vocab_size, context_length
    positions = count * T
    inverse_position = 1.0 / xp.arange(1, T + 1, dtype=xp.float64)
    rows, columns = xp.tril_indices(T)
    pair_weights = inverse_position[rows]
    # sum_{t >= tau} 1/t: how much one occurrence at tau contributes to sum_t c_t
    prefix_weight = xp.cumsum(inverse_position[::-1])[::-1]

    context_counts = xp.zeros(V * V, dtype=xp.float64)
    context_marginal = xp.zeros(V, dtype=xp.float64)
    for part in _chunks(count, T, chunk_elements):
        x, y = tokens[part, :-1], tokens[part, 1:]
        keys = y[:, rows] * V + x[:, columns]
        weights = xp.broadcast_to(pair_weights, keys.shape)
        context_counts += xp.bincount(keys.ravel(), weights=weights.ravel(), minlength=V * V)
        context_marginal += xp.bincount(
            x.ravel(), weights=xp.broadcast_to(prefix_weight, x.shape).ravel(), minlength=V
        )
    # duplicate (current, next) pairs are summed when the COO matrix becomes CSR
    counts = _sparse_module(xp).coo_matrix(
        (xp.full(positions, 1.0 / positions), (tokens[:, :-1].ravel(), tokens[:, 1:].ravel())), shape=(V, V)
    ).tocsr()
    row_mass = xp.asarray(counts.sum(axis=1)).ravel() / V
    bigram = counts.toarray()
    bigram -= row_mass[:, None]
    context = context_counts.reshape(V, V)
    context -= context_marginal[None, :] / V
    context /= positions
    # B = S - u 1^T with S sparse (at most N T entries), so G = B^T (B Phi) costs O(N T V + V^2):
    # B Phi = S Phi (the columns of Phi sum to 0) and B^T K = S^T K - 1 (u^T K)
    bigram_context = counts @ context
    composed = counts.T @ bigram_context
    composed -= (row_mass @ bigram_context)[None, :]
    if include_interchangeability:
        # B^T B = S^T B - 1 (u^T B), symmetrised (equal in exact arithmetic)
        interchangeability = counts.T @ bigram
        interchangeability -= (row_mass @ bigram)[None, :]
        interchangeability = interchangeability + interchangeability.T
        interchangeability *= 0.5
    else:
        interchangeability = None

    # M_{t tau} = G[y_t, x_tau] - mean_k G[k, x_tau], over the causal pairs (t, tau <= t) only;
    # tril_indices lists the pairs row by row, so row t is the segment ends[t-1]+1 .. ends[t]
    shifted = (composed - composed.mean(axis=0)[None, :]).reshape(-1)
    row_ends = (xp.arange(1, T + 1) * xp.arange(2, T + 2)) // 2 - 1
    lag = rows - columns
    key_query = xp.zeros(V * V, dtype=xp.float64)
    positional_sum = xp.zeros(rows.shape[0], dtype=xp.float64)
    for part in _chunks(count, T, chunk_elements):
        x, y = tokens[part, :-1], tokens[part, 1:]
        query, key = x[:, rows], x[:, columns]
        scores = shifted[y[:, rows] * V + key]
        running = xp.cumsum(scores, axis=1)[:, row_ends]
        row_sums = xp.concatenate([running[:, :1], running[:, 1:] - running[:, :-1]], axis=1)
        jacobian_applied = (scores - (row_sums * inverse_position)[:, rows]) * pair_weights
        key_query += xp.bincount((query * V + key).ravel(), weights=jacobian_applied.ravel(), minlength=V * V)
        positional_sum += jacobian_applied.sum(axis=0)
    positional = xp.bincount(lag, weights=positional_sum, minlength=T)

    return BasisStatistics(
        bigram=bigram,
        interchangeability=interchangeability,
        context=context,
        composed=composed,
        key_query=(key_query / positions).reshape(V, V),
        positional=positional / positions,
        num_sequences=int(count),
        context_length=int(T),
    )
