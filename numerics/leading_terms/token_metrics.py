r"""Two metrics that compare a model's token-space matrix with a leading-term matrix, each beside
baselines that say how much of the number is token frequency, and a verdict that can fail.

Rows are the K tokens of the comparison, in frequency-rank order (most frequent first).

- ``gram`` (the paper's Pythia comparison): a K x m matrix A is replaced by its row-normalised
  Gram matrix

  .. math:: \hat G(A) = D^{-1} A A^\top D^{-1}, \qquad D = \mathrm{diag}(\|a_1\|, \dots, \|a_K\|),

  the cosine similarity of its token rows (a zero row gives a zero row and column), and two
  Grams are compared by the Pearson correlation of their off-diagonal entries (the diagonal is
  1 by construction and would inflate any agreement; the centring removes the common offset).
  Rows of A may be anything indexed by the token: a layer's mean hidden state (K x d) or a
  K x K weight map.
- ``weight``: the Frobenius cosine :math:`\mathrm{tr}(A^\top B)/(\|A\|_F\|B\|_F)` of the K x K
  matrices themselves (the weight-space cosine of the earlier command).

Every number :math:`m` comes with

- **baselines** of the same metric: ``frequency``, the model's matrix against the frequency outer
  product :math:`pp^\top` (:math:`p` the tokens' unigram frequencies; for ``gram`` the reference
  Gram is :math:`pp^\top` itself, the rank-one Gram of the one-feature representation
  :math:`p_i`: the row-normalised Gram of :math:`pp^\top` is all ones and says nothing), and
  ``random_init``, a randomly initialised model of the same shape against the theory;
- the **variants** ``rank_above_k0`` (both sides restricted to the tokens of rank > k0: the
  sub-block of the compared K x K matrices) and ``top_component_removed`` (both matrices minus
  their top singular component :math:`\sigma_1 u_1 v_1^\top` before the comparison), each with the
  same baselines;
- a **noise** level: the standard deviation of the metric over random relabelings of the theory's
  tokens (one permutation applied to the rows and the columns of the theory's K x K matrix);
- the **excess** :math:`m - \max |\text{baseline}|` (a baseline's strength is its size: a model
  anti-aligned with :math:`pp^\top` is as frequency-bound as an aligned one, and the theory
  matrices themselves are strongly signed against it, e.g. :math:`\bar Q`) and a **verdict**: passes when the excess
  exceeds :data:`NOISE_MULTIPLE` noise levels with all tokens and with the top component removed
  (a model that learned only frequencies has its agreement in the top component and in the
  frequency baseline, and fails; the rank > k0 variant is reported, not required: the statistics
  of rare tokens are themselves noisy on a small corpus).

The frequency baseline is evaluated without forming :math:`pp^\top`:
:math:`\cos(A, pp^\top) = p^\top A p / (\|A\|_F \|p\|^2)`, and the off-diagonal moments of
:math:`pp^\top` from the power sums of :math:`p` (:func:`offdiagonal_correlation_with_outer`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

METRICS: tuple[str, ...] = ("gram", "weight")
VARIANTS: tuple[str, ...] = ("all", "rank_above_k0", "top_component_removed")
BASELINES: tuple[str, ...] = ("frequency", "random_init")
NOISE_MULTIPLE = 3.0
"""The verdict's margin: the excess over the strongest baseline must exceed this many noise levels."""
DEFAULT_PERMUTATIONS = 8
DENSE_SVD_LIMIT = 512
"""Up to this smaller dimension the top singular component comes from a dense SVD, above it from ARPACK."""


@dataclass(frozen=True)
class Factored:
    r"""A K x K matrix L R^\top held as its factors ``left`` L and ``right`` R (K x r), never formed unless
    asked (:meth:`dense`): a head's map (E W_Q)(E W_K)^\top has rank d_h, so its row-normalised Gram costs
    K^2 r instead of K^3 and its top singular component comes from an r x r SVD."""

    left: np.ndarray
    right: np.ndarray

    def dense(self) -> np.ndarray:
        return self.left @ self.right.T

    @staticmethod
    def concatenate(parts: list["Factored"]) -> "Factored":
        r"""\sum_i L_i R_i^\top as one factored matrix of rank \sum_i r_i."""
        return Factored(np.hstack([p.left for p in parts]), np.hstack([p.right for p in parts]))


def _dense(matrix) -> np.ndarray:
    return matrix.dense() if isinstance(matrix, Factored) else matrix


