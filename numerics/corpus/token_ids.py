r"""A corpus tokenized once by a saved subword tokenizer into a memory-mapped id file: the tokenizer's
own ids in windows, and the top-K vocabulary indices of the same windows read from it chunk by chunk.

The statistics need vocabulary indices (the K most frequent tokens, then ``<unk>``); a forward
pass through a checkpoint needs the tokenizer's ids, ``<unk>`` positions included.  Both come from
one streamed pass: documents are encoded ``batch_documents`` at a time (``encode_batch``), each
batch's windows of T + 1 ids are appended to an int32 file, and the token counts and first
occurrences are accumulated; nothing but one batch is held.  The vocabulary is ranked by count
with ties in first-occurrence order, exactly as
:func:`~emergence.numerics.corpus.documents.load_corpus` ranks the token strings
(``Counter.most_common`` over the documents in order), and the vocabulary indices are a lookup of
the ids (:meth:`IdCorpus.chunks`), so the windows equal ``load_corpus(..., oov="unk",
windows="all")``'s (test).  The file is read back as a ``numpy.memmap`` (N, T + 1).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from emergence.numerics.corpus.documents import CorpusTooShortError, check_window_options, corpus_vocabulary, token_windows
from emergence.numerics.corpus.vocabulary import Vocabulary

DEFAULT_BATCH_DOCUMENTS = 1024
DEFAULT_CHUNK_WINDOWS = 4096


@dataclass(frozen=True)
class IdCorpus:
    """Windows ``ids`` (N, T + 1) of tokenizer ids (a memory map of the id file), the ``vocabulary``
    (K tokens plus ``<unk>``), the tokenizer ids of its K tokens and the id -> index ``lookup``."""

    ids: np.ndarray
    vocabulary: Vocabulary
    token_ids: np.ndarray
    lookup: np.ndarray
    tokenizer: object

    @property
    def num_sequences(self) -> int:
        return int(self.ids.shape[0])

    @property
    def context_length(self) -> int:
        return int(self.ids.shape[1]) - 1

    def chunks(self, windows: int = DEFAULT_CHUNK_WINDOWS) -> Iterator[np.ndarray]:
        """Vocabulary indices of the windows, ``windows`` at a time, in corpus order (int64)."""
        for start in range(0, self.num_sequences, windows):
            yield self.lookup[np.asarray(self.ids[start : start + windows])]

    @property
    def sequences(self) -> np.ndarray:
        """Every window's vocabulary indices at once, (N, T + 1)."""
        return np.concatenate(list(self.chunks()))


class _Occurrences:
    """Token counts and first positions over a stream of id arrays."""

    def __init__(self, size: int):
        self.counts = np.zeros(size, dtype=np.int64)
        self.first = np.full(size, np.iinfo(np.int64).max, dtype=np.int64)
        self.seen = 0

    def add(self, ids: np.ndarray) -> None:
        if ids.size and ids.max() >= len(self.counts):
            grow = int(ids.max()) + 1 - len(self.counts)
            self.counts = np.concatenate([self.counts, np.zeros(grow, dtype=np.int64)])
            self.first = np.concatenate([self.first, np.full(grow, np.iinfo(np.int64).max, dtype=np.int64)])
        values, where = np.unique(ids, return_index=True)
        self.first[values] = np.minimum(self.first[values], where + self.seen)
        self.counts += np.bincount(ids, minlength=len(self.counts))
        self.seen += ids.size

    def ranked(self, backend) -> Counter:
        """Counts of the token strings, inserted in first-occurrence order (what ``Counter.most_common`` ties by)."""
        present = np.flatnonzero(self.counts)
        return Counter({backend.id_to_token(int(i)): int(self.counts[i])
                        for i in present[np.argsort(self.first[present], kind="stable")]})


def id_corpus(documents: Iterable[str], tokenizer, top_k: int, context_length: int, ids_path: str | Path,
              batch_documents: int = DEFAULT_BATCH_DOCUMENTS) -> IdCorpus:
    """Tokenize ``documents`` (a stream) once with ``tokenizer`` (a
    :class:`~emergence.numerics.corpus.subword.SubwordTokenizer`), writing every document's non-overlapping
    windows of T + 1 ids to ``ids_path`` (int32); :class:`CorpusTooShortError` when no window results."""
    check_window_options(context_length, "all")
    backend = tokenizer.backend
    occurrences = _Occurrences(backend.get_vocab_size())
    stream, rows = iter(documents), 0
    with open(ids_path, "wb") as out:
        while batch := list(islice(stream, batch_documents)):
            for encoding in backend.encode_batch(batch, add_special_tokens=False):
                occurrences.add(np.asarray(encoding.ids, dtype=np.int64))
                windows = token_windows(encoding.ids, context_length, "all")
                rows += len(windows)
                out.write(np.asarray(windows, dtype=np.int32).tobytes())
    if not rows:
        raise CorpusTooShortError(f"no document gives a window of T+1={context_length + 1} tokens; it needs "
                                  "longer documents, or a smaller T")
    vocabulary = corpus_vocabulary(tokenizer, occurrences.ranked(backend), top_k, "unk")
    token_ids = np.array([backend.token_to_id(token) for token in vocabulary.tokens[:-1]], dtype=np.int64)
    lookup = np.full(len(occurrences.counts), len(token_ids), dtype=np.int64)
    lookup[token_ids] = np.arange(len(token_ids))
    ids = np.memmap(ids_path, dtype=np.int32, mode="r", shape=(rows, context_length + 1))
    return IdCorpus(ids, vocabulary, token_ids, lookup, tokenizer)
