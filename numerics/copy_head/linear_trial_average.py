r"""The trial average of linear model T's readout-marginal action: the second-order correction, in numbers.

:mod:`emergence.theory.copy_head.linear_trial_average` derives

.. math::
    \mathbb E_QS - S(\bar C, \bar B) \approx -\frac{\beta\varepsilon}2\mathbb E\,\mathrm{tr}\,\delta B^TR\delta B
    + \beta\varepsilon^2\mathbb E\,\mathrm{tr}\,\bar B^TR\delta CR\delta B
    - \frac{\beta\varepsilon^3}2\mathbb E\,\mathrm{tr}\,\bar B^TR\delta CR\delta CR\bar B
    - \frac{V\varepsilon^2}4\mathbb E\,\mathrm{tr}\,R\delta CR\delta C,\qquad R = (I + \varepsilon\bar C)^{-1}.

Here the moments come from the trial.  Per sequence e the design is :math:`\Phi_e = A_eX_e` with
:math:`A_e = c_1J/L + c_GS + N_e` and the noise :math:`N_e` linear in standard normals
:math:`\xi = (\xi_u, \xi_v)`: :math:`\delta\Phi_e = a\,J^u_e\xi_u + b\,J^v_e\xi_v`, :math:`a^2 = t_us_G`,
:math:`b^2 = t_vs_G` (:func:`noise_design`; the blocks of
:func:`~emergence.numerics.copy_head.linear_posterior.noise_attention`).  So
:math:`\delta B = \sum_e\delta\Phi_e^TY_e` and the part :math:`\bar\Phi_e^T\delta\Phi_e + \delta\Phi_e^T\bar\Phi_e`
of :math:`\delta C` are linear in :math:`\xi`, and :math:`\delta\Phi_e^T\delta\Phi_e` is a quadratic form
:math:`\xi^TQ\xi` with :math:`\mathrm{Cov}(\xi^TQ_1\xi, \xi^TQ_2\xi) = \mathrm{tr}\,Q_1(Q_2 + Q_2^T)`
(Isserlis; odd moments vanish, so the quadratic part does not correlate with the linear ones).

**Data.**  A sum over P sequences of per-sequence maps k_e has
:math:`\mathbb E_{\rm data}[(\sum_ek_e)(\sum_ek_e)^T] = P(P-1)\langle k\rangle\langle k\rangle^T + P\langle kk^T\rangle`:
the population part and the finite-P part (the noise fitting the sample).  Both are estimated from
``E`` sequences (:class:`FluctuationMoments`, the unbiased estimate of :math:`\langle k\rangle\langle k\rangle^T`),
which makes the formula **exact** for a fixed set of sequences at P = E.  The same for the quadratic part.
Shapes: moments of two ``(V, V)`` statistics are ``(V, V, V, V)``, index order of :math:`\mathbb E[X_{ab}Y_{cd}]`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from emergence.base.limits import check_memory

POPULATION_SEQUENCES = 512
"""Sequences that stand for the population in :class:`FluctuationMoments` (seeded)."""


def moment_bytes(L: int, V: int, sequences: int, chunk: int) -> float:
    """Peak bytes of :meth:`FluctuationMoments.from_tokens` (upper bound): the quadratic-form blocks and their
    products, one chunk's designs and Grams, and the per-sequence linear maps with their joined copy."""
    d = V * V + 2 * L * V + L * L  # noise coordinates that reach the attention
    numbers = 2 * V * V * d * d + 3 * chunk * L * V * d + 2 * chunk * (L * V) ** 2 + 6 * sequences * V * V * d
    return 8.0 * numbers


