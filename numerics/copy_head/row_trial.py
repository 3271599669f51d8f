r"""The row trial: the gauge-correct Gaussian trial with each query row's copy-logit gap on its own 1-D law.

:math:`W_{QK}` is ``(N, N)``, ``N = V + L`` (rows: query embedding, columns: key embedding, tokens
first); the prior is :math:`\mathcal N(0, sI)`.  Split :math:`\mathbb R^{N^2}` into the flat subspace
:math:`\mathcal K` (:func:`~emergence.numerics.copy_head.logit_gauge.flat_direction_basis`), the visible
key-token directions, and the visible key-position directions.  In the last, the copy gap of query
position i is carried by :math:`u_i = P_\perp n_i`, with :math:`n_i` the unit vector along row i of
:math:`S - J/L` in the position block (:math:`S` the cyclic shift).  The trial is

.. math::
    \theta = \sqrt s\,\xi_{\mathcal K} + \sqrt{t_us}\,\xi_{\rm tok} + \sum_{i=1}^L y_i u_i + \sqrt{t_vs}\,\xi_R,

:math:`\xi` standard normal on each subspace (:math:`R`: the visible key-position directions
orthogonal to every :math:`u_i`) and :math:`y_i` i.i.d. with one law :math:`q`.  What is derived
(``theory/copy_head/row_trial.py``, SymPy; tested against dense linear algebra):

- the logit map sees :math:`u_i` only in query row i, as a copy boost :math:`g_i = c\,y_i` on the
  previous token's key (mod a row constant), :math:`c = \sqrt{L/(L-1)}`;
- the Gram matrix :math:`G = U^TU = I - [c^2 I - J/(L-1)]/(V+L)` has eigenvalue 1 on
  the symmetric vector and :math:`\gamma = 1 - c^2/(V+L)` on the other :math:`L-1`; hence, for i.i.d.
  :math:`y_i` of mean :math:`\mu` and second moment :math:`m_2`,

.. math::
    \mathrm{KL}(Q\,\|\,\text{prior}) = n_u I(t_u) + n_R I(t_v)
    + L\Big[-H(q_y) + \tfrac12\ln 2\pi s + \frac{(1 - \frac1{V+L})m_2}{2s}\Big]
    + \frac{L\mu^2}{2s(V+L)} - \frac{L-1}2\ln\gamma,

:math:`n_u = (V+L-1)(V-1)`, :math:`n_R = (V+L-1)(L-1) - L`, :math:`I(t) = (t-1-\ln t)/2`.  With
:math:`q_y` Gaussian of mean :math:`g\sqrt{(L-1)/L}` the mean term is the gauge trial's copy cost
:math:`(L-1)g^2/2s`.

The law :math:`q` of the copy boost :math:`g_i` is piecewise constant on ``CELLS`` (width ``CELL``), with
masses from the cavity (structured mean-field) form: at fixed other rows, the free energy's functional
derivative in :math:`q` is a quadratic in :math:`g` plus the row's share of the data term,
:math:`L^{-1}[\partial_QS\,Q_\Phi(g) + \partial_MS\,M_\Phi(g)]`, so the optimum lies in

.. math:: q(g) \propto \exp\big[-(g - m)^2/2v + \kappa_M M_\Phi(g) - \kappa_Q Q_\Phi(g)\big],

with the row averages :math:`Q_\Phi(g), M_\Phi(g)` at copy boost g (Monte Carlo over tokens and the
Gaussian rest of the row, common random numbers, :func:`row_functions`).  The theory's data term is
evaluated at the averages :math:`\int q\,Q_\Phi`, :math:`\int q\,M_\Phi` (midpoint rule on the cells), as
the Gaussian trials' is.  Entropy and moments of the piecewise-constant law are exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import minimize

from emergence.base.errors import EmergenceError
from emergence.numerics.copy_head.logit_gauge import flat_direction_basis
from emergence.numerics.copy_head.posterior import (TRIAL_THEORIES, PosteriorMode, PosteriorTheory,
                                                    effective_invariants, entropy_rate, posterior_mean_loss)
from emergence.numerics.order_parameters import cyclic_shift

CELL = 0.05
"""Width of the cells of the copy-boost law."""
CELLS = np.arange(-12.0, 24.0, CELL) + CELL / 2
"""Midpoints of the cells of the copy-boost law (the law is zero outside)."""


def gram_eigenvalue(L: int, V: int) -> float:
    r""":math:`\gamma = 1 - L/((L-1)(V+L))`, the Gram eigenvalue of the copy directions off the symmetric vector."""
    return 1.0 - L / ((L - 1) * (V + L))


def copy_span_kl(entropy_y: float, mean_y: float, second_y: float, L: int, V: int, s: float) -> float:
    r"""KL of the :math:`\sum_iy_iu_i` part from the prior (module docstring), for i.i.d. :math:`y_i`."""
    return (L * (-entropy_y + 0.5 * np.log(2 * np.pi * s) + (1 - 1 / (V + L)) * second_y / (2 * s))
            + L * mean_y**2 / (2 * s * (V + L)) - 0.5 * (L - 1) * np.log(gram_eigenvalue(L, V)))


@dataclass(frozen=True)
class CopyLaw:
    """The copy-boost law: masses on ``CELLS`` (sum 1)."""

    masses: np.ndarray

    @classmethod
    def tilted(cls, m: float, log_v: float, kappa_M: float, kappa_Q: float, functions: dict[str, np.ndarray]) -> "CopyLaw":
        """The cavity form :math:`\\propto e^{-(g-m)^2/2v + \\kappa_MM_\\Phi(g) - \\kappa_QQ_\\Phi(g)}` on the cells."""
        log_mass = -(CELLS - m) ** 2 / (2 * np.exp(log_v)) + kappa_M * functions["target"] - kappa_Q * functions["square"]
        mass = np.exp(log_mass - log_mass.max())
        return cls(mass / mass.sum())

    def entropy(self) -> float:
        """Differential entropy of the piecewise-constant density (exact)."""
        p = self.masses[self.masses > 0]
        return float(-(p * np.log(p / CELL)).sum())

    def moments(self) -> tuple[float, float]:
        """Mean and second moment (uniform within each cell: :math:`+\\Delta^2/12`)."""
        mean = float(self.masses @ CELLS)
        return mean, float(self.masses @ CELLS**2 + CELL**2 / 12)

    def average(self, values: np.ndarray) -> float:
        """Midpoint-rule average of a function given on ``CELLS``."""
        return float(self.masses @ values)

    def sample(self, size, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Draws by inverse CDF on the cells (uniform inside each) and their log density."""
        cell = np.minimum(np.searchsorted(np.cumsum(self.masses), rng.random(size), side="right"), len(CELLS) - 1)
        draws = CELLS[cell] + CELL * (rng.random(size) - 0.5)
        return draws, np.log(self.masses[cell] / CELL)


