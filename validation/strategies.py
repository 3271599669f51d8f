r"""Hypothesis strategies for regression-testing attention theory in your own test suite.

The project's own tests use these; they are public so that a researcher can property-test
a modified model against the engine's invariants.  They need Hypothesis, the ``testing``
extra (``pip install 'emergence[testing]'``).

Sizes are drawn log-uniformly (every decade equally likely), because scaling laws care
about orders of magnitude, not about the upper end of a range:

>>> from hypothesis import given, settings
>>> @settings(max_examples=5, database=None)
... @given(log_uniform_integers(4, 4096))
... def check(L):
...     assert 4 <= L <= 4096
>>> check()

Attention matrices come in the two families the theory uses: row-stochastic (softmax) and
unconstrained real (linear), each of shape ``(L, L)``.

For the leading-term theory: random token corpora ``(sequences, V)``, Markov chains with
known statistics (:mod:`emergence.numerics.corpus.markov`) and UTF-8 text with document separators.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from emergence.numerics.corpus.markov import MarkovChain, markov_chain


def log_uniform_integers(low: int, high: int) -> st.SearchStrategy[int]:
    r"""Integers in ``[low, high]`` with :math:`\ln n` uniform; shrinks towards ``low``."""
    if not 1 <= low <= high:
        raise ValueError(f"need 1 <= low <= high, got {low}, {high}")
    log_low, log_high = math.log(low), math.log(high)
    return st.floats(0.0, 1.0).map(
        lambda u: min(high, max(low, round(math.exp(log_low + u * (log_high - log_low)))))
    )


def log_uniform_floats(low: float, high: float) -> st.SearchStrategy[float]:
    r"""Floats in ``[low, high]`` with :math:`\ln x` uniform."""
    if not 0 < low <= high:
        raise ValueError(f"need 0 < low <= high, got {low}, {high}")
    log_low, log_high = math.log(low), math.log(high)
    return st.floats(0.0, 1.0).map(lambda u: min(high, max(low, math.exp(log_low + u * (log_high - log_low)))))


def sequence_lengths(low: int = 4, high: int = 1024) -> st.SearchStrategy[int]:
    """Sequence length ``L`` (copy head) or context length ``T`` (leading terms)."""
    return log_uniform_integers(low, high)


def vocabulary_sizes(low: int = 2, high: int = 256) -> st.SearchStrategy[int]:
    """Vocabulary size ``V``."""
    return log_uniform_integers(low, high)


def sample_counts(low: int = 1, high: int = 10**7) -> st.SearchStrategy[int]:
    """Number of training sequences ``P``."""
    return log_uniform_integers(low, high)


@st.composite
def model_sizes(draw, max_L: int = 1024, max_V: int = 256, max_P: int = 10**7) -> dict[str, int]:
    """A dictionary ``{"L", "V", "P"}`` of log-uniform sizes."""
    return {
        "L": draw(sequence_lengths(2, max_L)),
        "V": draw(vocabulary_sizes(2, max_V)),
        "P": draw(sample_counts(1, max_P)),
    }


def _random_state(draw) -> np.random.Generator:
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1)))


@st.composite
def softmax_attention_matrices(draw, L: int | None = None, max_L: int = 64, scale: float = 3.0) -> np.ndarray:
    r"""Row-stochastic ``(L, L)`` matrices :math:`A = \mathrm{softmax}_\mathrm{row}(G)`, :math:`G_{ij} \sim N(0, \mathrm{scale}^2)`."""
    size = L if L is not None else draw(sequence_lengths(2, max_L))
    logits = _random_state(draw).normal(0.0, scale, size=(size, size))
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=1, keepdims=True)


@st.composite
def linear_attention_matrices(draw, L: int | None = None, max_L: int = 64, scale: float = 1.0) -> np.ndarray:
    r"""Unconstrained ``(L, L)`` real matrices with i.i.d. :math:`N(0, \mathrm{scale}^2)` entries."""
    size = L if L is not None else draw(sequence_lengths(2, max_L))
    return _random_state(draw).normal(0.0, scale, size=(size, size))


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


@st.composite
def conventions(draw, architectures: tuple[str, ...] = ("T", "M")):
    r"""Copy-head :class:`~emergence.theory.copy_head.conventions.Convention` values over the knobs' useful ranges.

    Scales log-uniform in [0.1, 10]; exponents a in [0, 3], c in [0, 2], r in [0, 2], d in [0, 2], e in [0, 1];
    every discrete choice (architecture, normalisation, shift, targets) drawn.
    """
    from emergence.theory.copy_head.conventions import Convention

    return Convention(
        architecture=draw(st.sampled_from(architectures)),
        sigma_G2=draw(log_uniform_floats(0.1, 10.0)),
        a=draw(st.floats(0.0, 3.0)),
        sigma_W2=draw(log_uniform_floats(0.1, 10.0)),
        c=draw(st.floats(0.0, 2.0)),
        r=draw(st.floats(0.0, 2.0)),
        beta0=draw(log_uniform_floats(0.1, 10.0)),
        d=draw(st.floats(0.0, 2.0)),
        e=draw(st.floats(0.0, 1.0)),
        normalisation=draw(st.sampled_from(("matched", "G/L", "G"))),
        shift=draw(st.sampled_from(("cyclic", "open"))),
        targets=draw(st.sampled_from(("raw", "centred"))),
    )