def default_k0(keep: int) -> int:
    """The rank cut of the ``rank_above_k0`` variant: 50, at most half of the K tokens."""
    return min(50, keep // 2)


def row_normalised_gram(matrix) -> np.ndarray:
    r""":math:`D^{-1} A A^\top D^{-1}` of a K x m matrix: the cosine similarity of its rows, (K, K).

    For a :class:`Factored` A = L R^\top: A A^\top = L (R^\top R) L^\top, in K^2 r."""
    if isinstance(matrix, Factored):
        weighted = matrix.left @ (matrix.right.T @ matrix.right)
        norms = np.sqrt(np.maximum(np.einsum("ij,ij->i", weighted, matrix.left), 0.0))
        scale = np.where(norms > 0, norms, 1.0)[:, None]
        return (weighted / scale) @ (matrix.left / scale).T
    norms = np.linalg.norm(matrix, axis=1)
    unit = matrix / np.where(norms > 0, norms, 1.0)[:, None]
    return unit @ unit.T


def frobenius_cosine(a: np.ndarray, b: np.ndarray) -> float:
    r"""tr(A^\top B) / (\|A\|_F \|B\|_F); 0 when either is zero."""
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.vdot(a, b) / norm) if norm > 0 else 0.0


def offdiagonal_moments(matrix: np.ndarray) -> tuple[int, float, float]:
    r"""Count, sum and sum of squares of the off-diagonal entries of a K x K matrix, without a copy:
    :math:`\sum_{i\ne j} a_{ij} = \sum_{ij} a_{ij} - \mathrm{tr}\,a`, :math:`\sum_{i\ne j} a_{ij}^2 = \|a\|_F^2 - \sum_i a_{ii}^2`."""
    diagonal = np.diagonal(matrix)
    return len(matrix) * (len(matrix) - 1), float(matrix.sum() - diagonal.sum()), float(_inner(matrix, matrix) - diagonal @ diagonal)


def _inner(a: np.ndarray, b: np.ndarray) -> float:
    r""":math:`\sum_{ij} a_{ij} b_{ij}` (BLAS for contiguous arrays; no copy of a sub-block view)."""
    if a.flags.c_contiguous and b.flags.c_contiguous:
        return float(np.vdot(a, b))
    return float(np.einsum("ij,ij->", a, b))


def centre_offdiagonal(matrix: np.ndarray) -> np.ndarray:
    r"""Subtract the mean of the off-diagonal entries from the whole matrix, in place, and return it.

    The off-diagonal Pearson correlation is unchanged (it is shift-invariant); what changes is its
    rounding: from power sums the error grows like :math:`(\mu/\sigma)^2` rounding units, and a random
    model's mean hidden states have Grams with :math:`\mu \approx 0.98`, :math:`\sigma \approx 0.004`.

    >>> g = centre_offdiagonal(np.array([[1.0, 0.9], [0.7, 1.0]]))
    >>> g.round(12).tolist()
    [[0.2, 0.1], [-0.1, 0.2]]
    """
    count, total, _ = offdiagonal_moments(matrix)
    matrix -= total / count
    return matrix


@dataclass(frozen=True)
class Moments:
    r"""What a metric needs of one matrix besides its inner product with the other.

    ``gram``: the off-diagonal count :math:`n`, sum :math:`S` and sum of squares :math:`S_2`, and the
    diagonal; ``weight``: the squared Frobenius norm (``squares``; the diagonal is kept, unused).  A
    relabeling of the tokens (rows and columns permuted together) maps off-diagonal entries to
    off-diagonal entries, so it changes none of them but the diagonal's order (:meth:`relabelled`)."""

    count: int
    total: float
    squares: float
    diagonal: np.ndarray

    @classmethod
    def of(cls, metric: str, matrix: np.ndarray) -> "Moments":
        diagonal = np.diagonal(matrix).copy()
        if metric == "gram":
            return cls(*offdiagonal_moments(matrix), diagonal)
        return cls(matrix.size, 0.0, _inner(matrix, matrix), diagonal)

    def relabelled(self, order: np.ndarray) -> "Moments":
        return Moments(self.count, self.total, self.squares, self.diagonal[order])


def similarity_from(metric: str, inner: float, a: Moments, b: Moments) -> float:
    r"""The metric from :math:`\sum_{ij} a_{ij} b_{ij}` and each side's :class:`Moments`; 0 when a side is constant (zero).

    ``weight``: :math:`\langle a, b\rangle / (\|a\|_F \|b\|_F)`.  ``gram``: with the diagonal's share subtracted,
    :math:`S_{ab} = \langle a, b\rangle - \sum_i a_{ii} b_{ii}`,
    :math:`r = (S_{ab} - S_a S_b/n) / \sqrt{(S_{2,a} - S_a^2/n)(S_{2,b} - S_b^2/n)}`."""
    if metric == "weight":
        norm = float(np.sqrt(a.squares * b.squares))
        return float(inner / norm) if norm > 0 else 0.0
    covariance = inner - a.diagonal @ b.diagonal - a.total * b.total / a.count
    spread = (a.squares - a.total**2 / a.count) * (b.squares - b.total**2 / b.count)
    return float(covariance / np.sqrt(spread)) if spread > 0 else 0.0