@lru_cache(maxsize=8)
def trial_geometry(L: int, V: int) -> dict[str, np.ndarray]:
    r"""Dense bases of the trial's subspaces in row-major ``W.ravel()`` (``N^2`` rows).

    ``flat`` (:math:`\mathcal K`), ``token`` (visible key-token), ``copy`` (:math:`U = [u_1 \dots u_L]`, not
    orthonormal), ``rest`` (:math:`R`), each an orthonormal column basis except ``copy``; and
    ``row_position_shape`` :math:`(L, L)`: the covariance of one query row's key-position logits from
    :math:`\xi_R` per unit :math:`t_vs`, keys ordered with the previous token's key first.
    """
    N = V + L
    bases = flat_direction_basis(V, L)
    flat = np.concatenate([bases["key_token"], bases["key_position"]], axis=1)
    columns = np.zeros((N, N))
    columns[:, :V] = 1.0
    token_mask = columns.ravel().astype(bool)
    visible = np.eye(N * N) - flat @ flat.T
    shift = cyclic_shift(L) - 1.0 / L
    copy = np.zeros((N * N, L))
    for i in range(L):
        n = np.zeros((N, N))
        n[V + i, V:] = shift[i] / np.linalg.norm(shift[i])
        copy[:, i] = visible @ n.ravel()
    token = _orthonormal(visible * token_mask[None, :] * token_mask[:, None])
    position_visible = visible * ~token_mask[None, :] * ~token_mask[:, None]
    rest = _orthonormal(position_visible - copy @ np.linalg.solve(copy.T @ copy, copy.T))
    row_map = np.zeros((L, N * N))
    for j in range(L):
        row_map[j, 0 * N + V + j] = 1.0  # query token 0 ...
        row_map[j, (V + 1) * N + V + j] = 1.0  # ... at position 1, whose previous key is position 0
    logit_rest = row_map @ rest
    return {"flat": flat, "token": token, "copy": copy, "rest": rest, "row_position_shape": logit_rest @ logit_rest.T}


