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

The paper builds a T x T x T softmax-Jacobian tensor per sequence for Q (O(N T^3)); here
the Jacobian is applied as a row-centring and everything is scattered into flat V^2
accumulators (``add.at``) in two chunked passes over the causal pairs (t, \tau \le t), of
O(N T^2) time and O(chunk T^2 + V^2) memory (:mod:`emergence.numerics.leading_terms.basis_reference` is the
literal construction, for tests).  Both passes use the same flat keys y_t V + x_\tau (kept
from pass 1 when all windows fit in one chunk):

* pass 1 adds 1/(tNT) at [y_t, x_\tau]; the column sums m_v = \sum_{x_\tau = v}
  \sum_{t\ge\tau} 1/(tNT) of those counts need no pairs, so \bar\Phi starts as -m^\top/V
  in every row;
* pass 2 gathers M_{t\tau} = \bar G[y_t, x_\tau] (the rows of \bar B sum to zero, so
  \mathbf 1^\top\bar G = (\bar B\mathbf 1)^\top\bar B\bar\Phi = 0 and U\bar G = 0), takes the
  row sums \sum_{k\le t} M_{tk} with ``add.reduceat``, and adds Q_{t\tau}/NT at
  x_t V + x_\tau: for \tau < t that is the key y_{t-1} V + x_\tau of pair (t - 1, \tau), and the
  diagonal keys x_t V + x_t replace those of row T, which no pair (T + 1, \tau) needs.

\bar B = S - u\mathbf 1^\top, S the sparse bigram counts / NT (at most NT entries),
u_j = \sum_k S_{jk}/V.  With the successor overlap P = S^\top S, a = S^\top u and
c = u^\top u, \Sigma_{\bar B} = P - a\mathbf 1^\top - \mathbf 1 a^\top + c\,\mathbf 1\mathbf 1^\top
and, as the columns of \bar\Phi sum to zero, \bar G = P\bar\Phi - \mathbf 1(a^\top\bar\Phi)
= S^\top(S\bar\Phi) - \mathbf 1(a^\top\bar\Phi).  P has at most \sum_j n_j^2 entries (n_j those
of row j of S).  When that is small (at most 3 nnz(S) + 20 V), \bar G = P\bar\Phi -
\mathbf 1(a^\top\bar\Phi) and \Sigma_{\bar B} = P + h\mathbf 1^\top + \mathbf 1 h^\top with
h = c/2 - a (exactly symmetric), without a V x V temporary; otherwise \bar G goes through S
twice and \Sigma_{\bar B} = S^\top\bar B - \mathbf 1(a - c\mathbf 1)^\top, symmetrised.  Either
way O(N T V + V^2) instead of O(V^3).

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

from dataclasses import dataclass
from typing import Any

import numpy as np

from emergence.numerics.leading_terms.compiled_pair_pass import (
    compiled_context,
    compiled_key_query_and_positional,
    uses_compiled_pair_pass,
)
from emergence.base.errors import EmergenceError, InvalidSizeError
from emergence.base.limits import available_memory_bytes

DENSE_VOCABULARY_ARRAYS = 6
"""V x V float64 arrays alive at the peak (the five statistics, or before \\bar Q four of them
and a product temporary); tracemalloc measured a peak of 368 MB = 5.1 such arrays at V = 3000
(T = 200, N = 16 and N = 256, through P and through S)."""
DEFAULT_CHUNK_ELEMENTS = 1 << 18
"""On NumPy, sequences per chunk are chosen so that chunk * T^2 stays below this: a chunk's
pair arrays (8 bytes x chunk T(T+1)/2, about 1 MB) then stay in cache, which measured fastest."""
DEVICE_CHUNK_ELEMENTS = 1 << 21
"""The same bound on CuPy, where fewer, larger chunks mean fewer kernel launches."""


PAPER_SYMBOLS: dict[str, str] = {
    "B": "bigram", "Sigma": "interchangeability", "Phi": "context", "G": "composed", "Q": "key_query",
    "Delta": "positional",
}
"""The paper's symbol of each statistic -> its field of :class:`BasisStatistics` (the arrays of
``emergence basis`` are stored under the symbols)."""


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