def relabelled_inner(a: np.ndarray, b: np.ndarray, order: np.ndarray, rows: int = 256) -> float:
    r""":math:`\sum_{ij} a_{ij} b_{\pi_i \pi_j}` for the relabeling :math:`\pi` = ``order``, ``rows`` rows at a time
    (never the whole relabelled K x K matrix: a block of ``rows`` x K is gathered and multiplied, then dropped).

    Rows are gathered by indexing, not ``np.take``: on a strided view (the rank > k0 sub-block) ``take``
    first copies the whole array, 0.19 s per block at K = 5000 against 3 ms."""
    return float(sum(_inner(a[start : start + rows], b[order[start : start + rows]][:, order])
                     for start in range(0, len(order), rows)))


def offdiagonal_correlation_with_outer(matrix: np.ndarray, p: np.ndarray) -> float:
    r"""Pearson correlation of the off-diagonal entries of ``matrix`` and of :math:`pp^\top`, from sums:
    :math:`\sum_{i\ne j} g_{ij} p_i p_j = p^\top G p - \sum_i g_{ii} p_i^2`,
    :math:`\sum_{i\ne j} p_i p_j = (\sum p)^2 - \sum p^2`, :math:`\sum_{i\ne j} p_i^2 p_j^2 = (\sum p^2)^2 - \sum p^4`."""
    count, sum_x, sum_xx = offdiagonal_moments(matrix)
    sum_y = p.sum() ** 2 - np.vdot(p, p)
    sum_yy = np.vdot(p, p) ** 2 - np.sum(p**4)
    sum_xy = p @ matrix @ p - np.sum(np.diag(matrix) * p**2)
    covariance = sum_xy - sum_x * sum_y / count
    spread = (sum_xx - sum_x**2 / count) * (sum_yy - sum_y**2 / count)
    return float(covariance / np.sqrt(spread)) if spread > 0 else 0.0


def cosine_with_outer(matrix: np.ndarray, p: np.ndarray) -> float:
    r""":math:`\cos(A, pp^\top) = p^\top A p / (\|A\|_F \|p\|^2)`."""
    norm = float(np.linalg.norm(matrix) * np.vdot(p, p))
    return float(p @ matrix @ p / norm) if norm > 0 else 0.0


def without_top_component(matrix):
    r""":math:`A - \sigma_1 u_1 v_1^\top`: the matrix with its top singular component removed (a :class:`Factored`
    one stays factored: thin QR of both factors, the SVD of the r x r core, one more column)."""
    if isinstance(matrix, Factored):
        q_left, r_left = np.linalg.qr(matrix.left)
        q_right, r_right = np.linalg.qr(matrix.right)
        u, s, vt = np.linalg.svd(r_left @ r_right.T)
        return Factored(np.hstack([matrix.left, -s[0] * (q_left @ u[:, :1])]), np.hstack([matrix.right, q_right @ vt[:1].T]))
    if min(matrix.shape) <= DENSE_SVD_LIMIT:
        u, s, vt = np.linalg.svd(matrix, full_matrices=False)
        return matrix - s[0] * np.outer(u[:, 0], vt[0])
    from scipy.sparse.linalg import svds

    u, s, vt = svds(matrix, k=1, v0=np.ones(min(matrix.shape)) if matrix.shape[0] >= matrix.shape[1] else None,
                    random_state=0)
    return matrix - s[0] * np.outer(u[:, 0], vt[0])


def represent(metric: str, matrix) -> np.ndarray:
    """What the metric compares: the row-normalised Gram with its off-diagonal mean subtracted (``gram``:
    :func:`centre_offdiagonal`, which the correlation does not see) or the matrix itself (``weight``, formed)."""
    return centre_offdiagonal(row_normalised_gram(matrix)) if metric == "gram" else _dense(matrix)


def similarity(metric: str, a: np.ndarray, b: np.ndarray) -> float:
    """The metric between two representations: off-diagonal correlation (``gram``) or Frobenius cosine (``weight``).

    The correlation comes from power sums (:func:`similarity_from`): exact in exact arithmetic for any
    inputs, accurate to rounding when both are centred (:func:`centre_offdiagonal`), as :func:`represent`
    leaves them."""
    return similarity_from(metric, _inner(a, b), Moments.of(metric, a), Moments.of(metric, b))


def frequency_similarity(metric: str, representation: np.ndarray, p: np.ndarray) -> float:
    r"""The metric between a representation and the frequency reference :math:`pp^\top`."""
    if metric == "gram":
        return offdiagonal_correlation_with_outer(representation, p)
    return cosine_with_outer(representation, p)


