r"""Posterior-level reduced theory of softmax model T: numerics of step 7 (the MAP is the saddle).

Evaluates the mean-field free energy derived in :mod:`emergence.theory.copy_head.posterior`,

.. math::
    F(g, t_u, t_v; P) = \frac{(L-1)g^2}{2s} + n_u\,I(t_u) + n_v\,I(t_v)
    + S_{\rm data}(q_{\rm eff}, m_{\rm eff}, L, L; P), \qquad I(t) = \tfrac12(t - 1 - \ln t),

with the trial's entropy counts (:func:`trial_entropy_counts`): the gauge-correct trial (default)
keeps the prior's variance along the 3(V + L) - 2 directions that leave every attention row unchanged,
:math:`n_u = (V + L - 1)(V - 1)`, :math:`n_v = (V + L - 1)(L - 1)`; the product trial squeezes them too,
:math:`n_u = V^2 + LV`, :math:`n_v = LV + L^2`.  Both give the same attention law, hence the same data
term, with :math:`q_{\rm eff} = L(VQ_\Phi - 1)/(V - 1)`, :math:`m_{\rm eff} = L(VM_\Phi - 1)/(V - 1)`,
and minimises it within the uniform and the copy mode.  The row averages
:math:`Q_\Phi = \mathbb E\sum_a\Phi_a^2`, :math:`M_\Phi = \mathbb E\Phi_{x_{i-1}}` of the
logits :math:`\ell_j = g[j = i-1] + u_{x_j} + v_j` (:math:`u \sim \mathcal N(0, 2t_us)` per
token class, :math:`v \sim \mathcal N(0, 2t_vs)` per key) come from

- :func:`row_averages_monte_carlo`: Monte Carlo over tokens and both noises, with fixed
  (common) random numbers so that :math:`F` is smooth in :math:`(g, t_u, t_v)`;
- :func:`row_averages_iid`: for key-position noise only, the lognormal Laplace-transform
  quadrature of :func:`~emergence.theory.copy_head.posterior.iid_row_averages`
  (Gauss–Hermite in the noise, trapezoid in :math:`\ln\tau`), the check of the Monte Carlo;
- :func:`row_averages_quadrature`: both noises, the same Laplace quadrature given the V token noises
  (the keys are independent then), averaged over them by a symmetric Gauss–Hermite rule
  (:func:`token_noise_nodes`): deterministic, its cost independent of L
  (``PosteriorTheory(..., averages="quadrature")``).

Nothing here needs SymPy; ``tests/test_copy_head_posterior.py`` checks each formula against
the SymPy derivation and against brute force.  The predictions are **posterior** means
(label ``"posterior"``); :func:`emergence.numerics.copy_head.phase_diagram.phase_diagram` on
the reduced action stays the **MAP** (saddle) prediction.

>>> theory = PosteriorTheory(L=8, V=4, draws=2000)
>>> mode = theory.minimise(P=50.0, start="uniform")
>>> 0.1 < mode.aG < 0.2
True
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize

from emergence.numerics.copy_head.reduced_action import default_convention, generated_kernels, model_scales
from emergence.base.errors import EmergenceError

MODES: tuple[str, ...] = ("uniform", "copy")

COORDINATES: tuple[str, ...] = ("g", "ln t_u", "ln t_v")
"""The variational coordinates of the Gaussian trials, in this order (the row trial has its own)."""

DISTINCT_MODES = 0.05
"""Two modes are distinct where their copy weights :math:`a_G` differ by more than this."""


TRIALS: tuple[str, ...] = ("gauge", "product", "row", "block")
"""``row``: :mod:`emergence.numerics.copy_head.row_trial` (each row's copy gap on its own 1-D law); ``block``:
:mod:`emergence.numerics.copy_head.block_posterior` (one variance ratio per block of W_QK, KL in closed form)."""

DEFAULT_TRIAL = "block"
"""The posterior theory's trial wherever none is named (the theory, its P*, the validation's verdict, the size
study): the block trial.  Its data term is the gauge-correct trial's, its KL exact and its family a superset, so its
F is never higher; judged on the converged sampled profiles (L = 8, 12, 16) it is the closer of the two at every
point and its P* the closer at every L (docs/posterior_free_energy.md, "The block trial against the converged
profiles").  ``trial="gauge"`` keeps the gauge-correct trial."""

AVERAGES: tuple[str, ...] = ("monte_carlo", "quadrature")
"""How :class:`PosteriorTheory` computes the row averages: :func:`row_averages_monte_carlo` on fixed draws
(``draws`` rows, common random numbers) or :func:`row_averages_quadrature` (deterministic; cost independent of L)."""

TRIAL_THEORIES: dict[str, type] = {}
"""Subclasses of :class:`PosteriorTheory` for trials beyond the Gaussian ones, registered by their modules (the
package imports :mod:`~emergence.numerics.copy_head.row_trial`), so that ``PosteriorTheory(..., trial="row")`` is one."""


def trial_entropy_counts(trial: str, L: int, V: int) -> tuple[int, int]:
    r"""Directions of :math:`W_{QK}` at variance ratio :math:`t_u` and :math:`t_v` that the ``trial`` pays :math:`I(t)` for.

    :func:`emergence.theory.copy_head.posterior.trial_entropy` derives both (tested against it).
    """
    if trial == "gauge":
        return (V + L - 1) * (V - 1), (V + L - 1) * (L - 1)
    if trial == "product":
        return V * (V + L), L * (V + L)
    if trial == "row":
        return (V + L - 1) * (V - 1), (V + L - 1) * (L - 1) - L
    raise EmergenceError(f"unknown trial {trial!r}; choose one of {', '.join(TRIALS)}")


def entropy_rate(t):
    r""":math:`I(t) = (t - 1 - \ln t)/2`, the KL cost per entry of a variance ratio t."""
    t = np.asarray(t, dtype=float)
    return 0.5 * (t - 1.0 - np.log(t))


def data_action(q, m, r, n, P, V, lam, beta, L):
    r"""The step-2 population action :math:`S_{\rm data}(q, m, r, n; P)` (raw targets, cyclic shift).

    :math:`\tilde p = \lambda\beta P/V`:
    :math:`\tfrac{\beta PL}{2} - \tfrac{\beta P\tilde p}{2}[(1-\tfrac1V)\tfrac{m^2}{1+\tilde pq}
    + \tfrac{n^2}{V(1+\tilde pr)}] + \tfrac{V(V-1)}{2}\ln(1+\tilde pq) + \tfrac V2\ln(1+\tilde pr)`.
    """
    p = lam * beta * P / V
    return (beta * P * L / 2
            - beta * P * p / 2 * ((1 - 1 / V) * m**2 / (1 + p * q) + n**2 / (V * (1 + p * r)))
            + V * (V - 1) / 2 * np.log1p(p * q) + V / 2 * np.log1p(p * r))


def _ij(a, b):
    return np.array([a, b], dtype=float)


def _ij_product(x, y, V):
    """(aI + bJ)(cI + dJ) = ac I + (ad + bc + bdV) J."""
    return _ij(x[0] * y[0], x[0] * y[1] + x[1] * y[0] + x[1] * y[1] * V)


def _ij_inverse(x, V):
    return _ij(1 / x[0], -x[1] / (x[0] * (x[0] + x[1] * V)))


def posterior_mean_loss(q, m, r, n, P, V, lam, beta, L) -> float:
    r"""Per-position test loss of the posterior-mean readout :math:`\bar W = \varepsilon P(I + \varepsilon PC_1)^{-1}B_1`.

    :math:`C_1 = q(I/V - J/V^2) + rJ/V^2`, :math:`B_1` likewise in :math:`m, n`,
    :math:`\operatorname{tr}D_1 = L`;
    :math:`E = [\operatorname{tr}D_1 - 2\operatorname{tr}\bar WB_1 + \operatorname{tr}\bar WC_1\bar W]/L`,
    computed in the algebra of :math:`aI + bJ` (trace :math:`V(a + b)`).
    """
    C1 = _ij(q / V, (r - q) / V**2)
    B1 = _ij(m / V, (n - m) / V**2)
    scale = lam * beta * P
    W = _ij_product(_ij_inverse(_ij(1 + scale * C1[0], scale * C1[1]), V), B1 * scale, V)

    def trace(x):
        return V * (x[0] + x[1])

    return float((L - 2 * trace(_ij_product(W, B1, V)) + trace(_ij_product(_ij_product(W, C1, V), W, V))) / L)


def effective_invariants(square, target, L, V):
    r""":math:`q_{\rm eff} = L(VQ_\Phi - 1)/(V-1)`, :math:`m_{\rm eff} = L(VM_\Phi - 1)/(V-1)`."""
    return L * (V * square - 1) / (V - 1), L * (V * target - 1) / (V - 1)


@functools.lru_cache(maxsize=None)
def gauss_hermite(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Nodes and weights of :math:`\int e^{-x^2}f(x)dx`, the weights divided by :math:`\sqrt\pi` (they sum to 1)."""
    x, w = np.polynomial.hermite.hermgauss(nodes)
    return x, w / np.sqrt(np.pi)


def lognormal_laplace(tau, shift, variance: float, nodes: int = 80):
    r""":math:`\varphi`, :math:`-\varphi'`, :math:`\varphi''` of :math:`\varphi(\tau) = \mathbb E e^{-\tau e^{\ell}}`, :math:`\ell \sim \mathcal N(\text{shift}, \text{variance})`.

    Gauss–Hermite with ``nodes`` nodes: :math:`\mathbb Ef(\ell) = \pi^{-1/2}\sum_k w_k f(\text{shift} + \sqrt{2\,\text{variance}}\,x_k)`;
    :math:`(-\partial_\tau)^k\varphi = \mathbb E[e^{k\ell}e^{-\tau e^\ell}]`.  Shapes: ``tau`` and ``shift``
    broadcast together.
    """
    x, w = gauss_hermite(nodes)
    level = np.exp(np.asarray(shift, dtype=float)[..., None] + np.sqrt(2 * variance) * x)
    tau = np.asarray(tau, dtype=float)[..., None]
    decay = np.exp(-tau * level)
    return (decay * w).sum(-1), (decay * level * w).sum(-1), (decay * level**2 * w).sum(-1)


def row_averages_iid(g: float, variance: float, L: int, nodes: int = 80, tau_points: int = 1500) -> dict[str, float]:
    r"""``aG`` and ``square_sum`` :math:`= \mathbb E\sum_jA_j^2` for i.i.d. key noise of ``variance`` (quadrature).

    :math:`a = \int(-\varphi_g')\varphi^{L-1}d\tau`,
    :math:`\mathbb E\sum A^2 = \int\tau[\varphi_g''\varphi^{L-1} + (L-1)\varphi''\varphi_g\varphi^{L-2}]d\tau`,
    on :math:`\tau = e^y` (trapezoid in y over a range covering :math:`1/Z`).
    """
    spread = 9.0 * np.sqrt(variance) + 8.0
    y = np.linspace(-(max(g, 0.0) + np.log(L) + spread), spread, tau_points)
    tau = np.exp(y)
    phi, d1, d2 = lognormal_laplace(tau, 0.0, variance, nodes)
    phi_g, d1_g, d2_g = lognormal_laplace(tau, g, variance, nodes)
    aG = np.trapezoid(d1_g * phi ** (L - 1) * tau, y)
    square = np.trapezoid(tau * (d2_g * phi ** (L - 1) + (L - 1) * d2 * phi_g * phi ** (L - 2)) * tau, y)
    return {"aG": float(aG), "square_sum": float(square)}


def phi_moments_iid(aG: float, square_sum: float, V: int) -> dict[str, float]:
    r""":math:`Q_\Phi = (1-\tfrac1V)\mathbb E\sum_jA_j^2 + \tfrac1V`, :math:`M_\Phi = (1-\tfrac1V)a + \tfrac1V` (noise independent of tokens).

    For attention independent of the i.i.d. uniform tokens,
    :math:`\mathbb E\sum_a\Phi_a^2 = \sum_jA_j^2 + \sum_{j\ne k}A_jA_k/V` and rows sum to one.
    """
    return {"square": (1 - 1 / V) * square_sum + 1 / V, "target": (1 - 1 / V) * aG + 1 / V}


@functools.lru_cache(maxsize=None)
def token_noise_nodes(V: int, nodes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Gauss–Hermite product rule over the V i.i.d. standard normal token noises, reduced by their exchangeability.

    Returns ``x`` (nodes,), the standard normal nodes; ``counts`` (M, nodes), how many of the V noises sit on each
    node in each of the :math:`M = \binom{\text{nodes} + V - 1}{V}` multisets; ``weights`` (M,), the product
    weights times the multiset's number of orderings (they sum to 1).  A function of the V noises that is
    symmetric under their permutations integrates exactly as on the full product grid.
    """
    x, w = gauss_hermite(nodes)
    x = np.sqrt(2.0) * x
    multisets = np.array(list(itertools.combinations_with_replacement(range(nodes), V)))  # (M, V)
    counts = np.stack([np.count_nonzero(multisets == i, axis=1) for i in range(nodes)], axis=1)
    orderings = math.factorial(V) / np.prod(np.vectorize(math.factorial)(counts), axis=1)
    return x, counts.astype(float), orderings * np.prod(w[multisets], axis=1)


def row_averages_quadrature(g: float, token_variance: float, position_variance: float, L: int, V: int,
                            token_nodes: int | None = None, nodes: int = 24, tau_points: int = 200) -> dict[str, float]:
    r"""``aG``, ``square_sum``, ``square`` (:math:`Q_\Phi`), ``target`` (:math:`M_\Phi`) of :func:`row_averages_monte_carlo` by quadrature.

    Given the V token noises :math:`\xi_a` the L keys are independent, so with
    :math:`1/Z = \int_0^\infty e^{-\tau Z}d\tau`, :math:`1/Z^2 = \int_0^\infty\tau e^{-\tau Z}d\tau` every average
    is a :math:`\tau` integral of per-key Laplace transforms
    :math:`f_k(\tau; c) = \mathbb E_\zeta[e^{k(c+\zeta)}e^{-\tau e^{c+\zeta}}]` (:func:`lognormal_laplace`,
    :math:`\zeta \sim \mathcal N(0, \text{position\_variance})`).  With :math:`\Psi_k = \tfrac1V\sum_a f_k(\cdot; \xi_a)`
    (a key of random token) and :math:`h_k = f_k(\cdot; g + \xi_b)` (key 0, token b), averaged over b:

    - :math:`a_G = \int h_1\Psi_0^{L-1}`,
    - :math:`\mathbb E\sum_jA_j^2 = \int\tau[h_2\Psi_0^{L-1} + (L-1)h_0\Psi_2\Psi_0^{L-2}]`,
    - :math:`M_\Phi = a_G + \tfrac{L-1}{V}\int h_0f_1(\xi_b)\Psi_0^{L-2}`,
    - :math:`Q_\Phi = \mathbb E\sum_jA_j^2 + \int\tau[\tfrac{2(L-1)}{V}h_1f_1(\xi_b)\Psi_0^{L-2}
      + (L-1)(L-2)h_0\tfrac1{V^2}\textstyle\sum_af_1(\xi_a)^2\Psi_0^{L-3}]`,

    then over :math:`\xi` by :func:`token_noise_nodes` (``token_nodes`` per noise).  The :math:`\tau` integral is
    a trapezoid rule in :math:`\ln\tau` (``tau_points``) over a range covering :math:`1/Z`.  The cost does not
    grow with L.  Deterministic and smooth in ``g`` and both variances; reduces to :func:`row_averages_iid`
    without token noise.  The defaults put the free energy within 4e-4 nats of 100 position nodes and 3000
    :math:`\tau` points at the modes of L = 12..1024 (V = 4); the token rule's own error is below the 20 000-row
    Monte Carlo's (relative 1e-3 in :math:`Q_\Phi` at L = 1024, g = 0, both variances 2, against 14 token nodes).
    ``token_nodes`` defaults to 6 up to V = 4 and 5 above (V = 8: 495 multisets instead of 1287; F within
    0.02 nats of 7 nodes at L = 8–32).
    """
    x, counts, weights = token_noise_nodes(V, token_nodes if token_nodes is not None else (6 if V <= 4 else 5))
    share = counts / V  # (M, nodes): a key's token on each node
    shifts = np.sqrt(token_variance) * x
    spread = 9.0 * np.sqrt(token_variance + position_variance) + 8.0
    y = np.linspace(-(max(g, 0.0) + np.log(L) + spread), spread, tau_points)
    tau = np.exp(y)
    f0, f1, f2 = lognormal_laplace(tau[None, :], shifts[:, None], position_variance, nodes)  # (nodes, T) each
    h0, h1, h2 = lognormal_laplace(tau[None, :], g + shifts[:, None], position_variance, nodes)
    psi, psi2, pair = share @ f0, share @ f2, share @ f1**2 / V  # (M, T)
    with np.errstate(divide="ignore"):  # psi underflows to 0 far out in tau, where every power is 0
        top = np.exp((L - 3) * np.log(psi)) if L > 3 else np.ones_like(psi)
    power = {3: top, 2: top * psi, 1: top * psi**2}  # psi**(L - k)
    key0 = share @ h0

    def integral(integrand):
        return float(np.trapezoid((weights @ integrand) * tau, y))

    aG = integral((share @ h1) * power[1])
    square_sum = integral(tau * ((share @ h2) * power[1] + (L - 1) * key0 * psi2 * power[2]))
    target = aG + (L - 1) / V * integral((share @ (h0 * f1)) * power[2])
    square = square_sum + integral(tau * (2 * (L - 1) / V * (share @ (h1 * f1)) * power[2]
                                          + (L - 1) * (L - 2) * key0 * pair * power[3]))
    return {"aG": aG, "square_sum": square_sum, "square": square, "target": target}


@dataclass(frozen=True)
class RowNoise:
    """Fixed standard normals and tokens of the Monte Carlo (common random numbers)."""

    token_noise: np.ndarray  # (draws, V)
    position_noise: np.ndarray  # (draws, L)
    tokens: np.ndarray  # (draws, L); column 0 is the previous token's key

    @classmethod
    def draw(cls, L: int, V: int, draws: int, seed: int) -> "RowNoise":
        rng = np.random.default_rng(seed)
        return cls(rng.standard_normal((draws, V)), rng.standard_normal((draws, L)),
                   rng.integers(0, V, size=(draws, L)))

    @functools.cached_property
    def by_key(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Key-major copies, each key a contiguous row (the row reductions then run along the draws): the token noise
        of each key's token and the position noise, ``(L, draws)`` each, and the key tokens one-hot, ``(V, L, draws)``."""
        V = self.token_noise.shape[1]
        token_noise = np.take_along_axis(self.token_noise, self.tokens, axis=1).T.copy()
        one_hot = (self.tokens.T[None, :, :] == np.arange(V)[:, None, None]).astype(float)
        return token_noise, self.position_noise.T.copy(), one_hot


def row_averages_monte_carlo(g: float, token_variance: float, position_variance: float, noise: RowNoise,
                             V: int) -> dict[str, tuple[float, float]]:
    r"""Monte Carlo row averages with standard errors: ``aG``, ``square_sum``, ``square`` (:math:`Q_\Phi`), ``target`` (:math:`M_\Phi`).

    Row logits :math:`\ell_j = g[j = 0] + \sqrt{\text{token\_variance}}\,\xi_{x_j} + \sqrt{\text{position\_variance}}\,\zeta_j`
    (key 0 is the previous token), :math:`A = \operatorname{softmax}(\ell)`,
    :math:`\Phi_a = \sum_{j: x_j = a}A_j`.
    """
    draws = noise.tokens.shape[0]
    token_noise, position_noise, one_hot = noise.by_key  # key-major: (L, draws), (L, draws), (V, L, draws)
    logits = np.sqrt(token_variance) * token_noise + np.sqrt(position_variance) * position_noise
    logits[0] += g
    logits -= logits.max(axis=0)
    weights = np.exp(logits)
    weights /= weights.sum(axis=0)
    per_class = np.einsum("vkd,kd->vd", one_hot, weights)  # (V, draws)
    values = {
        "aG": weights[0],
        "square_sum": (weights**2).sum(axis=0),
        "square": (per_class**2).sum(axis=0),
        "target": (per_class * one_hot[:, 0]).sum(axis=0),
    }
    return {key: (float(v.mean()), float(v.std(ddof=1) / np.sqrt(draws))) for key, v in values.items()}


@dataclass(frozen=True)
class PosteriorMode:
    """One minimum of :math:`F` at one P: the variational parameters and the posterior predictions."""

    P: float
    start: str
    g: float
    t_u: float
    t_v: float
    free_energy: float
    aG: float
    c1: float
    cG: float
    coverage: float
    copy_fraction: float
    loss: float


class PosteriorTheory:
    """The posterior free energy of softmax model T at sizes ``L, V`` (convention's scales) for one ``trial``; see the module docstring.

    ``averages`` (:data:`AVERAGES`): the row averages by Monte Carlo on ``draws`` fixed rows drawn with ``seed``
    (the default) or by :func:`row_averages_quadrature` (``draws`` and ``seed`` unused; Gaussian trials only).
    """

    bounds = np.array([[-5.0, 40.0], [-6.0, 3.0], [-6.0, 3.0]])
    """The search box of :data:`COORDINATES`, shape ``(k, 2)``: :meth:`minimise`'s and the solver core's."""

    def __new__(cls, *args, trial: str = DEFAULT_TRIAL, **kwargs):
        return super().__new__(TRIAL_THEORIES.get(trial, cls) if cls is PosteriorTheory else cls)

    def __init__(self, L: int, V: int, convention=None, draws: int = 20_000, seed: int = 0, kernels=None,
                 trial: str = DEFAULT_TRIAL, averages: str = "monte_carlo"):
        convention = convention if convention is not None else default_convention()
        if convention.architecture != "T":
            raise EmergenceError("the posterior theory covers softmax model T only (architecture=T)")
        self.L, self.V = int(L), int(V)
        kernels = kernels if kernels is not None else generated_kernels()
        self.s, self.lam, self.beta = model_scales(kernels, "softmax", L, V, convention)
        self.trial = trial
        self.token_directions, self.position_directions = trial_entropy_counts(trial, self.L, self.V)
        if averages not in AVERAGES:
            raise EmergenceError(f"unknown row averages {averages!r}; choose one of {', '.join(AVERAGES)}")
        self.averages = averages
        self.noise = RowNoise.draw(self.L, self.V, draws, seed) if averages == "monte_carlo" else None

    def row_averages(self, g, t_u, t_v) -> dict[str, float]:
        """Row averages (means) at noise variances :math:`2t_us`, :math:`2t_vs`: ``averages="monte_carlo"``
        (:func:`row_averages_monte_carlo` on the theory's fixed draws) or ``"quadrature"`` (:func:`row_averages_quadrature`)."""
        if self.noise is None:
            return row_averages_quadrature(g, 2 * t_u * self.s, 2 * t_v * self.s, self.L, self.V)
        result = row_averages_monte_carlo(g, 2 * t_u * self.s, 2 * t_v * self.s, self.noise, self.V)
        return {key: value[0] for key, value in result.items()}

    def free_energy(self, g, t_u, t_v, P, averages: dict[str, float] | None = None) -> float:
        """:math:`F(g, t_u, t_v; P)`."""
        averages = averages if averages is not None else self.row_averages(g, t_u, t_v)
        q_eff, m_eff = effective_invariants(averages["square"], averages["target"], self.L, self.V)
        return float(self.prior_and_entropy(g, t_u, t_v) + self.data_term(q_eff, m_eff, P))

    def prior_and_entropy(self, g, t_u, t_v) -> float:
        r""":math:`(L-1)g^2/2s + n_uI(t_u) + n_vI(t_v)`, the part of :math:`F` that does not depend on P."""
        return float((self.L - 1) * g**2 / (2 * self.s)
                     + self.token_directions * entropy_rate(t_u) + self.position_directions * entropy_rate(t_v))

    def data_term(self, q_eff, m_eff, P):
        r""":math:`S_{\rm data}(q_{\rm eff}, m_{\rm eff}, L, L; P)` (:func:`data_action`; arrays broadcast)."""
        return data_action(q_eff, m_eff, self.L, self.L, P, self.V, self.lam, self.beta, self.L)

    def action_parts(self, y) -> tuple[float, float, float]:
        r"""``(prior and entropy, q_eff, m_eff)`` at coordinates ``y`` = :data:`COORDINATES`: :math:`F(y; P)` is the first
        plus :meth:`data_term` of the others (what :class:`~.posterior_action.PosteriorAction` evaluates)."""
        g, t_u, t_v = float(y[0]), float(np.exp(y[1])), float(np.exp(y[2]))
        averages = self.row_averages(g, t_u, t_v)
        q_eff, m_eff = effective_invariants(averages["square"], averages["target"], self.L, self.V)
        return self.prior_and_entropy(g, t_u, t_v), float(q_eff), float(m_eff)

    def start_axes(self, points: int = 9) -> tuple[np.ndarray, ...]:
        r"""The solver core's start grid: the uniform mode (g near 0) to the copy mode (g up to :math:`\ln L + 6`)
        at prior-like and squeezed variances."""
        return (np.linspace(-1.0, np.log(self.L) + 6.0, points), np.array([-1.0, 0.0]), np.array([-0.5, 0.0]))

    def mode_at(self, P: float, start: str, y) -> PosteriorMode:
        """The :class:`PosteriorMode` at coordinates ``y`` (:data:`COORDINATES`)."""
        return self.mode(P, start, *y)

    def start_point(self, start: str) -> np.ndarray:
        """``(g, ln t_u, ln t_v)``: prior noise; g = 0 (uniform) or the logit of weight 0.9 on the previous token (copy)."""
        if start not in MODES:
            raise EmergenceError(f"unknown mode {start!r}; choose uniform or copy")
        g = 0.0 if start == "uniform" else np.log(0.9 * (self.L - 1) / 0.1)
        return np.array([g, 0.0, 0.0])

    def minimise(self, P: float, start: str = "uniform", x0=None) -> PosteriorMode:
        """The local minimum of :math:`F(\\cdot; P)` reached from ``start`` (or ``x0``)."""
        x0 = self.start_point(start) if x0 is None else np.asarray(x0, dtype=float)

        def objective(x):
            return self.free_energy(x[0], np.exp(x[1]), np.exp(x[2]), P)

        result = minimize(objective, x0, method="L-BFGS-B", bounds=self.bounds.tolist(),
                          options={"eps": 1e-5, "maxiter": 300})
        return self.mode(P, start, *result.x)

    def mode(self, P, start, g, log_t_u, log_t_v) -> PosteriorMode:
        t_u, t_v = float(np.exp(log_t_u)), float(np.exp(log_t_v))
        averages = self.row_averages(g, t_u, t_v)
        L, V = self.L, self.V
        aG = averages["aG"]
        cG = (L * aG - 1) / (L - 1)
        c1 = 1 - cG
        q_raw = L * averages["square_sum"]
        coverage = (c1**2 + 2 * c1 * cG + L * cG**2) / q_raw
        q_eff, m_eff = effective_invariants(averages["square"], averages["target"], L, V)
        loss = posterior_mean_loss(q_eff, m_eff, L, L, P, V, self.lam, self.beta, L)
        return PosteriorMode(float(P), start, float(g), t_u, t_v, self.free_energy(g, t_u, t_v, P, averages),
                             float(aG), float(c1), float(cG), float(coverage), float(aG**2 / averages["square_sum"]),
                             loss)

    def copy_logit(self, aG: float, t_u: float, t_v: float, near: float | None = None) -> float:
        """The copy logit g at which the row average of the previous token's attention is ``aG`` (noise ``t_u, t_v``).

        The row average rises with g, so Brent's method on [-20, 60] finds the one root; ``near``, a guess (the root at
        nearby noise), first tries the bracket ``near`` ± 0.5, which saves about half the row averages where it holds."""
        def gap(g):
            return self.row_averages(g, t_u, t_v)["aG"] - aG

        if near is not None:
            low, high = near - 0.5, near + 0.5
            if gap(low) < 0 < gap(high):
                return float(brentq(gap, low, high, xtol=1e-6))
        return float(brentq(gap, -20.0, 60.0, xtol=1e-6))

    def profile(self, P: float, aG_grid) -> dict[str, list[float]]:
        r"""The predicted free-energy profile :math:`F_{\rm th}(a_G; P) = \min_{t_u, t_v} F(g(a_G; t_u, t_v), t_u, t_v; P)`.

        At each :math:`a_G` the copy logit :math:`g` is solved so that the row average of the
        previous token's attention equals :math:`a_G` (:meth:`copy_logit`), and the bulk variances
        are optimised (Nelder–Mead in :math:`\ln t_u, \ln t_v`, warm-started along the grid).
        Returns ``aG``, ``F`` (minimum 0 on the grid), ``t_u``, ``t_v``, ``g``.
        """
        x = np.zeros(2)
        F, t_u, t_v, g = [], [], [], []
        for a in aG_grid:
            guess = [None]  # the copy logit of the last evaluation: the next one's bracket (copy_logit's near)

            def objective(y, a=a, guess=guess):
                tu, tv = np.exp(y)
                guess[0] = self.copy_logit(a, tu, tv, near=guess[0])
                return self.free_energy(guess[0], tu, tv, P)

            x = minimize(objective, x, method="Nelder-Mead", options={"xatol": 1e-3, "fatol": 1e-4}).x
            F.append(float(objective(x)))
            t_u.append(float(np.exp(x[0])))
            t_v.append(float(np.exp(x[1])))
            g.append(self.copy_logit(a, t_u[-1], t_v[-1], near=guess[0]))
        F_array = np.asarray(F)
        return {"aG": [float(a) for a in aG_grid], "F": (F_array - F_array.min()).tolist(), "t_u": t_u, "t_v": t_v, "g": g}

    def modes(self, P: float) -> dict[str, PosteriorMode]:
        """Both local minima at ``P`` (the copy search may fall into the uniform mode where no copy mode exists)."""
        return {start: self.minimise(P, start) for start in MODES}
