r"""The vocabulary: the K most frequent tokens of a corpus, and the out-of-vocabulary policy.

Tokens are ranked by count, ties broken by first occurrence in the corpus (documents in
order), exactly as ``collections.Counter.most_common`` ranks them in the paper's reference
code, so the vocabulary is a deterministic function of the corpus.  Index order is rank order.

Policies for tokens outside the vocabulary: ``drop`` (the paper's: a document containing
one is discarded; V = K) or ``unk`` (it becomes ``<unk>``; the vocabulary then holds the K most
frequent tokens followed by ``<unk>``, so V = K + 1).  K always counts real tokens, in every command
(``--vocab K``, ``checkpoints --top-k K``).

>>> vocabulary = build_vocabulary([["a", "b", "a"], ["c", "b", "a"]], size=2)
>>> vocabulary.tokens
('a', 'b')
>>> build_vocabulary([["z", "y", "x"], ["x"]], size=3).tokens
('x', 'z', 'y')
>>> vocabulary.encode(["a", "c", "b"]) is None
True
>>> unknown = build_vocabulary([["a", "b", "a"], ["c", "b", "a"]], size=2, oov="unk")
>>> unknown.tokens, unknown.encode(["a", "c"])
(('a', 'b', '<unk>'), [0, 2])
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence, cast

from emergence.base.errors import EmergenceError, InvalidSizeError

OOV_POLICIES: tuple[str, ...] = ("drop", "unk")
UNKNOWN_TOKEN = "<unk>"


@dataclass(frozen=True)
class Vocabulary:
    """Tokens in matrix index order, the out-of-vocabulary policy, and the corpus ``counts`` of every
    token (kept or not; empty when unknown), which say why a word is not in the vocabulary."""

    tokens: tuple[str, ...]
    oov: str
    counts: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "index", {token: i for i, token in enumerate(self.tokens)})

    @property
    def size(self) -> int:
        return len(self.tokens)

    @property
    def kept(self) -> int:
        """K, the number of real tokens (``<unk>`` not counted)."""
        return self.size - (self.oov == "unk")

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
    """The ``size`` most frequent tokens of ``counts``, followed by ``<unk>`` under the ``unk`` policy
    (V = ``size`` + 1 there, V = ``size`` under ``drop``).

    ``size=None`` takes every distinct token, at most :data:`DEFAULT_VOCABULARY_SIZE`.
    Raises :class:`InvalidSizeError` when ``size`` < 2 or exceeds the number of distinct
    tokens, and :class:`EmergenceError` for an unknown policy.
    """
    if oov not in OOV_POLICIES:
        raise EmergenceError(f"unknown out-of-vocabulary policy {oov!r}; choose drop or unk")
    counts = Counter(counts)
    if oov == "unk":
        counts.pop(UNKNOWN_TOKEN, None)
    available = len(counts)
    if size is None:
        size = min(DEFAULT_VOCABULARY_SIZE, available)
    if size < 2 or size > available:
        raise InvalidSizeError(
            f"vocabulary size K={size} out of range: the corpus has {len(counts)} distinct "
            f"tokens, so K must be between 2 and {available}"
        )
    ranked = counts.most_common(size)
    tokens = tuple(token for token, _ in ranked)
    if oov == "unk":
        tokens = tokens + (UNKNOWN_TOKEN,)
    return Vocabulary(tokens, oov, counts)
