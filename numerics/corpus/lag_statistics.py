r"""A token stream's stationary statistics over V classes: the unigram and the lag joints.

The copy task on a real corpus reads its tokens as V classes: the V − 1 most frequent tokens of the corpus
and one class ``<unk>`` for every other token (the vocabulary of
:func:`~emergence.numerics.corpus.vocabulary.vocabulary_from_counts` with K = V − 1 and the ``unk``
policy).  The data term of a stationary token process needs, for each lag k = 0 … K,

.. math::

    J_k[a, b] = \Pr(x_\ell = a,\; x_{\ell-k} = b), \qquad J_0 = \operatorname{diag}\pi,

estimated from every pair of positions ``k`` apart inside one document (pairs never cross a document
boundary): ``counts[k, a, b]`` pairs, ``J_k = counts[k] / counts[k].sum()``.  An i.i.d. stream has
:math:`J_k = \pi\pi^\top` for k ≥ 1; :meth:`LagStatistics.excess` is the part a correlated stream adds.
The file is read in blocks (:func:`~emergence.numerics.corpus.streaming.iter_documents`), twice: the
token counts (the classes), then the pairs; memory is the (K + 1) V² counts and one document.

>>> stats = lag_statistics([np.array([0, 1, 0, 1]), np.array([1, 1])], classes=("a", "b"), max_lag=2)
>>> stats.pairs.tolist()       # 6 tokens; 3 + 1 pairs at lag 1; 2 at lag 2 (none across documents)
[6, 4, 2]
>>> stats.joints[1].tolist()   # J_1[a, b] = P(x_l = a, x_{l-1} = b): (1,0), (0,1), (1,0), (1,1)
[[0.0, 0.25], [0.5, 0.25]]
>>> stats.unigram.tolist()
[0.3333333333333333, 0.6666666666666666]
>>> lag_statistics([np.array([0, 1])], classes=("a", "b"), max_lag=0)
Traceback (most recent call last):
...
emergence.base.errors.EmergenceError: the largest lag must be at least 1, got 0
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from emergence.base.errors import EmergenceError
from emergence.numerics.corpus.streaming import DEFAULT_BLOCK_BYTES, iter_documents, resolve_file_separator
from emergence.numerics.corpus.tokenizers import corpus_tokenizer
from emergence.numerics.corpus.vocabulary import UNKNOWN_TOKEN, token_counts, vocabulary_from_counts


@dataclass(frozen=True)
class LagStatistics:
    r"""Unigram ``π (V,)``, lag joints ``joints (K + 1, V, V)`` with ``joints[k, a, b]`` :math:`= J_k[a, b]`,
    the pair count per lag ``pairs (K + 1,)`` (``pairs[0]`` is the token count), the class names ``(V,)``."""

    unigram: np.ndarray
    joints: np.ndarray
    pairs: np.ndarray
    classes: tuple[str, ...]

    @property
    def max_lag(self) -> int:
        return self.joints.shape[0] - 1

    def excess(self, k: int) -> np.ndarray:
        r""":math:`J_k - \pi\pi^\top` ``(V, V)``: zero for an i.i.d. stream (k ≥ 1), up to sampling noise."""
        return self.joints[k] - np.outer(self.unigram, self.unigram)

    def coverage(self) -> float:
        """The fraction of tokens in a class of their own (not ``<unk>``)."""
        if UNKNOWN_TOKEN not in self.classes:
            return 1.0
        return float(1.0 - self.unigram[self.classes.index(UNKNOWN_TOKEN)])

    def to_json(self) -> dict:
        return {"classes": list(self.classes), "unigram": self.unigram.tolist(), "joints": self.joints.tolist(),
                "pairs": self.pairs.tolist(), "coverage": self.coverage()}


def lag_counts(documents: Iterable[np.ndarray], V: int, max_lag: int) -> np.ndarray:
    """``counts (K + 1, V, V)`` int64: ``counts[k, a, b]`` pairs (x_ℓ = a, x_{ℓ−k} = b) inside each document of
    class ids ``(n,)`` in ``[0, V)``; ``counts[0]`` is diagonal (the token counts)."""
    counts = np.zeros((max_lag + 1, V * V), dtype=np.int64)
    for ids in documents:
        ids = np.asarray(ids, dtype=np.int64)
        for k in range(min(max_lag, len(ids) - 1) + 1):
            counts[k] += np.bincount(ids[k:] * V + ids[: len(ids) - k], minlength=V * V)
    return counts.reshape(max_lag + 1, V, V)


def lag_statistics(documents: Iterable[np.ndarray], classes: tuple[str, ...], max_lag: int) -> LagStatistics:
    """:class:`LagStatistics` of documents of class ids; :class:`EmergenceError` for a lag below 1 or a lag
    that no document reaches."""
    if max_lag < 1:
        raise EmergenceError(f"the largest lag must be at least 1, got {max_lag}")
    counts = lag_counts(documents, len(classes), max_lag)
    pairs = counts.sum(axis=(1, 2))
    if pairs[-1] == 0:
        raise EmergenceError(f"no document is longer than the largest lag {max_lag}: lag {max_lag} has no pairs")
    joints = counts / pairs[:, None, None]
    return LagStatistics(np.diag(joints[0]).copy(), joints, pairs, tuple(classes))


def corpus_lag_statistics(path: str | Path, V: int, max_lag: int, tokenizer: str = "natural",
                          separator: str = "auto", block_bytes: int = DEFAULT_BLOCK_BYTES) -> LagStatistics:
    """The lag statistics of a text file read as V classes (the V − 1 most frequent tokens and ``<unk>``),
    streamed; ``tokenizer`` a word tokenizer (``natural``, ``whitespace``) or a ``tokenizer.json``.

    :class:`EmergenceError` (one line) for V below 3 (two real tokens at least), an unreadable or empty file,
    a corpus with fewer than V − 1 distinct tokens, or a lag no document reaches.
    """
    classes, documents = corpus_class_documents(path, V, tokenizer, separator, block_bytes)
    return lag_statistics(documents, classes, max_lag)


def corpus_class_documents(path: str | Path, V: int, tokenizer: str = "natural", separator: str = "auto",
                           block_bytes: int = DEFAULT_BLOCK_BYTES) -> tuple[tuple[str, ...], Iterator[np.ndarray]]:
    """The V class names and the file's documents as class ids ``(n,)`` int64, streamed (the file is read once
    for the token counts now, once more as the documents are consumed); errors as :func:`corpus_lag_statistics`."""
    if V < 3:
        raise EmergenceError(f"a corpus is read as V >= 3 classes (V - 1 tokens and <unk>), got V = {V}")
    path = Path(path)
    separator = resolve_file_separator(path, separator, block_bytes)
    splitter = corpus_tokenizer(tokenizer, [])
    counts = token_counts(splitter.split(document) for document in iter_documents(path, separator, block_bytes))
    if not counts:
        raise EmergenceError(f"corpus file {str(path)!r} holds no tokens")
    vocabulary = vocabulary_from_counts(counts, V - 1, "unk")
    documents = (np.asarray(vocabulary.encode(splitter.split(document)) or [], dtype=np.int64)  # unk: never None
                 for document in iter_documents(path, separator, block_bytes))
    return vocabulary.tokens, documents
