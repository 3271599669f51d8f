r"""A corpus file read in blocks, never whole: documents, vocabulary and window chunks.

The same documents, vocabulary and windows as :func:`~emergence.numerics.corpus.documents.load_corpus`,
with at most one block of text and one chunk of windows in memory: the file is read in
blocks of ``block_bytes`` (decoded incrementally, so a UTF-8 character may straddle two
blocks), and every document but the block's last is complete.  The passes are: (``auto``
separator) does the file contain ``<|endoftext|>``; (``bpe``) train the tokenizer on the
document stream; count tokens (the vocabulary); count windows; then each statistics pass
re-reads the file (:meth:`StreamedCorpus.chunks`).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
>>> _ = path.write_text("a b a\n\nb a b<|endoftext|>a a b", encoding="utf-8")
>>> list(iter_documents(path, block_bytes=3))
['a b a\n\nb a b', 'a a b']
>>> list(iter_documents(path, separator="blank-line", block_bytes=3))
['a b a', 'b a b<|endoftext|>a a b']
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from emergence.numerics.corpus.documents import (
    SEPARATOR_PATTERNS,
    END_OF_TEXT,
    SEPARATORS,
    check_window_options,
    corpus_vocabulary,
    no_window_error,
    token_windows,
)
from emergence.numerics.corpus.tokenizers import corpus_tokenizer, display_tokens
from emergence.numerics.corpus.vocabulary import Vocabulary, token_counts
from emergence.base.errors import EmergenceError

DEFAULT_BLOCK_BYTES = 1 << 24
DEFAULT_CHUNK_WINDOWS = 4096


def _blocks(path: Path, block_bytes: int) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    try:
        with open(path, "rb") as handle:
            while block := handle.read(block_bytes):
                try:
                    yield decoder.decode(block)
                except UnicodeDecodeError as error:
                    raise EmergenceError(
                        f"corpus file {str(path)!r} is not UTF-8 text (undecodable byte at offset {offset + error.start})"
                    ) from None
                offset += len(block)
            yield decoder.decode(b"", final=True)
    except FileNotFoundError:
        raise EmergenceError(f"corpus file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise EmergenceError(f"corpus {str(path)!r} is a directory, not a text file") from None


def _contains_marker(path: Path, block_bytes: int) -> bool:
    tail = ""
    for text in _blocks(path, block_bytes):
        if END_OF_TEXT in tail + text:
            return True
        tail = (tail + text)[-len(END_OF_TEXT) :]
    return False


def resolve_file_separator(path: Path, separator: str, block_bytes: int = DEFAULT_BLOCK_BYTES) -> str:
    """``separator``, with ``auto`` resolved by scanning the file for ``<|endoftext|>``."""
    if separator not in SEPARATORS:
        raise EmergenceError(f"unknown document separator {separator!r}; choose {', '.join(SEPARATORS)}")
    if separator == "auto":
        return "eot" if _contains_marker(path, block_bytes) else "blank-line"
    return separator


def iter_documents(path: str | Path, separator: str = "auto", block_bytes: int = DEFAULT_BLOCK_BYTES) -> Iterator[str]:
    """The documents of :func:`~emergence.numerics.corpus.documents.read_documents`, one at a time."""
    path = Path(path)
    pattern = SEPARATOR_PATTERNS[resolve_file_separator(path, separator, block_bytes)]
    pending = ""
    for text in _blocks(path, block_bytes):
        parts = pattern.split(pending + text)
        pending = parts.pop()
        yield from (part.strip() for part in parts if part.strip())
    if pending.strip():
        yield pending.strip()


@dataclass(frozen=True)
class StreamedCorpus:
    """A corpus file's vocabulary and window count; :meth:`chunks` re-reads it as (n, T + 1) id arrays."""

    path: Path
    separator: str
    tokenizer: Any
    vocabulary: Vocabulary
    context_length: int
    windows: str
    num_sequences: int
    num_tokens: int
    documents_used: int
    documents_total: int
    block_bytes: int = DEFAULT_BLOCK_BYTES
    chunk_windows: int = DEFAULT_CHUNK_WINDOWS

    @property
    def readable_tokens(self) -> tuple[str, ...]:
        return display_tokens(self.tokenizer, self.vocabulary.tokens)

    def _document_windows(self) -> Iterator[list]:
        for document in iter_documents(self.path, self.separator, self.block_bytes):
            encoded = self.vocabulary.encode(self.tokenizer.split(document))
            yield [] if encoded is None else token_windows(encoded, self.context_length, self.windows)

    def chunks(self) -> Iterator[np.ndarray]:
        """Windows in corpus order, ``chunk_windows`` at a time."""
        rows: list = []
        for found in self._document_windows():
            rows.extend(found)
            while len(rows) >= self.chunk_windows:
                yield np.asarray(rows[: self.chunk_windows], dtype=np.int64)
                rows = rows[self.chunk_windows :]
        if rows:
            yield np.asarray(rows, dtype=np.int64)


def stream_corpus(
    path: str | Path,
    *,
    tokenizer_name: str = "natural",
    vocab_size: int | None = None,
    context_length: int = 64,
    windows: str = "all",
    oov: str = "unk",
    separator: str = "auto",
    tokenizer_vocab: int | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    chunk_windows: int = DEFAULT_CHUNK_WINDOWS,
) -> StreamedCorpus:
    """The streamed twin of :func:`~emergence.numerics.corpus.documents.load_corpus` for a file."""
    check_window_options(context_length, windows)
    path = Path(path)
    separator = resolve_file_separator(path, separator, block_bytes)

    def documents():
        return iter_documents(path, separator, block_bytes)

    if next(iter(documents()), None) is None:
        raise EmergenceError(f"corpus file {str(path)!r} is empty (no text between separators)")
    splitter = corpus_tokenizer(tokenizer_name, documents(), tokenizer_vocab or vocab_size)
    vocabulary = corpus_vocabulary(splitter, token_counts(splitter.split(d) for d in documents()), vocab_size, oov)
    corpus = StreamedCorpus(path, separator, splitter, vocabulary, context_length, windows, 0, 0, 0, 0,
                            block_bytes, chunk_windows)
    found = [len(rows) for rows in corpus._document_windows()]
    if not sum(found):
        raise no_window_error(len(found), context_length, oov, vocabulary, windows, vocab_size, splitter)
    return StreamedCorpus(path, separator, splitter, vocabulary, context_length, windows, sum(found),
                          sum(found) * context_length, sum(1 for n in found if n), len(found),
                          block_bytes, chunk_windows)
