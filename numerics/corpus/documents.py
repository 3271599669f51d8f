r"""Text corpora as fixed-length token windows: reading, tokenizing, vocabulary, windows.

A corpus file is UTF-8 text cut into documents by a separator (:data:`SEPARATORS`):
``eot`` splits on the marker ``<|endoftext|>`` only (blank lines stay inside a document, as
in TinyStories records), ``blank-line`` on lines holding only whitespace, ``line`` on every
line break, and ``auto`` (the default) chooses ``eot`` when the marker occurs in the text and
``blank-line`` otherwise, so the marker always takes precedence over blank lines.  Each document is tokenized, encoded with the vocabulary of the K most
frequent tokens (:mod:`emergence.numerics.corpus.vocabulary`) and cut into windows of T + 1 tokens:
``first`` keeps each document's first T + 1 tokens (the paper's choice; shorter documents
are skipped), ``all`` keeps every non-overlapping window of T + 1 consecutive tokens.
A window gives inputs ``x_1..x_T`` (its first T tokens) and targets ``y_t = x_{t+1}``.

The source name ``synthetic`` stands for the built-in children's-story corpus of
:mod:`emergence.numerics.corpus.stories` (seeded).

>>> split_documents("one two\n\nthree<|endoftext|>four\n \n")
['one two\n\nthree', 'four']
>>> split_documents("one two\n\nthree\nfour\n \n")
['one two', 'three\nfour']
>>> split_documents("one two\n\nthree<|endoftext|>four", separator="blank-line")
['one two', 'three<|endoftext|>four']
>>> split_documents("one two\n\nthree\nfour", separator="line")
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
from typing import Any, Sequence

import numpy as np

from emergence.numerics.corpus.tokenizers import WordTokenizer, corpus_tokenizer, display_tokens
from emergence.numerics.corpus.vocabulary import Vocabulary, token_counts, vocabulary_from_counts
from emergence.base.errors import EmergenceError, InvalidSizeError

WINDOW_MODES: tuple[str, ...] = ("first", "all")
SYNTHETIC_SOURCE = "synthetic"
MAX_CONTEXT_LENGTH = 16384
DEFAULT_SYNTHETIC_STORIES = 400

END_OF_TEXT = "<|endoftext|>"
SEPARATORS: tuple[str, ...] = ("auto", "eot", "blank-line", "line")
SEPARATOR_PATTERNS = {
    "eot": re.compile(re.escape(END_OF_TEXT)),
    "blank-line": re.compile(r"\n[^\S\n]*\n"),
    "line": re.compile(r"\r?\n"),
}


@dataclass(frozen=True)
class TokenCorpus:
    """Token windows ``sequences`` (N, T + 1) int64 over ``vocabulary``, from ``documents_used`` of ``documents_total`` documents."""

    sequences: np.ndarray
    vocabulary: Vocabulary
    context_length: int
    documents_used: int
    documents_total: int
    tokenizer: Any = WordTokenizer(str.split, "whitespace")

    @property
    def readable_tokens(self) -> tuple[str, ...]:
        """The vocabulary as a reader should see it, unique (:func:`~emergence.numerics.corpus.tokenizers.display_tokens`)."""
        return display_tokens(self.tokenizer, self.vocabulary.tokens)

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


def resolve_separator(text: str, separator: str = "auto") -> str:
    """The separator ``auto`` stands for in ``text`` (``eot`` if the marker occurs, else ``blank-line``)."""
    if separator not in SEPARATORS:
        raise EmergenceError(f"unknown document separator {separator!r}; choose {', '.join(SEPARATORS)}")
    if separator == "auto":
        return "eot" if END_OF_TEXT in text else "blank-line"
    return separator


def split_documents(text: str, separator: str = "auto") -> list[str]:
    """Non-empty, stripped documents of ``text`` cut by ``separator`` (see the module docstring)."""
    pattern = SEPARATOR_PATTERNS[resolve_separator(text, separator)]
    return [part.strip() for part in pattern.split(text) if part.strip()]


def read_documents(path: str | Path, separator: str = "auto") -> list[str]:
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
    documents = split_documents(text, separator)
    if not documents:
        raise EmergenceError(f"corpus file {str(path)!r} is empty (no text between blank lines)")
    return documents


def corpus_documents(
    source: str | Path, seed: int = 0, stories: int = DEFAULT_SYNTHETIC_STORIES, separator: str = "auto"
) -> list[str]:
    """Documents of a file, or of the seeded story corpus when ``source`` is ``synthetic``."""
    if str(source) == SYNTHETIC_SOURCE:
        from emergence.numerics.corpus.stories import story_corpus

        return split_documents(story_corpus(stories, seed=seed), separator)
    return read_documents(source, separator)


class CorpusTooShortError(EmergenceError):
    """No document gives a single window of T + 1 tokens under the chosen settings.

    ``tokenizer`` and ``vocabulary`` are the corpus's, built before the windows were cut, so a caller
    can still say whether a query word occurs in the corpus (:func:`~emergence.numerics.corpus.queries.query_token`).
    """

    def __init__(self, message: str, tokenizer=None, vocabulary: Vocabulary | None = None):
        super().__init__(message)
        self.tokenizer, self.vocabulary = tokenizer, vocabulary


def token_windows(encoded: Sequence[int], context_length: int, windows: str) -> list[Sequence[int]]:
    """Windows of ``context_length + 1`` tokens: the first one, or all non-overlapping ones."""
    width = context_length + 1
    if windows == "first":
        return [encoded[:width]] if len(encoded) >= width else []
    return [encoded[start : start + width] for start in range(0, len(encoded) - width + 1, width)]


def check_window_options(context_length: int, windows: str) -> None:
    """:class:`EmergenceError` for an unknown window mode, :class:`InvalidSizeError` for T outside 1..16384."""
    if windows not in WINDOW_MODES:
        raise EmergenceError(f"unknown window mode {windows!r}; choose first or all")
    if not 1 <= context_length <= MAX_CONTEXT_LENGTH:
        raise InvalidSizeError(
            f"sequence length T={context_length} out of range; choose 1 <= T <= {MAX_CONTEXT_LENGTH}"
        )


def corpus_vocabulary(splitter, counts, vocab_size: int | None, oov: str) -> Vocabulary:
    """The vocabulary of token ``counts``; a subword tokenizer covers the text, so K is capped at the tokens that occur."""
    if not isinstance(splitter, WordTokenizer) and vocab_size is not None:
        vocab_size = min(vocab_size, len(counts))
    return vocabulary_from_counts(counts, vocab_size, oov)


def no_window_error(documents: int, context_length: int, oov: str, vocabulary: Vocabulary, windows: str,
                    vocab_size: int | None, tokenizer=None) -> CorpusTooShortError:
    """The error for a corpus that gives no window, naming only the remedies that apply (no flags:
    each command spells its options its own way)."""
    remedies = (("mapping unknown tokens to <unk> (oov=unk)", oov == "drop"),
                ("a larger vocabulary", vocab_size is not None),
                ("a smaller T", context_length > 1))
    return CorpusTooShortError(
        f"nothing left after filtering: no document of {documents} gives a window of "
        f"T+1={context_length + 1} tokens (oov={oov}, windows={windows}, K={vocabulary.size} tokens); "
        "it needs longer documents" + "".join(f", or {remedy}" for remedy, applies in remedies if applies),
        tokenizer, vocabulary,
    )


def build_corpus(
    documents: Sequence[str],
    *,
    tokenizer_name: str = "natural",
    vocab_size: int | None = None,
    context_length: int = 64,
    windows: str = "all",
    oov: str = "unk",
    tokenizer_vocab: int | None = None,
) -> TokenCorpus:
    """Tokenize, build the vocabulary over all documents, encode and cut into windows.

    ``vocab_size=None`` keeps every distinct token, at most 500.  ``tokenizer_vocab`` is the
    size of a trained BPE (default ``vocab_size``); the statistics then keep its top
    ``vocab_size`` tokens.  Raises :class:`InvalidSizeError` for T outside 1..16384 or K out
    of range and :class:`EmergenceError` when no window survives the filtering.
    """
    check_window_options(context_length, windows)
    if not documents:
        raise EmergenceError("the corpus has no documents")
    splitter = corpus_tokenizer(tokenizer_name, documents, tokenizer_vocab or vocab_size)
    tokenized = [splitter.split(document) for document in documents]
    vocabulary = corpus_vocabulary(splitter, token_counts(tokenized), vocab_size, oov)
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
        raise no_window_error(len(documents), context_length, oov, vocabulary, windows, vocab_size, splitter)
    return TokenCorpus(np.asarray(rows, dtype=np.int64), vocabulary, context_length, used, len(documents), splitter)


def load_corpus(
    source: str | Path,
    *,
    tokenizer_name: str = "natural",
    vocab_size: int | None = None,
    context_length: int = 64,
    windows: str = "all",
    oov: str = "unk",
    seed: int = 0,
    separator: str = "auto",
    tokenizer_vocab: int | None = None,
) -> TokenCorpus:
    """:func:`build_corpus` of a file, or of the seeded story corpus for ``synthetic``."""
    return build_corpus(
        corpus_documents(source, seed=seed, separator=separator),
        tokenizer_name=tokenizer_name,
        vocab_size=vocab_size,
        context_length=context_length,
        windows=windows,
        oov=oov,
        tokenizer_vocab=tokenizer_vocab,
    )
