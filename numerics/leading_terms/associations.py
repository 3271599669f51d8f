r"""Nearest tokens of a query under the three association statistics.

For a query token q: ``bigram`` ranks row q of \bar B (what follows q),
``interchangeability`` ranks row q of \Sigma_{\bar B} = \bar B^\top\bar B (tokens that
are preceded by the same tokens as q; q itself is left out), ``context`` ranks row q of
\bar\Phi (tokens whose presence earlier in the sequence predicts q).  ``<unk>`` is never
listed.  Ties are broken by vocabulary index (rank order), so results are deterministic.

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
from emergence.theory.errors import EmergenceError

ASSOCIATION_KINDS: tuple[str, ...] = ("bigram", "interchangeability", "context")


def _ranked(row: np.ndarray, tokens: Sequence[str], excluded: set[int], top: int) -> list[tuple[str, float]]:
    order = np.argsort(-np.asarray(row), kind="stable")
    kept = [i for i in order if i not in excluded][:top]
    return [(tokens[i], float(row[i])) for i in kept]


def top_association_scores(
    stats: BasisStatistics, tokens: Sequence[str], query: str, top: int
) -> dict[str, list[tuple[str, float]]]:
    """(token, score) pairs of the ``top`` highest entries in each statistic's row for ``query``."""
    if query not in tokens:
        raise EmergenceError(f"query token {query!r} is not in the vocabulary")
    index = list(tokens).index(query)
    excluded = {i for i, t in enumerate(tokens) if t == UNKNOWN_TOKEN}
    interchangeability = (
        stats.interchangeability if stats.interchangeability is not None else stats.bigram.T @ stats.bigram
    )
    return {
        "bigram": _ranked(stats.bigram[index], tokens, excluded, top),
        "interchangeability": _ranked(interchangeability[index], tokens, excluded | {index}, top),
        "context": _ranked(stats.context[index], tokens, excluded, top),
    }


def top_associations(stats: BasisStatistics, tokens: Sequence[str], query: str, top: int) -> dict[str, list[str]]:
    """The ``top`` tokens of each kind for ``query`` (see :func:`top_association_scores`)."""
    scores = top_association_scores(stats, tokens, query, top)
    return {kind: [token for token, _ in pairs] for kind, pairs in scores.items()}