def _orthonormal(projector: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(projector)
    return vectors[:, values > 0.5]


def row_functions(boosts: np.ndarray, token_variance: float, position_noise: np.ndarray, token_noise: np.ndarray,
                  tokens: np.ndarray, V: int) -> dict[str, np.ndarray]:
    r"""Row averages at each copy boost in ``boosts``: ``aG``, ``square_sum``, ``square`` (:math:`Q_\Phi`), ``target`` (:math:`M_\Phi`).

    Logits :math:`\ell_j = g[j=0] + \sqrt{\text{token\_variance}}\,\xi_{x_j} + \text{position\_noise}_j`
    (``position_noise (D, L)``, ``token_noise (D, V)``, ``tokens (D, L)``, key 0 the previous token's).
    With :math:`E = e^{g+\ell_0}`, :math:`R_a = \sum_{j\ge1, x_j=a}e^{\ell_j}`, :math:`Z = E + \sum_aR_a`:
    :math:`A_0 = E/Z`, :math:`Q_\Phi = (\sum_aR_a^2 + 2ER_{x_0} + E^2)/Z^2`, :math:`M_\Phi = (E + R_{x_0})/Z`.
    Returns arrays shaped like ``boosts``.
    """
    draws = tokens.shape[0]
    logits = np.sqrt(token_variance) * np.take_along_axis(token_noise, tokens, axis=1) + position_noise
    logits -= logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    rest = np.zeros((draws, V))
    np.add.at(rest, (np.arange(draws)[:, None], tokens[:, 1:]), weights[:, 1:])
    own = rest[np.arange(draws), tokens[:, 0]][:, None]
    rest_sum, rest_square = rest.sum(1)[:, None], (rest**2).sum(1)[:, None]
    rest_weight_square = (weights[:, 1:] ** 2).sum(1)[:, None]
    E = weights[:, :1] * np.exp(np.asarray(boosts, dtype=float))[None, :]
    Z = E + rest_sum
    return {"aG": (E / Z).mean(0), "square_sum": ((E**2 + rest_weight_square) / Z**2).mean(0),
            "square": ((rest_square + 2 * E * own + E**2) / Z**2).mean(0), "target": ((E + own) / Z).mean(0)}


@dataclass(frozen=True)
class RowMode(PosteriorMode):
    """A :class:`PosteriorMode` of the row trial; ``g`` is the mean copy boost, ``law`` its 1-D law, ``shape`` (m, ln v, κ_M, κ_Q)."""

    law: CopyLaw | None = None
    shape: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)


class RowPosteriorTheory(PosteriorTheory):
    """The posterior free energy with the row trial (``PosteriorTheory(..., trial="row")``); see the module docstring.

    Variational coordinates ``x = (m, ln t_u, ln t_v, ln v, κ_M, κ_Q)``.
    """

    bounds = np.array([[-5.0, 20.0], [-6.0, 3.0], [-6.0, 3.0], [-4.0, 4.0], [-200.0, 2000.0], [-200.0, 2000.0]])

    def __init__(self, L: int, V: int, convention=None, draws: int = 20_000, seed: int = 0, kernels=None,
                 trial: str = "row", averages: str = "monte_carlo"):
        if averages != "monte_carlo":
            raise EmergenceError("the row trial averages its rows by Monte Carlo only (averages='monte_carlo')")
        super().__init__(L, V, convention, draws, seed, kernels, trial)
        shape = trial_geometry(self.L, self.V)["row_position_shape"]
        values, vectors = np.linalg.eigh(shape)
        self._position_root = vectors * np.sqrt(np.clip(values, 0.0, None))
        self._cache: dict[tuple[float, float], dict[str, np.ndarray]] = {}

    def functions(self, t_u: float, t_v: float) -> dict[str, np.ndarray]:
        """:func:`row_functions` on ``CELLS`` at ratios ``t_u, t_v`` (cached: the law's shape changes more often)."""
        key = (float(t_u), float(t_v))
        if key not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            noise = self.noise
            assert noise is not None  # the row trial draws its rows (averages="monte_carlo", __init__)
            position = np.sqrt(t_v * self.s) * noise.position_noise @ self._position_root.T
            self._cache[key] = row_functions(CELLS, 2 * t_u * self.s, position, noise.token_noise, noise.tokens, self.V)
        return self._cache[key]

    def row_free_energy(self, x, P: float) -> float:
        """:math:`F(x; P)`: the KL of the module docstring plus the data term at the law's row averages."""
        kl, q_eff, m_eff = self.action_parts(x)
        return float(kl + self.data_term(q_eff, m_eff, P))

    def action_parts(self, y) -> tuple[float, float, float]:
        r"""``(KL, q_eff, m_eff)`` at ``y = x`` (the class docstring's coordinates): :math:`F = \text{KL} + S_{\rm data}`."""
        t_u, t_v = np.exp(y[1]), np.exp(y[2])
        functions = self.functions(t_u, t_v)
        return self._parts_of(CopyLaw.tilted(y[0], y[3], y[4], y[5], functions), t_u, t_v, functions)

    def _parts_of(self, law: CopyLaw, t_u, t_v, functions) -> tuple[float, float, float]:
        L, V, s = self.L, self.V, self.s
        scale = np.sqrt((L - 1) / L)  # y = scale * g
        mean, second = law.moments()
        kl = (self.token_directions * entropy_rate(t_u) + self.position_directions * entropy_rate(t_v)
              + copy_span_kl(law.entropy() + np.log(scale), scale * mean, scale**2 * second, L, V, s))
        q_eff, m_eff = effective_invariants(law.average(functions["square"]), law.average(functions["target"]), L, V)
        return float(kl), float(q_eff), float(m_eff)

    def start_axes(self, points: int = 9) -> tuple[np.ndarray, ...]:
        """The solver core's start grid: the Gaussian trial's in ``(m, ln t_u, ln t_v)``, the law at the prior's
        width and untilted (:meth:`start_point`)."""
        return (*super().start_axes(points), np.array([np.log(2 * self.s)]), np.array([0.0]), np.array([0.0]))

    def mode_at(self, P: float, start: str, y) -> "RowMode":
        """The :class:`RowMode` at coordinates ``y`` (:meth:`row_mode`)."""
        return self.row_mode(P, start, np.asarray(y, dtype=float))

    def start_point(self, start: str) -> np.ndarray:
        """Prior variances, a Gaussian law of the prior's width about g = 0 (uniform) or the logit of 0.9 (copy)."""
        g = super().start_point(start)[0]
        return np.array([g, 0.0, 0.0, np.log(2 * self.s), 0.0, 0.0])

    def minimise(self, P: float, start: str = "uniform", x0=None) -> RowMode:
        x0 = self.start_point(start) if x0 is None else np.asarray(x0, dtype=float)
        result = minimize(lambda x: self.row_free_energy(x, P), x0, method="L-BFGS-B", bounds=self.bounds.tolist(),
                          options={"eps": 1e-6, "maxiter": 500})
        return self.row_mode(P, start, result.x)

    def row_mode(self, P, start, x) -> RowMode:
        t_u, t_v = float(np.exp(x[1])), float(np.exp(x[2]))
        functions = self.functions(t_u, t_v)
        law = CopyLaw.tilted(x[0], x[3], x[4], x[5], functions)
        L, V = self.L, self.V
        aG, square_sum = law.average(functions["aG"]), law.average(functions["square_sum"])
        cG = (L * aG - 1) / (L - 1)
        c1 = 1 - cG
        kl, q_eff, m_eff = self._parts_of(law, t_u, t_v, functions)
        return RowMode(float(P), start, law.moments()[0], t_u, t_v, float(kl + self.data_term(q_eff, m_eff, P)),
                       float(aG), float(c1), float(cG), float((c1**2 + 2 * c1 * cG + L * cG**2) / (L * square_sum)),
                       float(aG**2 / square_sum), posterior_mean_loss(q_eff, m_eff, L, L, P, V, self.lam, self.beta, L),
                       law, (float(x[0]), float(x[3]), float(x[4]), float(x[5])))

    def profile(self, P: float, aG_grid) -> dict[str, list[float]]:
        raise EmergenceError("the row trial has no fixed-a_G profile yet; compare its modes (F_copy - F_uniform)")