def noise_design(tokens: np.ndarray, V: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Unit-scale designs ``J_u (E, L, V, V^2 + LV)`` and ``J_v (E, L, V, VL + L^2)``: :math:`\delta\Phi = aJ^u\xi_u + bJ^v\xi_v`.

    :math:`\delta\Phi_{ic} = \sum_{j:x_j=c}N_{ij}` with :math:`N_{ij} = a(\xi^{tt}_{x_ix_j} + \xi^{pt}_{ix_j})
    + b(\xi^{tp}_{x_ij} + \xi^{pp}_{ij})`, so the token blocks enter with the count :math:`n_c` of c among the keys.
    :math:`\xi_u = (\xi^{tt}, \xi^{pt})`, :math:`\xi_v = (\xi^{tp}, \xi^{pp})`, each block row-major.
    """
    E, L = tokens.shape
    counts = np.stack([(tokens == c).sum(1) for c in range(V)], axis=1).astype(float)  # (E, V)
    J_u, J_v = np.zeros((E, L, V, V * V + L * V)), np.zeros((E, L, V, V * L + L * L))
    e, i, c = np.arange(E)[:, None, None], np.arange(L)[None, :, None], np.arange(V)[None, None, :]
    x_query = tokens[:, :, None]
    J_u[e, i, c, x_query * V + c] = counts[:, None, :]
    J_u[e, i, c, V * V + i * V + c] = counts[:, None, :]
    j, x_key = np.arange(L)[None, None, :], tokens[:, None, :]
    J_v[e, i, x_key, x_query * L + j] = 1.0
    J_v[e, i, x_key, V * L + i * L + j] = 1.0
    return J_u, J_v


def copy_sequences(tokens: np.ndarray, V: int) -> dict[str, np.ndarray]:
    r"""One-hot ``X``, previous-token targets ``Y = SX`` (cyclic, raw) and the mean designs ``Phi1 = JX/L``, ``PhiG = SX``, each ``(E, L, V)``."""
    X = np.eye(V)[tokens]
    Y = np.roll(X, 1, axis=1)
    return {"X": X, "Y": Y, "Phi1": np.broadcast_to(X.mean(1, keepdims=True), X.shape), "PhiG": Y}


def _pair_moments(k_first: np.ndarray, k_second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Per-sequence maps ``(E, V, V, d)``: the unbiased :math:`\langle k\rangle\langle k'\rangle^T` and :math:`\langle kk'^T\rangle`, ``(V, V, V, V)`` each."""
    E = k_first.shape[0]
    self_part = np.einsum("eabk,ecdk->abcd", k_first, k_second) / E
    means = np.einsum("abk,cdk->abcd", k_first.mean(0), k_second.mean(0))
    return (E * means - self_part) / (E - 1), self_part


def _trace_pairs(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    r""":math:`\sum_{kl}Q_{bc,kl}Q'_{ad,kl}` over the quadratic-form blocks ``(V, V, d, d')``, in the order ``[b, c, d, a]``."""
    return np.einsum("bckl,adkl->bcda", first, second)


@dataclass(frozen=True)
class FluctuationMoments:
    """Per-sequence means and pair moments of the statistics' fluctuations (unit noise scales), from ``E`` sequences."""

    sequences: int
    means: dict[str, np.ndarray]  # (V, V) per-sequence means: Phi1'Phi1, Phi1'PhiG, PhiG'PhiG, Phi1'Y, PhiG'Y, noise_u, noise_v
    linear: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]]  # (X, Y, group) -> (population, per-sequence)
    quadratic: dict[str, tuple[np.ndarray, np.ndarray]]  # "uu", "mix", "vv" -> (population, per-sequence), [b, c, d, a]

    @classmethod
    def from_tokens(cls, tokens: np.ndarray, V: int, chunk: int = 64) -> "FluctuationMoments":
        """The moments of the sequences ``tokens (E, L)`` (cyclic shift, raw targets)."""
        E = tokens.shape[0]
        if E < 2:
            raise ValueError("the fluctuation moments need at least two sequences")
        check_memory(moment_bytes(tokens.shape[1], V, E, chunk), "the trial-average moments",
                     "use fewer sequences or a smaller L")
        data = copy_sequences(tokens, V)
        means = {"11": _gram(data["Phi1"], data["Phi1"]), "1G": _gram(data["Phi1"], data["PhiG"]),
                 "GG": _gram(data["PhiG"], data["PhiG"]), "1Y": _gram(data["Phi1"], data["Y"]),
                 "GY": _gram(data["PhiG"], data["Y"])}
        maps: dict[tuple[str, str], list[np.ndarray]] = {}
        L = tokens.shape[1]
        sizes = {"u": V * V + L * V, "v": V * L + L * L}
        blocks = {pair: np.zeros((V, V, sizes[pair[0]], sizes[pair[1]])) for pair in ("uu", "uv", "vv")}
        self_traces = {key: np.zeros((V,) * 4) for key in ("uu", "mix", "vv")}
        noise_means = {group: np.zeros((V, V)) for group in "uv"}
        for start in range(0, E, chunk):
            part = {key: value[start:start + chunk] for key, value in data.items()}
            designs = dict(zip("uv", noise_design(tokens[start:start + chunk], V)))
            for group, J in designs.items():
                maps.setdefault(("B", group), []).append(np.einsum("eick,eif->ecfk", J, part["Y"]))
                for name in ("1", "G"):
                    mean_design = part["Phi" + name]
                    one_side = np.einsum("eic,eifk->ecfk", mean_design, J)
                    maps.setdefault(("C" + name, group), []).append(one_side + one_side.transpose(0, 2, 1, 3))
                noise_means[group] += np.einsum("eick,eifk->cf", J, J)
            flat = {g: sparse.csr_matrix(J.reshape(-1, V * J.shape[-1])) for g, J in designs.items()}
            for pair in blocks:
                product = (flat[pair[0]].T @ flat[pair[1]]).toarray()  # sum over (e, i) of J[b, k] J[c, l]
                blocks[pair] += product.reshape(V, sizes[pair[0]], V, sizes[pair[1]]).transpose(0, 2, 1, 3)
            grams = {g: np.einsum("eibk,ejak->eibja", J, J) for g, J in designs.items()}
            self_traces["uu"] += np.einsum("eibja,eicjd->bcda", grams["u"], grams["u"])
            self_traces["vv"] += np.einsum("eibja,eicjd->bcda", grams["v"], grams["v"])
            self_traces["mix"] += (np.einsum("eibja,eicjd->bcda", grams["u"], grams["v"])
                                   + np.einsum("eibja,eicjd->bcda", grams["v"], grams["u"]))
        means.update({"noise_u": noise_means["u"] / E, "noise_v": noise_means["v"] / E})
        joined = {key: np.concatenate(value) for key, value in maps.items()}
        linear = {}
        for left, right in (("B", "B"), ("C1", "B"), ("CG", "B"), ("C1", "C1"), ("C1", "CG"), ("CG", "CG")):
            for group in "uv":
                linear[(left, right, group)] = _pair_moments(joined[(left, group)], joined[(right, group)])
        mean_blocks = {pair: value / E for pair, value in blocks.items()}
        mean_traces = {"uu": _trace_pairs(mean_blocks["uu"], mean_blocks["uu"]),
                       "vv": _trace_pairs(mean_blocks["vv"], mean_blocks["vv"]),
                       "mix": _trace_pairs(mean_blocks["uv"], mean_blocks["uv"])
                       + _trace_pairs(mean_blocks["uv"].transpose(1, 0, 2, 3), mean_blocks["uv"].transpose(1, 0, 2, 3))}
        quadratic = {}
        for key in ("uu", "mix", "vv"):
            per_sequence = self_traces[key] / E
            quadratic[key] = ((E * mean_traces[key] - per_sequence) / (E - 1), per_sequence)
        return cls(E, means, linear, quadratic)

    @classmethod
    def population(cls, L: int, V: int, sequences: int = POPULATION_SEQUENCES, seed: int = 0) -> "FluctuationMoments":
        """The moments of ``sequences`` i.i.d. uniform sequences drawn with ``seed`` (the population's stand-in)."""
        return cls.from_tokens(np.random.default_rng(seed).integers(0, V, size=(sequences, L)), V)


