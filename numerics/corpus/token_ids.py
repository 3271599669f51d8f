r"""A corpus tokenized once by a saved subword tokenizer: the tokenizer's own ids in windows, and
the top-K vocabulary indices of the same windows, both from one pass of the tokenizer.

The statistics need vocabulary indices (the K most frequent tokens, then ``<unk>``); a forward
pass through a checkpoint needs the tokenizer's ids, ``<unk>`` positions included.  Both come
from one ``encode_batch`` of the documents: the vocabulary is ranked by count with ties in
first-occurrence order, exactly as :func:`~emergence.numerics.corpus.documents.load_corpus` ranks
the token strings (``Counter.most_common`` over the documents in order), and the indices are a
lookup of the ids, so the windows equal ``load_corpus(..., oov="unk", windows="all")``'s (test).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from emergence.numerics.corpus.documents import CorpusTooShortError, check_window_options, corpus_vocabulary, token_windows
from emergence.numerics.corpus.vocabulary import Vocabulary


@dataclass(frozen=True)
class IdCorpus:
    """Windows ``ids`` (N, T + 1) of tokenizer ids, ``sequences`` (N, T + 1) of vocabulary indices,
    the ``vocabulary`` (K tokens plus ``<unk>``) and the tokenizer ids of its K tokens."""

    ids: np.ndarray
    sequences: np.ndarray
    vocabulary: Vocabulary
    token_ids: np.ndarray
    tokenizer: object

    @property
    def num_sequences(self) -> int:
        return int(self.ids.shape[0])

    @property
    def context_length(self) -> int:
        return int(self.ids.shape[1]) - 1


def id_corpus(documents: Sequence[str], tokenizer, top_k: int, context_length: int) -> IdCorpus:
    """Tokenize ``documents`` once with ``tokenizer`` (a :class:`~emergence.numerics.corpus.subword.SubwordTokenizer`)
    and cut every document into non-overlapping windows of T + 1 ids."""
    check_window_options(context_length, "all")
    backend = tokenizer.backend
    encoded = [np.asarray(e.ids, dtype=np.int64) for e in backend.encode_batch(list(documents), add_special_tokens=False)]
    stream = np.concatenate(encoded) if encoded else np.zeros(0, dtype=np.int64)
    seen, first, counts = np.unique(stream, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    ranked = Counter({backend.id_to_token(int(seen[i])): int(counts[i]) for i in order})
    vocabulary = corpus_vocabulary(tokenizer, ranked, top_k, "unk")
    token_ids = np.array([backend.token_to_id(token) for token in vocabulary.tokens[:-1]], dtype=np.int64)
    rows = [window for ids in encoded for window in token_windows(ids, context_length, "all")]
    if not rows:
        raise CorpusTooShortError(f"no document of {len(documents)} gives a window of T+1={context_length + 1} "
                                  "tokens; it needs longer documents, or a smaller T")
    windows = np.stack(rows)
    lookup = np.full(int(max(stream.max(), token_ids.max())) + 1, len(token_ids), dtype=np.int64)
    lookup[token_ids] = np.arange(len(token_ids))
    return IdCorpus(windows, lookup[windows], vocabulary, token_ids, tokenizer)

