r"""Posterior-level reduced theory of **linear** attention, model T: numerics of step 8 (the MAP is the saddle).

Minimises the mean-field free energy derived in :mod:`emergence.theory.copy_head.linear_posterior`
(generated kernel ``copy_head_linear_posterior``),

.. math::
    F(c_1, c_G, t_u, t_v; P) = \frac{(c_1 + c_G)^2}{2s_1} + \frac{(L-1)c_G^2}{2s_G}
    + (V + L - 1)[(V - 1)I(t_u) + (L - 1)I(t_v) + I(t_w)] + S_{\rm data}(q + \Delta, m, r + \Delta, n; P),

:math:`\Delta = 2s_GL^2[t_u(1 + (L-1)/V) + t_v]`, :math:`t_w = (Lt_u + Vt_v)/(V + L)` (the
gauge-correct trial, ``trial="gauge"``, the default: the prior on the 2(V + L) - 1 flat directions;
``"product"`` squeezes them too, entropy :math:`(V^2 + LV)I(t_u) + (LV + L^2)I(t_v)`), over the variational mean :math:`(c_1, c_G)` and
the noise ratios :math:`(t_u, t_v)` (in :math:`\ln t`), reported in the gauge
:math:`m = c_1 + Lc_G \ge 0` (F is even under :math:`(c_1, c_G) \to -(c_1, c_G)`).

What the sampler measures is not the variational mean: each posterior sample is
:math:`A^\mu = \bar A + N^\mu`, with the noise :math:`N^\mu_{ij} = \delta W_{tt}[x_i,x_j] + \delta W_{tp}[x_i,j]
+ \delta W_{pt}[i,x_j] + \delta W_{pp}[i,j]` on the attention scale (entry variances
:math:`t_us_G` in the key-token blocks, :math:`t_vs_G` in the key-position blocks), and the
measurement averages :math:`A^\mu` over held-out sequences, projects, and fixes the sign by
:math:`m \ge 0`.  :func:`observables_under_law` evaluates exactly that protocol by Monte Carlo
over the theory's Gaussian law (common random numbers, so the curves are smooth in P): the
predicted posterior means of :math:`c_1, c_G, a_G`, coverage and copy fraction.  The loss is the
posterior-mean readout's at :math:`(q + \Delta, m, r + \Delta, n)`.

``data_term="trial_average"`` (opt-in) adds :math:`\mathbb E_QS - S(\bar C, \bar B)` to second order in the
fluctuations of the readout statistics (:mod:`emergence.numerics.copy_head.linear_trial_average`; gradient and
curvature by central differences); the default evaluates the action at the averaged statistics.

Transitions: ``P1_mean_field`` is where the smallest eigenvalue of the curvature of F in
:math:`(c_1, c_G)` at the symmetric point (noise at its optimum) crosses zero; ``crossover`` is
the steepest rise of the variational :math:`c_G` in :math:`\ln P` (the saddle's copy-mode onset,
same definition).

>>> theory = LinearPosteriorTheory(L=8, V=4, draws=64)
>>> low, high = theory.minimise(5.0), theory.minimise(2000.0)
>>> low.c1_mean_field == 0.0 and high.c1_mean_field > 0.1
True
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq, minimize

from emergence.numerics.copy_head.linear_trial_average import FluctuationMoments, trial_average_correction
from emergence.numerics.copy_head.posterior import posterior_mean_loss
from emergence.numerics.copy_head.reduced_action import default_convention, generated_kernels, model_scales
from emergence.numerics.order_parameters import copy_order_parameters, cyclic_shift
from emergence.base.errors import EmergenceError

TRIALS: tuple[str, ...] = ("gauge", "product")
"""The trials of :func:`emergence.theory.copy_head.linear_posterior.noise_entropy` (gauge-correct first, the default)."""

DATA_TERMS: tuple[str, ...] = ("averaged_statistics", "trial_average")
"""The data term at the trial-averaged readout statistics (the default) or with the second-order trial average
of :mod:`emergence.numerics.copy_head.linear_trial_average` added (opt-in)."""

FINITE_DIFFERENCE_STEP = 1e-5
"""Central-difference step of the trial-average correction's gradient (in c1, cG and ln t)."""

EVALUATION_SEQUENCES = 128
"""Held-out sequences per measurement, as in the posterior validation."""


def posterior_kernels():
    """The generated ``copy_head_linear_posterior`` kernel module."""
    try:
        return importlib.import_module("emergence.numerics.kernels.copy_head_linear_posterior")
    except ImportError as error:
        raise EmergenceError(f"posterior kernels are missing ({error}); run `python tools/regenerate.py kernels`") from None


