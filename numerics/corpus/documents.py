r"""Text corpora as fixed-length token windows: reading, tokenizing, vocabulary, windows.

A corpus file is UTF-8 text; documents are separated by blank lines or by the marker
``<|endoftext|>``.  Each document is tokenized, encoded with the vocabulary of the K most
frequent tokens (:mod:`emergence.numerics.corpus.vocabulary`) and cut into windows of T + 1 tokens:
``first`` keeps each document's first T + 1 tokens (the paper's choice; shorter documents
are skipped), ``all`` keeps every non-overlapping window of T + 1 consecutive tokens.
A window gives inputs ``x_1..x_T`` (its first T tokens) and targets ``y_t = x_{t+1}``.

The source name ``synthetic`` stands for the built-in children's-story corpus of
:mod:`emergence.numerics.corpus.stories` (seeded).

>>> split_documents("one two\n\nthree<|endoftext|>four\n \n")
['one two', 'three', 'four']
>>> corpus = build_corpus(["a b a b a", "b a b"], tokenizer_name="whitespace", vocab_size=2,
...                       context_length=2, windows="all", oov="drop")
>>> corpus.sequences.tolist(), corpus.vocabulary.tokens
([[0, 1, 0], [1, 0, 1]], ('a', 'b'))
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from emergence.numerics.corpus.tokenizers import tokenizer
from emergence.numerics.corpus.vocabulary import Vocabulary, build_vocabulary
from emergence.theory.errors import EmergenceError, InvalidSizeError

WINDOW_MODES: tuple[str, ...] = ("first", "all")
SYNTHETIC_SOURCE = "synthetic"
MAX_CONTEXT_LENGTH = 16384
DEFAULT_SYNTHETIC_STORIES = 400

_DOCUMENT_SEPARATOR = re.compile(r"<\|endoftext\|>|\n[^\S\n]*\n")


@dataclass(frozen=True)
class TokenCorpus:
    """Token windows ``sequences`` (N, T + 1) int64 over ``vocabulary``, from ``documents_used`` of ``documents_total`` documents."""

    sequences: np.ndarray
    vocabulary: Vocabulary
    context_length: int
    documents_used: int
    documents_total: int

    @property
    def inputs(self) -> np.ndarray:
        """x_1..x_T of every window, shape (N, T)."""
        return self.sequences[:, :-1]

    @property
    def targets(self) -> np.ndarray:
        """y_t = x_{t+1} of every window, shape (N, T)."""
        return self.sequences[:, 1:]

    @property
    def num_sequences(self) -> int:
        return int(self.sequences.shape[0])


def split_documents(text: str) -> list[str]:
    """Non-empty, stripped documents separated by blank lines or ``<|endoftext|>``."""
    return [part.strip() for part in _DOCUMENT_SEPARATOR.split(text) if part.strip()]


def read_documents(path: str | Path) -> list[str]:
    """Documents of a UTF-8 file; :class:`EmergenceError` if missing, undecodable or empty."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise EmergenceError(f"corpus file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise EmergenceError(f"corpus {str(path)!r} is a directory, not a text file") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise EmergenceError(
            f"corpus file {str(path)!r} is not UTF-8 text (undecodable byte at offset {error.start})"
        ) from None
    documents = split_documents(text)
    if not documents:
        raise EmergenceError(f"corpus file {str(path)!r} is empty (no text between blank lines)")
    return documents


def corpus_documents(source: str | Path, seed: int = 0, stories: int = DEFAULT_SYNTHETIC_STORIES) -> list[str]:
    """Documents of a file, or of the seeded story corpus when ``source`` is ``synthetic``."""
    if str(source) == SYNTHETIC_SOURCE:
        from emergence.numerics.corpus.stories import story_corpus

        return split_documents(story_corpus(stories, seed=seed))
    return read_documents(source)


class CorpusTooShortError(EmergenceError):
    """No document gives a single window of T + 1 tokens under the chosen settings."""


def token_windows(encoded: Sequence[int], context_length: int, windows: str) -> list[Sequence[int]]:
    """Windows of ``context_length + 1`` tokens: the first one, or all non-overlapping ones."""
    width = context_length + 1
    if windows == "first":
        return [encoded[:width]] if len(encoded) >= width else []
    return [encoded[start : start + width] for start in range(0, len(encoded) - width + 1, width)]


def build_corpus(
    documents: Sequence[str],
    *,
    tokenizer_name: str = "natural",
    vocab_size: int | None = None,
    context_length: int = 64,
    windows: str = "all",
    oov: str = "unk",
) -> TokenCorpus:
    """Tokenize, build the vocabulary over all documents, encode and cut into windows.

    ``vocab_size=None`` keeps every distinct token, at most 500.  Raises
    :class:`InvalidSizeError` for T outside 1..16384 or K out of range and
    :class:`EmergenceError` when no window survives the filtering.
    """
    if windows not in WINDOW_MODES:
        raise EmergenceError(f"unknown window mode {windows!r}; choose first or all")
    if not 1 <= context_length <= MAX_CONTEXT_LENGTH:
        raise InvalidSizeError(
            f"sequence length T={context_length} out of range; choose 1 <= T <= {MAX_CONTEXT_LENGTH}"
        )
    if not documents:
        raise EmergenceError("the corpus has no documents")
    split = tokenizer(tokenizer_name)
    tokenized = [split(document) for document in documents]
    vocabulary = build_vocabulary(tokenized, vocab_size, oov)
    rows: list[Sequence[int]] = []
    used = 0
    for tokens in tokenized:
        encoded = vocabulary.encode(tokens)
        if encoded is None:
            continue
        found = token_windows(encoded, context_length, windows)
        used += bool(found)
        rows.extend(found)
    if not rows:
        raise CorpusTooShortError(
            f"nothing left after filtering: no document of {len(documents)} gives a window of "
            f"T+1={context_length + 1} tokens (oov={oov}, windows={windows}, K={vocabulary.size} tokens); "
            "it needs longer documents" + "".join(
                f", or {remedy}" for remedy, applies in (
                    ("mapping unknown tokens to <unk> (oov=unk)", oov == "drop"),
                    ("a larger vocabulary", vocab_size is not None),
                    ("a smaller T", context_length > 1)) if applies)
        )
    return TokenCorpus(np.asarray(rows, dtype=np.int64), vocabulary, context_length, used, len(documents))


def load_corpus(
    source: str | Path,
    *,
    tokenizer_name: str = "natural",
    vocab_size: int | None = None,
    context_length: int = 64,
    windows: str = "all",
    oov: str = "unk",
    seed: int = 0,
) -> TokenCorpus:
    """:func:`build_corpus` of a file, or of the seeded story corpus for ``synthetic``."""
    return build_corpus(
        corpus_documents(source, seed=seed),
        tokenizer_name=tokenizer_name,
        vocab_size=vocab_size,
        context_length=context_length,
        windows=windows,
        oov=oov,
    )