def _gram(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Per-sequence mean of ``first^T second``, ``(V, V)``."""
    return np.einsum("eia,eib->ab", first, second) / first.shape[0]


@dataclass(frozen=True)
class StatisticsLaw:
    r"""Mean statistics :math:`\bar C, \bar B` and the second moments of their fluctuations at one trial and P."""

    C: np.ndarray  # (V, V)
    B: np.ndarray  # (V, V)
    BB: np.ndarray  # E[dB_ab dB_cd]
    CB: np.ndarray  # E[dC_ab dB_cd]
    CC: np.ndarray  # E[dC_ab dC_cd]


def statistics_law(moments: FluctuationMoments, c1: float, cG: float, token_variance: float, position_variance: float,
                   P: float) -> StatisticsLaw:
    r"""The law of :math:`(C, B)` over the trial (noise variances :math:`a^2 = t_us_G`, :math:`b^2 = t_vs_G`), P sequences."""
    a2, b2 = token_variance, position_variance
    mean = moments.means
    V = mean["11"].shape[0]
    C = P * (c1**2 * mean["11"] + c1 * cG * (mean["1G"] + mean["1G"].T) + cG**2 * mean["GG"]
             + a2 * mean["noise_u"] + b2 * mean["noise_v"])
    B = P * (c1 * mean["1Y"] + cG * mean["GY"])
    scale = {"u": a2, "v": b2}

    def pair(first: str, second: str) -> np.ndarray:
        total = np.zeros((V,) * 4)
        for group in "uv":
            population, per_sequence = moments.linear[(first, second, group)]
            total = total + scale[group] * (P * (P - 1) * population + P * per_sequence)
        return total

    def swap(tensor: np.ndarray) -> np.ndarray:
        return tensor.transpose(2, 3, 0, 1)

    C1C1, C1CG, CGCG = pair("C1", "C1"), pair("C1", "CG"), pair("CG", "CG")
    linear_CC = c1**2 * C1C1 + c1 * cG * (C1CG + swap(C1CG)) + cG**2 * CGCG
    weights = {"uu": a2 * a2, "mix": a2 * b2, "vv": b2 * b2}
    traces = np.zeros((V,) * 4)
    for key, (population, per_sequence) in moments.quadratic.items():
        traces += weights[key] * (P * (P - 1) * population + P * per_sequence)
    quadratic_CC = traces + traces.transpose(0, 1, 3, 2)  # Cov(x'Q1x, x'Q2x) = tr Q1 (Q2 + Q2^T), order [b, c, d, a]
    return StatisticsLaw(C, B, pair("B", "B"), c1 * pair("C1", "B") + cG * pair("CG", "B"),
                         linear_CC + quadratic_CC)


def second_order_terms(law: StatisticsLaw, epsilon: float, beta: float) -> dict[str, float]:
    r"""The four trial-averaged second-order terms of :func:`~emergence.theory.copy_head.linear_trial_average.second_order_action`.

    Each :math:`\mathbb E\,\mathrm{tr}(X\,\delta_1\,Y\,\delta_2) = \sum X_{da}Y_{bc}\,\mathbb E[\delta_{1,ab}\delta_{2,cd}]`.
    """
    V = law.C.shape[0]
    R = np.linalg.inv(np.eye(V) + epsilon * law.C)
    BtR = law.B.T @ R
    signal = R @ law.B @ law.B.T @ R
    return {"fit_BB": -0.5 * beta * epsilon * float(np.einsum("cd,cfdf->", R, law.BB)),
            "fit_CB": beta * epsilon**2 * float(np.einsum("fa,bc,abcf->", BtR, R, law.CB)),
            "fit_CC": -0.5 * beta * epsilon**3 * float(np.einsum("da,bc,abcd->", signal, R, law.CC)),
            "occam_CC": -0.25 * V * epsilon**2 * float(np.einsum("da,bc,abcd->", R, R, law.CC))}


def trial_average_correction(moments: FluctuationMoments, c1: float, cG: float, token_variance: float,
                             position_variance: float, P: float, epsilon: float, beta: float) -> float:
    r""":math:`\mathbb E_QS - S(\bar C, \bar B)` to second order: the sum of :func:`second_order_terms`."""
    law = statistics_law(moments, c1, cG, token_variance, position_variance, P)
    return float(sum(second_order_terms(law, epsilon, beta).values()))


__all__ = ["FluctuationMoments", "POPULATION_SEQUENCES", "StatisticsLaw", "copy_sequences", "moment_bytes", "noise_design",
           "second_order_terms", "statistics_law", "trial_average_correction"]
