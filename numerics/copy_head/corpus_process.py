r"""A text corpus as the copy head's token process: its measured lag joints, its class-id documents, provenance.

``corpus:PATH`` reads a UTF-8 text file as V classes, the V − 1 most frequent tokens and ``<unk>``
(:func:`~emergence.numerics.corpus.lag_statistics.corpus_class_documents`), documents cut at blank lines or
``<|endoftext|>``.  The theory sees it through the lag joints :math:`J_k` for k = 0 … L − 1 (pairs inside one
document; :func:`~emergence.numerics.corpus.lag_statistics.lag_statistics`), which the data term of
:mod:`.lag_joint_action` takes; the training data are windows of L consecutive class ids inside one document
(:func:`~emergence.validation.copy_task.token_streams.corpus_windows`).  The tokenizer is ``natural`` (default), ``whitespace`` or a saved ``tokenizer.json``,
written ``corpus:PATH#tokenizer=NAME`` in the process text.

Each statistic is computed once per process (cache keyed on the path, the file's size and modification time,
the tokenizer, V and the lag range).  :func:`corpus_provenance` names what the numbers came from: the file, its
SHA-256, the tokenizer, V, the token count and the lag range.

>>> parse_corpus_source("/nonexistent/text.txt")
Traceback (most recent call last):
...
emergence.base.errors.EmergenceError: corpus file '/nonexistent/text.txt' is not a readable file
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

import numpy as np

from emergence.base.errors import EmergenceError

TOKENIZER_MARK = "#tokenizer="


def parse_corpus_source(text: str) -> tuple[str, str]:
    """``(path, tokenizer)`` of ``PATH[#tokenizer=NAME]``; :class:`EmergenceError` for an empty, missing or unreadable
    path, or the ``bpe`` tokenizer (it trains on the corpus; save it and pass the ``tokenizer.json``)."""
    path, _, tokenizer = text.partition(TOKENIZER_MARK)
    tokenizer = tokenizer or "natural"
    if not path:
        raise EmergenceError("token process corpus:PATH needs a path to a text file")
    if not Path(path).is_file() or not os.access(path, os.R_OK):
        raise EmergenceError(f"corpus file {path!r} is not a readable file")
    if tokenizer == "bpe":
        raise EmergenceError("the corpus token process takes natural, whitespace or a tokenizer.json, not bpe")
    return str(Path(path).resolve()), tokenizer


def _stamp(path: str) -> tuple[int, int]:
    status = os.stat(path)
    return status.st_size, status.st_mtime_ns


def corpus_statistics(path: str, tokenizer: str, V: int, max_lag: int):
    """:class:`~emergence.numerics.corpus.lag_statistics.LagStatistics` of the corpus at lags 0 … ``max_lag`` (cached);
    :class:`EmergenceError` (one line) where no document reaches ``max_lag`` + 1 tokens (too little text for the
    window), for an unreadable file or too few distinct tokens."""
    return _statistics(path, tokenizer, int(V), int(max_lag), _stamp(path))


@functools.lru_cache(maxsize=8)
def _statistics(path, tokenizer, V, max_lag, stamp):
    from emergence.numerics.corpus.lag_statistics import corpus_lag_statistics

    try:
        return corpus_lag_statistics(path, V, max_lag, tokenizer)
    except UnicodeDecodeError:
        raise EmergenceError(f"corpus file {path!r} is not UTF-8 text") from None
    except EmergenceError as error:
        raise EmergenceError(f"corpus {path!r} read as V = {V} classes for windows of L = {max_lag + 1}: {error}") from None


def corpus_documents(path: str, tokenizer: str, V: int, L: int) -> list[np.ndarray]:
    """The corpus's documents of at least ``L`` tokens as class ids ``(n,)`` (cached; memory 8 bytes a token)."""
    corpus_statistics(path, tokenizer, V, L - 1)  # the one-line errors first
    return _documents(path, tokenizer, int(V), int(L), _stamp(path))


@functools.lru_cache(maxsize=4)
def _documents(path, tokenizer, V, L, stamp):
    from emergence.numerics.corpus.lag_statistics import corpus_class_documents

    return [ids for ids in corpus_class_documents(path, V, tokenizer)[1] if len(ids) >= L]


def window_starts(documents: list[np.ndarray], L: int) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, lengths)``: where each document starts in the concatenated stream, and how many windows of
    ``L`` tokens it holds (``len - L + 1``)."""
    lengths = np.array([len(ids) - L + 1 for ids in documents], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([len(ids) for ids in documents])[:-1]]).astype(np.int64)
    return offsets, lengths


def file_sha256(path: str) -> str:
    """The SHA-256 of the file's bytes (hex; cached on the path, its size and modification time)."""
    return _sha256(str(path), _stamp(str(path)))


@functools.lru_cache(maxsize=8)
def _sha256(path, stamp):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def corpus_provenance(path: str, tokenizer: str, V: int, L: int) -> dict:
    """Where a corpus process's numbers come from: file, SHA-256, tokenizer, V and classes, token count, window count
    and the lag range used (0 … L − 1), with the coverage (fraction of tokens not ``<unk>``)."""
    statistics = corpus_statistics(path, tokenizer, V, L - 1)
    _, lengths = window_starts(corpus_documents(path, tokenizer, V, L), L)
    return {"file": str(path), "sha256": file_sha256(path), "tokenizer": tokenizer, "V": int(V),
            "classes": list(statistics.classes), "tokens": int(statistics.pairs[0]), "windows": int(lengths.sum()),
            "lag_range": [0, int(L) - 1], "coverage": statistics.coverage(),
            "unigram": statistics.unigram.tolist()}
