"""Reusable Hypothesis strategies of the project (public test kit).

Leading-term part: random token corpora, Markov chains with known statistics, and text.

>>> from hypothesis import given
>>> @given(token_corpora(max_vocab=4, max_length=5, max_sequences=3))
... def check(corpus):
...     sequences, vocab_size = corpus
...     assert sequences.max() < vocab_size
>>> check()
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from numerics.markov_corpus import MarkovChain, markov_chain


@st.composite
def token_corpora(draw, max_vocab: int = 12, max_length: int = 16, max_sequences: int = 8, min_length: int = 1):
    """``(sequences, V)``: an (N, T + 1) int64 array of token ids in 0..V-1, V >= 2."""
    vocab_size = draw(st.integers(2, max_vocab))
    length = draw(st.integers(min_length, max_length))
    count = draw(st.integers(1, max_sequences))
    seed = draw(st.integers(0, 2**32 - 1))
    sequences = np.random.default_rng(seed).integers(0, vocab_size, size=(count, length + 1))
    return sequences.astype(np.int64), vocab_size


@st.composite
def markov_chains(draw, max_vocab: int = 8) -> MarkovChain:
    """A Markov chain with strictly positive transitions (so its stationary law is unique)."""
    vocab_size = draw(st.integers(2, max_vocab))
    seed = draw(st.integers(0, 2**32 - 1))
    concentration = draw(st.floats(0.2, 5.0))
    rows = np.random.default_rng(seed).dirichlet(np.full(vocab_size, concentration), size=vocab_size)
    return markov_chain(rows + 1e-3)


_WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéß", min_size=1, max_size=8)
_PUNCTUATION = st.sampled_from(list(".,!?;:'\"-()0123456789"))


@st.composite
def text_corpora(draw, max_documents: int = 6, max_words: int = 30) -> str:
    """UTF-8 text: documents of words and punctuation, separated by blank lines or <|endoftext|>."""
    documents = []
    for _ in range(draw(st.integers(1, max_documents))):
        pieces = draw(st.lists(st.one_of(_WORDS, _PUNCTUATION), min_size=1, max_size=max_words))
        separators = draw(st.lists(st.sampled_from([" ", " ", "  ", "\t", "\n"]), min_size=len(pieces), max_size=len(pieces)))
        documents.append("".join(p + s for p, s in zip(pieces, separators)).strip() or "x")
    joined = documents[0]
    for document in documents[1:]:
        joined += draw(st.sampled_from(["\n\n", "\n \n", "<|endoftext|>", "\n\n\n"])) + document
    return joined
