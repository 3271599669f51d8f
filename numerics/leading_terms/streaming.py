r"""The basis statistics of a corpus streamed in chunks of windows, equal to the in-memory pass.

Every statistic is an average over the N T positions, so it is a sum over windows once the
1/(NT) is fixed: with N known in advance (a first pass counts the windows), each chunk adds
its share.  Two passes over the chunks are needed, as in memory:

1. the bigram counts S (sparse), the input mass u and \bar\Phi (one V x V accumulator);
   then \bar B, \Sigma_{\bar B} and \bar G from the complete S and \bar\Phi;
2. \bar Q and \Delta, which need the complete \bar G.

The per-chunk work is that of :mod:`emergence.numerics.leading_terms.basis_statistics`
(its pass helpers are called on one chunk at a time), so at most one chunk of windows and
a few V x V arrays are in memory: a corpus larger than memory is streamed from disk.

>>> import numpy as np
>>> from emergence.numerics.leading_terms.basis_statistics import basis_statistics
>>> windows = np.random.default_rng(0).integers(0, 5, size=(9, 7))
>>> streamed = streamed_basis_statistics(lambda: (windows[i:i + 2] for i in range(0, 9, 2)), 5)
>>> bool(np.allclose(streamed.key_query, basis_statistics(windows, 5).key_query, rtol=0, atol=1e-15))
True
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from emergence.numerics.leading_terms import basis_statistics as dense
from emergence.base.errors import EmergenceError

WindowChunks = Callable[[], Iterable[np.ndarray]]
"""A function returning a fresh iterable of (n, T + 1) token-id chunks (called once per pass)."""


def _chunk_arrays(chunk, vocab_size: int):
    tokens = dense._validated_tokens(chunk, vocab_size, np)
    inputs = np.ascontiguousarray(tokens[:, :-1])
    targets = np.ascontiguousarray(tokens[:, 1:])
    return inputs, targets * vocab_size, targets


def _shape(chunks: WindowChunks) -> tuple[int, int]:
    """(N, T) over all chunks; :class:`EmergenceError` for none or for unequal window lengths."""
    count, lengths = 0, set()
    for chunk in chunks():
        count += int(np.shape(chunk)[0])
        lengths.add(int(np.shape(chunk)[1]) - 1)
    if count == 0:
        raise EmergenceError("the streamed corpus has no windows")
    if len(lengths) != 1:
        raise EmergenceError(f"streamed chunks have different window lengths {sorted(lengths)}")
    return count, lengths.pop()


def streamed_basis_statistics(
    chunks: WindowChunks,
    vocab_size: int,
    *,
    include_interchangeability: bool = True,
    memory_limit_bytes: int | None = None,
) -> dense.BasisStatistics:
    """:func:`~emergence.numerics.leading_terms.basis_statistics.basis_statistics` of the windows ``chunks()`` yields."""
    import scipy.sparse as sparse

    dense.require_dense_memory(vocab_size, memory_limit_bytes)
    count, context_length = _shape(chunks)
    positions = count * context_length
    pairs = dense._causal_pairs(context_length, np)
    counts = sparse.csr_matrix((vocab_size, vocab_size))
    input_counts = np.zeros(vocab_size)
    context = np.zeros((vocab_size, vocab_size))
    for chunk in chunks():
        inputs, scaled_targets, targets = _chunk_arrays(chunk, vocab_size)
        counts = counts + sparse.coo_matrix(
            (np.full(inputs.size, 1.0 / positions), (inputs.ravel(), targets.ravel())), shape=(vocab_size, vocab_size)
        ).tocsr()
        input_counts += np.bincount(inputs.ravel(), minlength=vocab_size)
        part = [slice(0, inputs.shape[0])]
        context += dense._context(inputs, scaled_targets, part, pairs, positions, vocab_size, np)[0]
    row_mass = input_counts / (positions * vocab_size)
    bigram = dense._bigram(counts, row_mass, vocab_size, np)
    interchangeability, composed = dense._bigram_products(
        counts, row_mass, bigram, context, include_interchangeability, np
    )
    key_query = np.zeros((vocab_size, vocab_size))
    positional = np.zeros(context_length)
    for chunk in chunks():
        inputs, scaled_targets, _ = _chunk_arrays(chunk, vocab_size)
        keys = dense._pair_keys(inputs, scaled_targets, pairs, np)
        part_key_query, part_positional = dense._key_query_and_positional(
            inputs, scaled_targets, [slice(0, inputs.shape[0])], pairs, positions, composed, keys, np
        )
        key_query += part_key_query
        positional += part_positional
    return dense.BasisStatistics(
        bigram=bigram,
        interchangeability=interchangeability,
        context=context,
        composed=composed,
        key_query=key_query,
        positional=positional,
        num_sequences=count,
        context_length=context_length,
    )