@dataclass(frozen=True)
class LinearNoise:
    """Fixed standard normals of the four W_QK blocks and the held-out tokens (common random numbers)."""

    tt: np.ndarray  # (draws, V, V)
    tp: np.ndarray  # (draws, V, L)
    pt: np.ndarray  # (draws, L, V)
    pp: np.ndarray  # (draws, L, L)
    tokens: np.ndarray  # (sequences, L)

    @classmethod
    def draw(cls, L: int, V: int, draws: int, sequences: int, seed: int) -> "LinearNoise":
        rng = np.random.default_rng(seed)
        return cls(rng.standard_normal((draws, V, V)), rng.standard_normal((draws, V, L)),
                   rng.standard_normal((draws, L, V)), rng.standard_normal((draws, L, L)),
                   rng.integers(0, V, size=(sequences, L)))


def noise_attention(noise: LinearNoise, token_variance: float, position_variance: float) -> np.ndarray:
    r"""The noise :math:`N^\mu` of every draw on every held-out sequence, ``(draws, sequences, L, L)``.

    :math:`N_{ij} = \sqrt{t_us_G}(\xi^{tt}[x_i,x_j] + \xi^{pt}[i,x_j]) + \sqrt{t_vs_G}(\xi^{tp}[x_i,j] + \xi^{pp}[i,j])`
    (``token_variance`` = :math:`t_us_G`, ``position_variance`` = :math:`t_vs_G`).
    """
    x = noise.tokens  # (E, L)
    L = x.shape[1]
    rows, columns = x[:, :, None], x[:, None, :]
    tt = noise.tt[:, rows, columns]  # (D, E, L, L)
    pt = noise.pt[:, np.arange(L)[None, :, None], columns]
    tp = noise.tp[:, rows, np.arange(L)[None, None, :]]
    return (np.sqrt(token_variance) * (tt + pt) + np.sqrt(position_variance) * (tp + noise.pp[:, None]))


def observables_under_law(c1: float, cG: float, token_variance: float, position_variance: float,
                          noise: LinearNoise, chunk: int = 32) -> dict[str, tuple[float, float]]:
    r"""Posterior means (with Monte Carlo standard errors) of what the sampler reports, under the mean-field law.

    Per draw: the attention :math:`\bar A + N^\mu` averaged over the held-out sequences gives
    :math:`c_1, c_G, m`; signs fixed by :math:`m \ge 0`; :math:`a_G = m/L`; coverage and
    :math:`\cos^2(A^\mu, S)` (``copy_fraction``) averaged per sequence.
    """
    L = noise.tokens.shape[1]
    mean = c1 * np.ones((L, L)) / L + cG * cyclic_shift(L)
    values: dict[str, list[np.ndarray]] = {key: [] for key in ("c1", "cG", "aG", "coverage", "copy_fraction")}
    draws = noise.tt.shape[0]
    for start in range(0, draws, chunk):  # bounded memory: chunk x sequences x L x L per array
        part = LinearNoise(noise.tt[start:start + chunk], noise.tp[start:start + chunk], noise.pt[start:start + chunk],
                           noise.pp[start:start + chunk], noise.tokens)
        A = mean + noise_attention(part, token_variance, position_variance)
        averaged = copy_order_parameters(A.mean(axis=1))
        sign = np.where(averaged.m < 0, -1.0, 1.0)
        values["c1"].append(sign * averaged.c1)
        values["cG"].append(sign * averaged.cG)
        values["aG"].append(sign * averaged.m / L)
        per_sequence = copy_order_parameters(A)
        values["coverage"].append(per_sequence.coverage.mean(axis=1))
        values["copy_fraction"].append(per_sequence.copy_fraction.mean(axis=1))
    joined = {key: np.concatenate(v) for key, v in values.items()}
    return {key: (float(v.mean()), float(v.std(ddof=1) / np.sqrt(draws))) for key, v in joined.items()}


@dataclass(frozen=True)
class LinearPosteriorPoint:
    """The minimum of F at one P (mean-field parameters) and the predicted posterior means."""

    P: float
    c1_mean_field: float
    cG_mean_field: float
    t_u: float
    t_v: float
    free_energy: float
    c1: float
    cG: float
    aG: float
    coverage: float
    copy_fraction: float
    loss: float


