"""Headline numbers of the leading-term theory for the golden baseline (``emergence check``).

Derived coefficients and window from the generated kernels, and norms of the corpus
statistics of the seeded story corpus (400 stories, seed 0, natural tokenizer, every
token, T = 64, all windows).

>>> [n.name for n in headline_numbers()][:2]
['leading_terms.c4_at_s10', 'leading_terms.step_limit_paper_setting']
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from emergence.validation.golden import HeadlineNumber


@lru_cache(maxsize=1)
def _story_statistics():
    from emergence.numerics.leading_terms.basis_statistics import basis_statistics
    from emergence.numerics.corpus.documents import load_corpus

    corpus = load_corpus("synthetic", context_length=64, seed=0)
    return corpus, basis_statistics(corpus.sequences, corpus.vocabulary.size, include_interchangeability=False)


def _c4_at_s10() -> float:
    from emergence.numerics.kernels.leading_terms import leading_coefficients

    return float(leading_coefficients(10, 1.0)[2])


def _step_limit_paper_setting() -> float:
    from emergence.numerics.kernels.leading_terms import leading_step_limit

    return float(leading_step_limit(0.005, 200, 3))


def _norm(field: str):
    def compute() -> float:
        return float(np.linalg.norm(getattr(_story_statistics()[1], field)))

    return compute


def headline_numbers() -> list[HeadlineNumber]:
    return [
        HeadlineNumber("leading_terms.c4_at_s10", "key-query coefficient c4(s=10) at eta=1 (3C(10,4)+2C(10,3))", _c4_at_s10),
        HeadlineNumber(
            "leading_terms.step_limit_paper_setting",
            "largest s of Theorem 4.1's window at eta=0.005, T=200, L=3",
            _step_limit_paper_setting,
        ),
        HeadlineNumber("leading_terms.story_windows", "windows of the seeded story corpus at T=64",
                       lambda: float(_story_statistics()[0].num_sequences)),
        HeadlineNumber("leading_terms.story_norm_B", "Frobenius norm of B on the story corpus", _norm("bigram")),
        HeadlineNumber("leading_terms.story_norm_Phi", "Frobenius norm of Phi on the story corpus", _norm("context")),
        HeadlineNumber("leading_terms.story_norm_Q", "Frobenius norm of Q on the story corpus", _norm("key_query")),
        HeadlineNumber("leading_terms.story_norm_Delta", "Euclidean norm of Delta on the story corpus", _norm("positional")),
    ]