def _chunks(count: int, context_length: int, chunk_elements: int) -> list[slice]:
    step = max(1, chunk_elements // (context_length * context_length))
    return [slice(start, min(start + step, count)) for start in range(0, count, step)]


@dataclass(frozen=True)
class _CausalPairs:
    """The T(T+1)/2 causal pairs (t, \\tau \\le t) of T positions, row by row (``tril_indices`` order).

    ``rows``, ``columns``: t - 1 and \\tau - 1 of each pair; ``row_starts``: where row t begins,
    t(t - 1)/2; ``inverse_position``: 1/t for t = 1..T.  ``query_source``: per pair position,
    the position whose Q goes to that position's key in pass 2, i.e. (t + 1, \\tau) for a pair
    (t, \\tau) with t < T (x_{t+1} = y_t), and (\\tau, \\tau) for the pairs (T, \\tau) of the last row,
    whose keys are replaced by the diagonal keys x_\\tau V + x_\\tau.
    """

    rows: Any
    columns: Any
    row_starts: Any
    inverse_position: Any
    query_source: Any


def _causal_pairs(context_length: int, xp) -> _CausalPairs:
    rows, columns = xp.tril_indices(context_length)
    position = xp.arange(context_length)
    row_starts = position * (position + 1) // 2
    before_last_row = xp.arange(rows.shape[0] - context_length)
    next_row_source = before_last_row + rows[: before_last_row.shape[0]] + 1
    query_source = xp.concatenate([next_row_source, row_starts + position])
    return _CausalPairs(rows, columns, row_starts, 1.0 / (position + 1.0), query_source)


def _pair_keys(inputs, scaled_targets, pairs: _CausalPairs, xp):
    """y_t V + x_\\tau, the flat index of [y_t, x_\\tau], for every causal pair (n, T(T+1)/2).

    ``inputs`` x (n, T) and ``scaled_targets`` y V (n, T), both C-contiguous; ``take`` keeps the
    result C-contiguous (NumPy's ``a[:, index]`` would not), so that ``ravel`` does not copy.
    """
    keys = xp.take(scaled_targets, pairs.rows, axis=1)
    keys += xp.take(inputs, pairs.columns, axis=1)
    return keys


def _context(inputs, scaled_targets, parts, pairs: _CausalPairs, positions: int, vocab_size: int, xp):
    """Pass 1: \\bar\\Phi = C - \\tfrac1V\\mathbf 1 m^\\top (V x V), and the pair keys of the last chunk.

    C[y_t, x_\\tau] sums 1/(tNT) over the causal pairs; its column sums
    m_v = \\sum_{x_\\tau = v}\\sum_{t\\ge\\tau} 1/(tNT) need no pairs, so \\bar\\Phi starts as -m^\\top/V
    in every row and the pairs are added onto it.
    """
    # sum_{t >= tau} 1/(t N T): what one occurrence at tau adds to its column
    suffix_weight = xp.cumsum(pairs.inverse_position[::-1])[::-1] / positions
    column_sums = xp.bincount(inputs.ravel(), weights=xp.tile(suffix_weight, inputs.shape[0]), minlength=vocab_size)
    context = xp.empty((vocab_size, vocab_size), dtype=xp.float64)
    context[...] = -column_sums / vocab_size
    flat_context = context.reshape(-1)
    widest = max(part.stop - part.start for part in parts)
    tiled_weights = xp.tile(pairs.inverse_position[pairs.rows] / positions, widest)
    for part in parts:
        keys = _pair_keys(inputs[part], scaled_targets[part], pairs, xp)
        xp.add.at(flat_context, keys.ravel(), tiled_weights[: keys.size])
    return context, keys


def _bigram(counts, row_mass, vocab_size: int, xp):
    """\\bar B = S - u\\mathbf 1^\\top (V x V): -u_j in row j, S's entries added onto it."""
    bigram = xp.empty((vocab_size, vocab_size), dtype=xp.float64)
    bigram[...] = -row_mass[:, None]
    entries = counts.tocoo()
    bigram[entries.row, entries.col] += entries.data
    return bigram


def _overlap_is_cheaper(counts, xp) -> bool:
    """Whether \\bar G and \\Sigma_{\\bar B} are cheaper through P = S^\\top S than through S, and as exact.

    Applying P costs at most \\sum_j n_j^2 V (n_j the entries of row j of S); going through S
    costs 3 nnz(S) V plus about twenty V x V passes (a temporary and the symmetrisation).  A
    full row of S (n_j = V) can make row j of \\bar B vanish, which P's formula only reaches by
    cancellation (\\Sigma_{\\bar B} = 0 would come out as round-off), so such counts go through S.
    """
    row_entries = xp.diff(counts.indptr).astype(xp.int64)
    vocab_size = counts.shape[0]
    if int(row_entries.max()) >= vocab_size:
        return False
    return int((row_entries * row_entries).sum()) <= 3 * counts.nnz + 20 * vocab_size


def _products_through_overlap(
    counts, row_mass, successor_mass, context, context_mass, include_interchangeability: bool, xp
):
    """(\\Sigma_{\\bar B} or ``None``, \\bar G) from the sparse successor overlap P = S^\\top S.

    \\bar G = P\\bar\\Phi - \\mathbf 1(a^\\top\\bar\\Phi) and
    \\Sigma_{\\bar B} = P + h\\mathbf 1^\\top + \\mathbf 1 h^\\top, with a = ``successor_mass`` = S^\\top u,
    a^\\top\\bar\\Phi = ``context_mass`` and h = u^\\top u/2 - a.
    """
    overlap = counts.T @ counts
    overlap = (overlap + overlap.T) * 0.5  # exactly symmetric; equal in exact arithmetic
    composed = overlap @ context
    composed -= context_mass[None, :]
    if not include_interchangeability:
        return None, composed
    half_offset = 0.5 * (row_mass @ row_mass) - successor_mass
    interchangeability = xp.add.outer(half_offset, half_offset)  # h_k + h_l = h_l + h_k exactly
    entries = overlap.tocoo()
    interchangeability[entries.row, entries.col] += entries.data
    return interchangeability, composed


def _composed_through_bigram(counts, context, context_mass):
    """\\bar G = S^\\top(S\\bar\\Phi) - \\mathbf 1(a^\\top\\bar\\Phi), a^\\top\\bar\\Phi = ``context_mass``."""
    composed = counts.T @ (counts @ context)
    composed -= context_mass[None, :]
    return composed


def _interchangeability_through_bigram(counts, row_mass, bigram, xp):
    """\\Sigma_{\\bar B} = S^\\top\\bar B - \\mathbf 1(u^\\top\\bar B), symmetrised (exactly 0 when \\bar B is)."""
    interchangeability = counts.T @ bigram
    interchangeability -= xp.einsum("k,kv->v", row_mass, bigram)[None, :]
    interchangeability = interchangeability + interchangeability.T
    interchangeability *= 0.5
    return interchangeability


def _bigram_products(counts, row_mass, bigram, context, include_interchangeability: bool, xp):
    """(\\Sigma_{\\bar B} or ``None``, \\bar G), through P = S^\\top S or through S, whichever is cheaper."""
    successor_mass = counts.T @ row_mass
    # a^T Phi by einsum, not BLAS: a threaded gemv leaves spinning threads that slow what follows
    context_mass = xp.einsum("k,kv->v", successor_mass, context)
    if _overlap_is_cheaper(counts, xp):
        return _products_through_overlap(
            counts, row_mass, successor_mass, context, context_mass, include_interchangeability, xp
        )
    composed = _composed_through_bigram(counts, context, context_mass)
    if not include_interchangeability:
        return None, composed
    return _interchangeability_through_bigram(counts, row_mass, bigram, xp), composed


def _applied_jacobian(scores, pairs: _CausalPairs, pair_weights, xp):
    """Q_{t\\tau}/NT = (M_{t\\tau} - \\tfrac1t\\sum_{k\\le t} M_{tk})/(tNT), in place of M (n, T(T+1)/2)."""
    row_means = xp.add.reduceat(scores, pairs.row_starts, axis=1)
    row_means *= pairs.inverse_position
    scores -= xp.take(row_means, pairs.rows, axis=1)
    scores *= pair_weights
    return scores


def _key_query_and_positional(
    inputs, scaled_targets, parts, pairs: _CausalPairs, positions: int, composed, last_keys, xp
):
    """Pass 2: \\bar Q (V x V) and \\Delta (T,); ``last_keys`` are pass 1's keys of the last chunk."""
    vocab_size, context_length = composed.shape[0], inputs.shape[1]
    flat_composed = composed.reshape(-1)
    pair_weights = pairs.inverse_position[pairs.rows] / positions
    key_query = xp.zeros(vocab_size * vocab_size, dtype=xp.float64)
    positional_sum = xp.zeros(pair_weights.shape[0], dtype=xp.float64)
    for part in parts:
        keys = last_keys if len(parts) == 1 else _pair_keys(inputs[part], scaled_targets[part], pairs, xp)
        applied = _applied_jacobian(flat_composed[keys], pairs, pair_weights, xp)
        positional_sum += applied.sum(axis=0)
        # the last row's keys become the diagonal keys x_tau V + x_tau (in place: not needed again)
        keys[:, -context_length:] = inputs[part] * (vocab_size + 1)
        xp.add.at(key_query, keys.ravel(), xp.take(applied, pairs.query_source, axis=1).ravel())
    lag = pairs.rows - pairs.columns
    positional = xp.bincount(lag, weights=positional_sum, minlength=context_length)
    return key_query.reshape(vocab_size, vocab_size), positional


def basis_statistics(
    sequences,
    vocab_size: int,
    *,
    xp=None,
    chunk_elements: int | None = None,
    include_interchangeability: bool = True,
    memory_limit_bytes: int | None = None,
    pair_pass: str = "auto",
) -> BasisStatistics:
    """All statistics of ``sequences`` (N, T + 1) token ids in ``0..vocab_size-1``.

    ``xp`` is the array module to compute in (NumPy when omitted; pass CuPy for a GPU);
    results are arrays of that module.  ``chunk_elements`` bounds chunk * T^2 (default
    :data:`DEFAULT_CHUNK_ELEMENTS`, on CuPy :data:`DEVICE_CHUNK_ELEMENTS`).
    ``include_interchangeability=False`` skips \\Sigma_{\\bar B}, which nothing else needs.
    Raises :class:`InvalidSizeError` when the dense V x V arrays would exceed
    ``memory_limit_bytes`` (default: available memory).  ``pair_pass``: ``auto`` runs the
    compiled passes of :mod:`~emergence.numerics.leading_terms.compiled_pair_pass` where Numba
    is installed (NumPy arrays only), ``numpy`` the reference passes here, ``compiled`` insists.
    """
    xp = np if xp is None else xp
    compiled = uses_compiled_pair_pass(pair_pass, xp)
    require_dense_memory(vocab_size, memory_limit_bytes)
    tokens = _validated_tokens(sequences, vocab_size, xp)
    count, context_length = tokens.shape[0], tokens.shape[1] - 1
    positions = count * context_length
    pairs = _causal_pairs(context_length, xp)
    if chunk_elements is None:
        chunk_elements = DEVICE_CHUNK_ELEMENTS if xp.__name__.startswith("cupy") else DEFAULT_CHUNK_ELEMENTS
    parts = _chunks(count, context_length, chunk_elements)

    inputs, targets = xp.ascontiguousarray(tokens[:, :-1]), xp.ascontiguousarray(tokens[:, 1:])
    current, following = inputs.ravel(), targets.ravel()
    # duplicate (current, next) pairs are summed when the COO matrix becomes CSR
    counts = _sparse_module(xp).coo_matrix(
        (xp.full(positions, 1.0 / positions), (current, following)), shape=(vocab_size, vocab_size)
    ).tocsr()
    row_mass = xp.bincount(current, minlength=vocab_size) / (positions * vocab_size)
    bigram = _bigram(counts, row_mass, vocab_size, xp)

    scaled_targets = targets * vocab_size
    if compiled:
        context = compiled_context(inputs, targets, positions, vocab_size)
    else:
        context, last_keys = _context(inputs, scaled_targets, parts, pairs, positions, vocab_size, xp)
    interchangeability, composed = _bigram_products(
        counts, row_mass, bigram, context, include_interchangeability, xp
    )
    if compiled:
        key_query, positional = compiled_key_query_and_positional(inputs, targets, composed, positions)
    else:
        key_query, positional = _key_query_and_positional(
            inputs, scaled_targets, parts, pairs, positions, composed, last_keys, xp
        )

    return BasisStatistics(
        bigram=bigram,
        interchangeability=interchangeability,
        context=context,
        composed=composed,
        key_query=key_query,
        positional=positional,
        num_sequences=int(count),
        context_length=int(context_length),
    )