class LinearPosteriorTheory:
    """The posterior free energy of linear model T at sizes ``L, V`` (the convention's scales); see the module docstring."""

    def __init__(self, L: int, V: int, convention=None, draws: int = 256, seed: int = 0, kernels=None,
                 sequences: int = EVALUATION_SEQUENCES, trial: str = "gauge", data_term: str = "averaged_statistics"):
        convention = convention if convention is not None else default_convention()
        if convention.architecture != "T":
            raise EmergenceError("the linear posterior theory covers model T only (architecture=T)")
        if trial not in TRIALS:
            raise EmergenceError(f"unknown trial {trial!r}; choose one of {', '.join(TRIALS)}")
        if data_term not in DATA_TERMS:
            raise EmergenceError(f"unknown data term {data_term!r}; choose one of {', '.join(DATA_TERMS)}")
        self.L, self.V, self.trial, self.data_term = int(L), int(V), trial, data_term
        self.s1, self.sG, self.lam, self.beta = model_scales(kernels or generated_kernels(), "linear", L, V, convention)
        self.kernels = posterior_kernels()
        self.noise = LinearNoise.draw(self.L, self.V, draws, sequences, seed)
        self.moments = FluctuationMoments.population(self.L, self.V, seed=seed) if data_term == "trial_average" else None

    def _arguments(self, P):
        return (P, self.L, self.V, self.s1, self.sG, self.lam, self.beta)

    def free_energy(self, c1, cG, t_u, t_v, P):
        """:math:`F` and its gradient in ``(c1, cG, t_u, t_v)`` (generated kernels) for the theory's trial."""
        F, d1, dG, du, dv = self.kernels.linear_posterior_free_energy(c1, cG, t_u, t_v, *self._arguments(P))
        if self.trial == "product":  # the gauge kernel less the entropy the flat directions release
            shift, shift_u, shift_v = self.kernels.linear_posterior_gauge_shift(t_u, t_v, self.L, self.V)
            F, du, dv = F - shift, du - shift_u, dv - shift_v
        if self.moments is not None:
            correction, gradient = self.trial_average_correction(c1, cG, t_u, t_v, P)
            F, d1, dG, du, dv = F + correction, d1 + gradient[0], dG + gradient[1], du + gradient[2], dv + gradient[3]
        return F, d1, dG, du, dv

    def trial_average_correction(self, c1, cG, t_u, t_v, P) -> tuple[float, np.ndarray]:
        r""":math:`\mathbb E_QS - S(\bar C, \bar B)` to second order and its gradient in ``(c1, cG, t_u, t_v)`` (central differences)."""
        moments = self.moments
        if moments is None:
            raise EmergenceError("the trial-average correction needs data_term='trial_average'")
        epsilon = self.beta * self.lam

        def value(x):
            return trial_average_correction(moments, x[0], x[1], np.exp(x[2]) * self.sG, np.exp(x[3]) * self.sG,
                                            float(P), epsilon, self.beta)

        x = np.array([float(c1), float(cG), np.log(float(t_u)), np.log(float(t_v))])
        step = FINITE_DIFFERENCE_STEP * np.maximum(1.0, np.abs(x))
        gradient = np.array([(value(x + h) - value(x - h)) / (2 * h[i]) for i, h in enumerate(np.diag(step))])
        gradient[2:] /= np.exp(x[2:])  # d/dt = (d/d ln t) / t
        return value(x), gradient

    def _correction_curvature(self, t_u, t_v, P) -> np.ndarray:
        """The trial-average correction's Hessian in ``(c1, cG)`` at the symmetric point (central differences of the gradient)."""
        h = FINITE_DIFFERENCE_STEP
        rows = [(self.trial_average_correction(h * e[0], h * e[1], t_u, t_v, P)[1][:2]
                 - self.trial_average_correction(-h * e[0], -h * e[1], t_u, t_v, P)[1][:2]) / (2 * h) for e in np.eye(2)]
        return 0.5 * (np.array(rows) + np.array(rows).T)

    def _minimise(self, P: float, x0, fix_symmetric: bool = False):
        def objective(x):
            c1, cG = (0.0, 0.0) if fix_symmetric else (x[0], x[1])
            log_t = x[-2:]
            F, d1, dG, du, dv = (float(v) for v in self.free_energy(c1, cG, np.exp(log_t[0]), np.exp(log_t[1]), P))
            gradient = [du * np.exp(log_t[0]), dv * np.exp(log_t[1])]
            return F, np.array(gradient if fix_symmetric else [d1, dG, *gradient])

        bounds = [(-20.0, 5.0)] * 2 if fix_symmetric else [(None, None)] * 2 + [(-20.0, 5.0)] * 2
        return minimize(objective, np.asarray(x0, dtype=float), jac=True, method="L-BFGS-B", bounds=bounds,
                        options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-10})

    def symmetric_point(self, P: float):
        """Noise ratios ``(t_u, t_v)`` minimising F at c1 = cG = 0, and the smallest curvature eigenvalue there."""
        result = self._minimise(P, [0.0, 0.0], fix_symmetric=True)
        t_u, t_v = np.exp(result.x)
        h11, h1G, hGG = (float(v) for v in self.kernels.linear_posterior_curvature(0.0, 0.0, t_u, t_v, *self._arguments(P)))
        curvature = np.array([[h11, h1G], [h1G, hGG]])
        if self.moments is not None:
            curvature = curvature + self._correction_curvature(t_u, t_v, P)
        return float(t_u), float(t_v), float(np.linalg.eigvalsh(curvature)[0])

    def minimise(self, P: float) -> LinearPosteriorPoint:
        """The global minimum of F at ``P`` with the predicted posterior means (:meth:`point`)."""
        return self.point(P, *self.mean_field(P))

    def mean_field(self, P: float) -> tuple[float, float, float, float, float]:
        """``(c1, cG, t_u, t_v, F)`` at the global minimum of F (symmetric start and starts along the uniform and copy directions)."""
        t_u, t_v, _ = self.symmetric_point(P)
        best: tuple[float, ...] = (float(self.free_energy(0.0, 0.0, t_u, t_v, P)[0]), 0.0, 0.0, t_u, t_v)
        starts = ([np.sqrt(self.s1), 0.0], [0.0, np.sqrt(self.sG)], [1.0, 0.1], [0.2, 0.2], [0.0, 0.5])
        for c1, cG in starts:
            result = self._minimise(P, [c1, cG, np.log(t_u), np.log(t_v)])
            if result.fun < best[0] - 1e-9:
                best = (float(result.fun), *map(float, result.x[:2]), *map(float, np.exp(result.x[2:])))
        F, c1, cG, t_u, t_v = best
        if c1 + self.L * cG < 0:  # the gauge m >= 0
            c1, cG = -c1, -cG
        return c1, cG, t_u, t_v, F

    def point(self, P, c1, cG, t_u, t_v, F) -> LinearPosteriorPoint:
        """Predicted posterior means at the mean-field parameters (Monte Carlo over the law, loss in closed form)."""
        L, V = self.L, self.V
        observed = observables_under_law(c1, cG, t_u * self.sG, t_v * self.sG, self.noise)
        shift = float(self.kernels.linear_posterior_noise_shift(t_u, t_v, L, V, self.sG))
        q, m = c1**2 + 2 * c1 * cG + L * cG**2, c1 + L * cG
        r, n = L * (c1 + cG) ** 2, L * (c1 + cG)
        loss = posterior_mean_loss(q + shift, m, r + shift, n, P, V, self.lam, self.beta, L)
        c1_law, cG_law, aG, coverage, copy_fraction = (observed[key][0] for key in ("c1", "cG", "aG", "coverage", "copy_fraction"))
        return LinearPosteriorPoint(float(P), float(c1), float(cG), float(t_u), float(t_v), float(F),
                                    c1_law, cG_law, aG, coverage, copy_fraction, float(loss))

    def second_order_point(self, P_low: float, P_high: float, scan: int = 60) -> float | None:
        """Mean-field P1: the root in ln P of the smallest curvature at the symmetric point (``None`` outside the range)."""
        log_P = np.linspace(np.log(P_low), np.log(P_high), scan)
        curvature = np.array([self.symmetric_point(np.exp(x))[2] for x in log_P])
        crossing = np.nonzero((curvature[:-1] > 0) & (curvature[1:] <= 0))[0]
        if not len(crossing):
            return None
        i = int(crossing[0])
        return float(np.exp(brentq(lambda x: self.symmetric_point(np.exp(x))[2], log_P[i], log_P[i + 1], xtol=1e-8)))

    def curves(self, P_grid) -> dict:
        """Predicted posterior means on ``P_grid``, the mean-field P1 and the copy-mode onset (``crossover``)."""
        P_grid = np.asarray(P_grid, dtype=float)
        points = [self.minimise(P) for P in P_grid]
        record: dict[str, Any] = {key: [getattr(p, key) for p in points] for key in LinearPosteriorPoint.__dataclass_fields__}
        fine = np.geomspace(P_grid[0], P_grid[-1], 120) if len(P_grid) > 1 else P_grid
        cG_fine = np.array([self.mean_field(P)[1] for P in fine]) if len(P_grid) > 1 else np.zeros(1)
        slope = np.diff(cG_fine) / np.diff(np.log(fine)) if len(P_grid) > 1 else np.zeros(1)
        i = int(np.argmax(slope))
        onset = float(np.sqrt(fine[i] * fine[i + 1])) if len(P_grid) > 1 and 0 < i < len(slope) - 1 else None
        record["P1_mean_field"] = self.second_order_point(P_grid[0], P_grid[-1]) if len(P_grid) > 1 else None
        record["crossover"] = onset
        return record
