r"""Nearest tokens of a query under the three association statistics, with scores.

For a query token q:

- ``bigram`` ranks row q of \bar B (what follows q);
- ``interchangeability`` ranks row q of \Sigma_{\bar B} = \bar B^\top\bar B (tokens that are
  preceded by the same tokens as q).  Following the paper's Fig. 5 the query itself is part
  of its own list (it is listed where its score puts it: first under ``cosine`` and ``pmi``,
  whose self-similarity is 1);
- ``context`` ranks row q of \bar\Phi (tokens whose presence earlier in the sequence
  predicts q).

Only tokens the corpus has actually shown in that relation are listed, never padding:
\bar B_{qk} = p(q)\,(p(k\mid q) - 1/V) and \bar\Phi_{qk} are centred on the uniform
prediction, so a positive entry means "more often than chance" and every pair never seen
together has a negative entry; bigram and context lists keep positive scores only.  The
interchangeability list keeps tokens seen at least once as a target (column sum of \bar B
above -1/V, since \sum_j \bar B_{jk} = p_y(k) - 1/V) and, under ``cosine`` and ``pmi``,
a positive similarity and a target count c(k) = N T p_y(k) of at least ``min_count``
(:data:`DEFAULT_MIN_COUNT`, 10; see below).  ``<unk>`` is never listed.  Under ``cosine`` and
``pmi`` the query comes first (its self-similarity is 1, the largest possible, but other
tokens can tie with it); the rest are ranked by score, ties broken by vocabulary index
(rank order), so results are deterministic.

Normalisation of interchangeability (``normalize``)
---------------------------------------------------
With \bar B_{jk} = p(j,k) - p(j)/V (p(j, k): frequency of the bigram j k; p(j), p(k): the
input and target marginals),

.. math:: (\Sigma_{\bar B})_{qk} = \sum_j \bar B_{jq}\bar B_{jk}
          \approx \sum_j p(j)^2\, p(q\mid j)\, p(k\mid j),

which grows with the frequency of k and is dominated by the most frequent predecessors j:
frequent punctuation and function words win by magnitude, not by similarity.

- ``none``: the raw row of \Sigma_{\bar B} (the theory's own matrix, what the weights
  learn).
- ``cosine``: (\Sigma_{\bar B})_{qk} / \sqrt{(\Sigma_{\bar B})_{qq}(\Sigma_{\bar B})_{kk}},
  the cosine of columns q and k of \bar B; removes the size of k's column but not the
  weight of frequent predecessors.
- ``pmi``: the cosine of columns of the positive pointwise mutual information

  .. math:: M_{jk} = \max\Bigl(0, \log\frac{p(j,k)}{p(j)\,p(k)}\Bigr)
            = \max\Bigl(0, \log\frac{p(j\mid k)}{p(j)}\Bigr),

  with p(j, k) = \bar B_{jk} + p(j)/V recovered exactly from \bar B and the input marginal.
  M_{jk} is the (log) lift of predecessor j among the tokens that precede k: dividing by
  p(j) and p(k) removes both the frequency of the candidate k and the weight of frequent
  predecessors, so two tokens score high when the same predecessors are over-represented
  before both of them, whatever their frequencies.  Clipping at 0 keeps the predecessors
  that k attracts (log 0 = -\infty for unseen pairs becomes 0).

Minimum count.  Both normalisations divide out the size of k's column, so a token seen a
handful of times as a target gets a column with one or two entries and a score of exactly 1
with any query whose column points the same way (on ``novels_excerpts.txt`` at K = 2000,
``pmi``: 33 tokens seen 4 to 19 times, jury, knave, executioner, notary, ..., tie at 1 with
king; 732 tied pairs in all, 213 under ``cosine``).  Its predecessor distribution rests on
c(k) bigrams (counted in the windows), so under ``cosine`` and ``pmi`` a candidate needs
c(k) >= ``min_count``, default 10: the tied pairs there fall to 2 under ``pmi`` and 0 under
``cosine``.  King still ties with jury (seen 19 times, 18 after "the"): king follows "the"
63 times in 65 and its other predecessor, "a", is below chance, so after clipping both
columns hold "the" alone, an exact property of the clipped columns, not noise.  A larger
minimum (20) removes that tie too, but on ``tinystories_sample.txt`` (BPE, K = 2000) it
also drops " sad" and " excited" (seen fewer than 20 times in the windows) from " happy"'s
list, which they lead at 10.
A tie is a score within 2^-40 of 1 (about 4.5e3 rounding units of 1.0).

>>> import numpy as np
>>> from emergence.numerics.leading_terms.basis_statistics import basis_statistics
>>> stats = basis_statistics(np.array([[0, 1, 2, 0, 1, 2, 0]]), 3)
>>> top_associations(stats, ("a", "b", "c"), "a", 1)["bigram"]
['b']
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from emergence.numerics.leading_terms.basis_statistics import BasisStatistics
from emergence.numerics.corpus.vocabulary import UNKNOWN_TOKEN
from emergence.base.errors import EmergenceError

ASSOCIATION_KINDS: tuple[str, ...] = ("bigram", "interchangeability", "context")
NORMALIZATIONS: tuple[str, ...] = ("none", "cosine", "pmi")
DEFAULT_MIN_COUNT = 10


def input_frequency(inputs: np.ndarray, vocab_size: int) -> np.ndarray:
    """p(j): how often token j is an input position x_t, over all N T positions (length V)."""
    inputs = np.asarray(inputs)
    return np.bincount(inputs.ravel(), minlength=vocab_size) / inputs.size


def joint_bigram(bigram: np.ndarray, frequency: np.ndarray) -> np.ndarray:
    r"""p(j, k) = \bar B_{jk} + p(j)/V, the bigram frequency that \bar B centres."""
    return bigram + frequency[:, None] / bigram.shape[0]


def positive_pmi(bigram: np.ndarray, frequency: np.ndarray, positions: int) -> np.ndarray:
    r"""M_{jk} = max(0, log p(j,k) / (p(j) p(k))) with p(k) the target marginal; 0 where p(j,k) = 0.

    ``positions`` = N T: frequencies are multiples of 1/(N T), so entries below half of it
    are zero counts up to rounding.
    """
    joint = joint_bigram(bigram, frequency)
    observed = joint > 0.5 / positions
    joint = np.where(observed, joint, 0.0)
    expected = np.outer(frequency, joint.sum(axis=0))
    ratio = np.divide(joint, expected, out=np.ones_like(joint), where=observed)
    return np.maximum(np.log(ratio), 0.0)


def interchangeability_row(
    stats: BasisStatistics, index: int, normalize: str = "none", frequency: np.ndarray | None = None
) -> np.ndarray:
    r"""Row ``index`` of \Sigma_{\bar B}, or of its ``cosine`` / ``pmi`` normalisation (module docstring)."""
    if normalize not in NORMALIZATIONS:
        raise EmergenceError(f"unknown normalisation {normalize!r}; choose {', '.join(NORMALIZATIONS)}")
    bigram = stats.bigram
    if normalize == "pmi":
        if frequency is None:
            raise EmergenceError("the pmi normalisation needs the input token frequencies")
        columns = positive_pmi(bigram, frequency, stats.num_sequences * stats.context_length)
    else:
        columns = bigram
    row = columns[:, index] @ columns
    if normalize == "none":
        return row
    norms = np.sqrt(np.einsum("jk,jk->k", columns, columns))
    return np.divide(row, norms * norms[index], out=np.zeros_like(row), where=norms * norms[index] > 0)


def _ranked(row: np.ndarray, tokens: Sequence[str], allowed: np.ndarray, top: int,
            first: int | None = None) -> list[tuple[str, float]]:
    """The ``top`` allowed tokens by descending ``row`` (stable: ties in index order), ``first`` ahead of all."""
    order = np.argsort(-np.asarray(row), kind="stable")
    if first is not None:
        order = np.concatenate(([first], order[order != first]))
    kept = [int(i) for i in order if allowed[i]][:top]
    return [(tokens[i], float(row[i])) for i in kept]


def target_counts(stats: BasisStatistics) -> np.ndarray:
    r"""c(k) = N T p_y(k), how often token k is a target, from the column sums of \bar B (= p_y(k) - 1/V)."""
    positions = stats.num_sequences * stats.context_length
    return np.rint((stats.bigram.sum(axis=0) + 1.0 / stats.bigram.shape[0]) * positions).astype(np.int64)


def top_association_scores(
    stats: BasisStatistics,
    tokens: Sequence[str],
    query: str,
    top: int,
    normalize: str = "none",
    frequency: np.ndarray | None = None,
    min_count: int = DEFAULT_MIN_COUNT,
) -> dict[str, list[tuple[str, float]]]:
    """(token, score) pairs of the ``top`` highest entries in each statistic's row for ``query``.

    ``frequency`` is p(j) of :func:`input_frequency` (needed by ``normalize="pmi"``);
    ``min_count`` is the least target count of a listed token under ``cosine`` and ``pmi``
    (the query itself is listed first whatever its count).
    """
    if query not in tokens:
        raise EmergenceError(f"query token {query!r} is not in the vocabulary")
    if min_count < 1:
        raise EmergenceError(f"the minimum count must be at least 1, got {min_count}")
    index = list(tokens).index(query)
    known = np.array([token != UNKNOWN_TOKEN for token in tokens])
    counts = target_counts(stats)
    bigram_row, context_row = stats.bigram[index], stats.context[index]
    similarity = interchangeability_row(stats, index, normalize, frequency)
    if normalize == "none":
        similar, first = counts > 0, None
    else:
        similar, first = (counts >= min_count) & (similarity > 0), index
        similar[index] = counts[index] > 0 and similarity[index] > 0
    return {
        "bigram": _ranked(bigram_row, tokens, known & (bigram_row > 0), top),
        "interchangeability": _ranked(similarity, tokens, known & similar, top, first),
        "context": _ranked(context_row, tokens, known & (context_row > 0), top),
    }


def top_associations(stats: BasisStatistics, tokens: Sequence[str], query: str, top: int, **options) -> dict[str, list[str]]:
    """The ``top`` tokens of each kind for ``query`` (see :func:`top_association_scores`)."""
    scores = top_association_scores(stats, tokens, query, top, **options)
    return {kind: [token for token, _ in pairs] for kind, pairs in scores.items()}