TRIAL_THEORIES["row"] = RowPosteriorTheory


def sample_row_trial(mode: RowMode, L: int, V: int, s: float, draws: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    r"""``draws`` samples of :math:`W_{QK}` from the row trial at ``mode``, ``(draws, N, N)``, and :math:`\ln Q` of each, ``(draws,)``.

    :math:`\ln Q = \ln\mathcal N_{\mathcal K} + \ln\mathcal N_{\rm tok} + \ln\mathcal N_R + \sum_i\ln q_y(y_i) - \tfrac12\ln\det G`
    (the copy part's density in :math:`\theta` is :math:`\prod q_y(y_i)/\sqrt{\det G}`).
    """
    geometry = trial_geometry(L, V)
    N = V + L
    theta = np.zeros((draws, N * N))
    log_q = np.zeros(draws)
    for name, variance in (("flat", s), ("token", mode.t_u * s), ("rest", mode.t_v * s)):
        basis = geometry[name]
        z = rng.standard_normal((draws, basis.shape[1]))
        theta += np.sqrt(variance) * z @ basis.T
        log_q += -0.5 * (z**2).sum(1) - 0.5 * basis.shape[1] * np.log(2 * np.pi * variance)
    if mode.law is None:
        raise EmergenceError("a row-trial mode without its copy law cannot be sampled")
    boosts, log_density = mode.law.sample((draws, L), rng)
    scale = np.sqrt((L - 1) / L)
    theta += (scale * boosts) @ geometry["copy"].T
    log_q += (log_density - np.log(scale)).sum(1) - 0.5 * np.linalg.slogdet(geometry["copy"].T @ geometry["copy"])[1]
    return theta.reshape(draws, N, N), log_q


__all__ = ["CELL", "CELLS", "CopyLaw", "RowMode", "RowPosteriorTheory", "copy_span_kl",
           "gram_eigenvalue", "row_functions", "sample_row_trial", "trial_geometry"]