def variant_representations(metric: str, matrix: np.ndarray, k0: int) -> dict[str, np.ndarray]:
    """The representation of ``matrix`` for each of :data:`VARIANTS` (the rank cut is a view)."""
    full = represent(metric, matrix)
    return {"all": full, "rank_above_k0": full[k0:, k0:],
            "top_component_removed": represent(metric, without_top_component(matrix))}


def variant_values(metric: str, representations: dict[str, np.ndarray], targets: dict[str, np.ndarray]) -> dict[str, float]:
    """The metric of each variant: ``representations`` against ``targets`` (both from :func:`variant_representations`)."""
    return {variant: similarity(metric, representations[variant], targets[variant]) for variant in VARIANTS}


@dataclass
class Reference:
    r"""One theory matrix prepared for one metric: its representations per variant, the tokens'
    frequencies :math:`p`, the rank cut ``k0`` and the token permutations of the noise level."""

    metric: str
    targets: dict[str, np.ndarray]
    frequency: np.ndarray
    k0: int
    permutations: dict[str, list[np.ndarray]] = field(default_factory=dict)
    moments: dict[str, Moments] = field(init=False)

    def __post_init__(self):
        self.moments = {variant: Moments.of(self.metric, target) for variant, target in self.targets.items()}

    @classmethod
    def build(cls, metric: str, theory: np.ndarray, frequency: np.ndarray, k0: int, permutations: int,
              seed: int = 0) -> "Reference":
        """The reference of ``theory`` (K x K, rows and columns the tokens in rank order)."""
        generator = np.random.default_rng(seed)
        keep = len(theory)
        orders = {variant: [generator.permutation(keep - (k0 if variant == "rank_above_k0" else 0))
                            for _ in range(permutations)] for variant in VARIANTS}
        return cls(metric, variant_representations(metric, theory, k0), np.asarray(frequency, dtype=float), k0, orders)

    def values(self, matrix: np.ndarray) -> dict[str, float]:
        """The metric of ``matrix`` against the theory, per variant (what a random model contributes)."""
        return variant_values(self.metric, variant_representations(self.metric, matrix, self.k0), self.targets)

    def score(self, matrix: np.ndarray, random_values: dict[str, float] | None) -> dict:
        """``matrix``'s metric per variant with its baselines, noise, excess and the verdict.

        ``random_values``: :meth:`values` of a random model's matrix, or ``None`` when there is none
        (then the verdict fails with that reason: a missing baseline is never a pass)."""
        representations = variant_representations(self.metric, matrix, self.k0)
        scored = {variant: self.score_variant(variant, representations[variant], random_values) for variant in VARIANTS}
        verdict = verdict_of(scored)
        return {**scored.pop("all"), **scored, **verdict}

    def score_variant(self, variant: str, representation: np.ndarray, random_values: dict[str, float] | None) -> dict:
        """One variant's value, baselines, strongest baseline, excess and noise (``representation`` from
        :func:`variant_representations`)."""
        target, target_moments = self.targets[variant], self.moments[variant]
        own = Moments.of(self.metric, representation)
        frequency = self.frequency[self.k0:] if variant == "rank_above_k0" else self.frequency
        value = similarity_from(self.metric, _inner(representation, target), own, target_moments)
        baselines = {"frequency": frequency_similarity(self.metric, representation, frequency),
                     "random_init": None if random_values is None else random_values[variant]}
        relabelled = [similarity_from(self.metric, relabelled_inner(representation, target, order), own,
                                      target_moments.relabelled(order)) for order in self.permutations[variant]]
        noise = float(np.std(relabelled)) if relabelled else None
        known = {name: abs(b) for name, b in baselines.items() if b is not None}
        strongest = max(known, key=known.__getitem__)
        return {"value": value, "baselines": baselines, "strongest_baseline": strongest,
                "excess": value - known[strongest], "noise": noise}


def verdict_of(scored: dict[str, dict]) -> dict:
    """``passes`` and a ``reason``: the excess exceeds :data:`NOISE_MULTIPLE` noise levels with all tokens
    and with the top component removed; a missing baseline or noise level fails."""
    for variant in ("all", "top_component_removed"):
        entry = scored[variant]
        if entry["baselines"]["random_init"] is None:
            return {"passes": False, "reason": "no random-init baseline"}
        if entry["noise"] is None:
            return {"passes": False, "reason": "no noise level (no permutations)"}
        if not entry["excess"] > NOISE_MULTIPLE * entry["noise"]:
            return {"passes": False,
                    "reason": f"{variant}: excess {entry['excess']:+.3f} over {entry['strongest_baseline']} is within "
                              f"{NOISE_MULTIPLE:g} x noise {entry['noise']:.3f}"}
    return {"passes": True, "reason": f"excess above {NOISE_MULTIPLE:g} x noise with all tokens and top component removed"}
