r"""The positional leading term \Delta against a model's learned position embeddings.

\Delta_d (length T, lag d = t - \tau) is what the positional vector P^{(l)} of Definition 3.1
becomes: the key-query gradient at uniform causal attention summed over the pairs at lag d,

.. math:: \Delta_d = \frac{1}{NT}\sum_{\rm seq}\sum_t Q_{t,t-d}, \qquad
          Q_{t\tau} = \frac{1}{t}\Big(M_{t\tau} - \frac{1}{t}\sum_{k\le t} M_{tk}\Big).

A model with learned absolute position embeddings p_t (GPT-2's ``wpe``) has a position-only part
of its attention logit, S_{t\tau} = (p_t W_Q)(p_\tau W_K)^\top.  Its lag profile is built the same
way as \Delta from Q (:func:`lag_profile`): centred over each query's causal keys (softmax is blind
to a per-query constant), weighted 1/t, summed along each lag,

.. math:: D_d = \sum_{t \ge d} \frac{1}{t}\Big(S_{t,t-d} - \frac{1}{t}\sum_{k\le t} S_{tk}\Big)
          \quad (t = 1, \dots, T),

and compared with \Delta by the cosine of the two T-vectors.  The noise level is the spread of that
cosine over random permutations of \Delta's lags, the baseline a random model's D.  (The token-position
cross terms of the logit, e_t W_Q W_K^\top p_\tau^\top and its transpose, are left out.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from emergence.numerics.leading_terms.token_metrics import NOISE_MULTIPLE, frobenius_cosine


def lag_profile(scores: np.ndarray) -> np.ndarray:
    r"""D_d of a T x T position-logit matrix ``scores`` (row: query position, column: key position), (T,)."""
    length = len(scores)
    causal = np.tril(np.ones((length, length), dtype=bool))
    count = np.arange(1, length + 1, dtype=float)
    means = np.where(causal, scores, 0.0).sum(axis=1) / count
    centred = np.where(causal, scores - means[:, None], 0.0) / count[:, None]
    return np.array([np.trace(centred, offset=-lag) for lag in range(length)])


@dataclass
class PositionReference:
    r"""\Delta prepared for the comparison: the lag permutations of its noise level.  The interface of
    :class:`~emergence.numerics.leading_terms.token_metrics.Reference` (``values``, ``score``), one variant."""

    delta: np.ndarray
    permutations: list

    @classmethod
    def build(cls, delta: np.ndarray, permutations: int, seed: int = 0) -> "PositionReference":
        generator = np.random.default_rng(seed)
        return cls(np.asarray(delta, dtype=float), [generator.permutation(len(delta)) for _ in range(permutations)])

    def values(self, profile: np.ndarray) -> dict[str, float]:
        """The cosine of a (random model's) lag profile with \\Delta."""
        return {"all": frobenius_cosine(profile, self.delta)}

    def score(self, profile: np.ndarray, random_values: dict[str, float] | None) -> dict:
        """The cosine with \\Delta beside the random-init baseline, the lag-permutation noise, the excess and the
        verdict (excess > :data:`NOISE_MULTIPLE` noise; no random baseline fails)."""
        value = frobenius_cosine(profile, self.delta)
        noise = float(np.std([frobenius_cosine(profile, self.delta[order]) for order in self.permutations]))
        if random_values is None:
            return {"value": value, "baselines": {"random_init": None}, "noise": noise, "passes": False,
                    "reason": "no random-init baseline"}
        excess = value - abs(random_values["all"])
        passes = excess > NOISE_MULTIPLE * noise
        return {"value": value, "baselines": {"random_init": random_values["all"]}, "strongest_baseline": "random_init",
                "excess": excess, "noise": noise, "passes": bool(passes),
                "reason": f"excess {excess:+.3f} {'above' if passes else 'within'} {NOISE_MULTIPLE:g} x noise {noise:.3f}"}
