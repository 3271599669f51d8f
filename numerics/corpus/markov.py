r"""Token windows sampled from a Markov chain whose bigram statistic is known exactly.

For a chain with transition matrix P (rows sum to 1) started in its stationary law \pi,
every position has P(x_t = j, y_t = k) = \pi_j P_{jk}, so the expected bigram statistic is

.. math::  \mathbb E\,\bar B_{jk} = \pi_j P_{jk} - \pi_j / V .

>>> chain = random_markov_chain(4, seed=0)
>>> windows = sample_markov_windows(chain, count=3, context_length=5, seed=1)
>>> windows.shape
(3, 6)
>>> bool(np.allclose(expected_bigram(chain).sum(axis=1), 0))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from emergence.base.errors import InvalidSizeError


@dataclass(frozen=True)
class MarkovChain:
    """Transition matrix (V x V, rows sum to 1) and its stationary distribution (V,)."""

    transition: np.ndarray
    stationary: np.ndarray

    @property
    def vocab_size(self) -> int:
        return int(self.transition.shape[0])


def stationary_distribution(transition: np.ndarray) -> np.ndarray:
    """The left eigenvector of P for eigenvalue 1, normalised to sum 1."""
    values, vectors = np.linalg.eig(transition.T)
    vector = np.real(vectors[:, np.argmin(np.abs(values - 1))])
    return vector / vector.sum()


def markov_chain(transition) -> MarkovChain:
    """A :class:`MarkovChain` from a row-stochastic matrix with positive entries."""
    transition = np.asarray(transition, dtype=float)
    if transition.ndim != 2 or transition.shape[0] != transition.shape[1] or transition.shape[0] < 2:
        raise InvalidSizeError(f"transition matrix must be V x V with V >= 2, got {transition.shape}")
    transition = transition / transition.sum(axis=1, keepdims=True)
    return MarkovChain(transition, stationary_distribution(transition))


def random_markov_chain(vocab_size: int, seed: int = 0, concentration: float = 0.3) -> MarkovChain:
    """Rows drawn from a Dirichlet(concentration) law (small concentration: sparse, peaked rows)."""
    rng = np.random.default_rng(seed)
    rows = rng.dirichlet(np.full(vocab_size, concentration), size=vocab_size) + 1e-6
    return markov_chain(rows)


def sample_markov_windows(chain: MarkovChain, count: int, context_length: int, seed: int = 0) -> np.ndarray:
    """``count`` windows of ``context_length + 1`` tokens, each started in the stationary law."""
    rng = np.random.default_rng(seed)
    cumulative = np.cumsum(chain.transition, axis=1)
    windows = np.empty((count, context_length + 1), dtype=np.int64)
    windows[:, 0] = rng.choice(chain.vocab_size, size=count, p=chain.stationary)
    for position in range(1, context_length + 1):
        draws = rng.random(count)[:, None]
        rows = cumulative[windows[:, position - 1]]
        windows[:, position] = np.minimum((draws > rows).sum(axis=1), chain.vocab_size - 1)
    return windows


def expected_bigram(chain: MarkovChain) -> np.ndarray:
    """E B̄ = diag(pi) P - pi 1^T / V for a stationary chain."""
    return chain.stationary[:, None] * chain.transition - chain.stationary[:, None] / chain.vocab_size
