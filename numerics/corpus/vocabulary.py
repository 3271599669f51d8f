r"""The vocabulary: the K most frequent tokens of a corpus, and the out-of-vocabulary policy.

Tokens are ranked by count, ties broken by first occurrence in the corpus (documents in
order), exactly as ``collections.Counter.most_common`` ranks them in the paper's reference
code, so the vocabulary is a deterministic function of the corpus.  Index order is rank order.

Policies for tokens outside the vocabulary: ``drop`` (the paper's: a document containing
one is discarded) or ``unk`` (it becomes ``<unk>``; the vocabulary then holds the K - 1 most
frequent tokens followed by ``<unk>``, so V = K either way).

>>> vocabulary = build_vocabulary([["a", "b", "a"], ["c", "b", "a"]], size=2)
>>> vocabulary.tokens
('a', 'b')
>>> build_vocabulary([["z", "y", "x"], ["x"]], size=3).tokens
('x', 'z', 'y')
>>> vocabulary.encode(["a", "c", "b"]) is None
True
>>> build_vocabulary([["a", "b", "a"], ["c", "b", "a"]], size=2, oov="unk").encode(["a", "c"])
[0, 1]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence, cast

from emergence.base.errors import EmergenceError, InvalidSizeError

OOV_POLICIES: tuple[str, ...] = ("drop", "unk")
UNKNOWN_TOKEN = "<unk>"


@dataclass(frozen=True)
class Vocabulary:
    """Tokens in matrix index order and the out-of-vocabulary policy."""

    tokens: tuple[str, ...]
    oov: str
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "index", {token: i for i, token in enumerate(self.tokens)})

    @property
    def size(self) -> int:
        return len(self.tokens)

    def encode(self, tokens: Sequence[str]) -> list[int] | None:
        """Indices of ``tokens``; ``None`` under ``drop`` when any token is out of vocabulary."""
        if self.oov == "unk":
            unknown = self.index[UNKNOWN_TOKEN]
            return [self.index.get(token, unknown) for token in tokens]
        encoded = [self.index.get(token) for token in tokens]
        return None if any(i is None for i in encoded) else cast("list[int]", encoded)


def token_counts(documents: Iterable[Sequence[str]]) -> Counter:
    """How often each token occurs over all documents."""
    counts: Counter = Counter()
    for document in documents:
        counts.update(document)
    return counts


DEFAULT_VOCABULARY_SIZE = 500


def build_vocabulary(documents: Iterable[Sequence[str]], size: int | None, oov: str = "drop") -> Vocabulary:
    """The ``size`` most frequent tokens of ``documents`` (see :func:`vocabulary_from_counts`)."""
    return vocabulary_from_counts(token_counts(documents), size, oov)


def vocabulary_from_counts(counts: Counter, size: int | None, oov: str = "drop") -> Vocabulary:
    """The ``size`` most frequent tokens of ``counts`` (with ``<unk>`` last under the ``unk`` policy).

    ``size=None`` takes every distinct token, at most :data:`DEFAULT_VOCABULARY_SIZE`.
    Raises :class:`InvalidSizeError` when ``size`` < 2 or exceeds the number of distinct
    tokens (plus one for ``<unk>``), and :class:`EmergenceError` for an unknown policy.
    """
    if oov not in OOV_POLICIES:
        raise EmergenceError(f"unknown out-of-vocabulary policy {oov!r}; choose drop or unk")
    counts = Counter(counts)
    if oov == "unk":
        counts.pop(UNKNOWN_TOKEN, None)
    available = len(counts) + (1 if oov == "unk" else 0)
    if size is None:
        size = min(DEFAULT_VOCABULARY_SIZE, available)
    kept = size - 1 if oov == "unk" else size
    if size < 2 or size > available:
        raise InvalidSizeError(
            f"vocabulary size K={size} out of range: the corpus has {len(counts)} distinct "
            f"tokens, so K must be between 2 and {available}"
        )
    ranked = counts.most_common(kept)
    tokens = tuple(token for token, _ in ranked)
    if oov == "unk":
        tokens = tokens + (UNKNOWN_TOKEN,)
    return Vocabulary(tokens, oov)
