r"""Umbrella sampling along one collective variable, combined by MBAR into a free-energy profile.

Window :math:`k` samples :math:`\pi_k(\theta) \propto e^{-U(\theta) - w_k(\xi(\theta))}` with the
harmonic bias :math:`w_k(\xi) = \tfrac{\kappa}{2}(\xi - \xi_k)^2`.  Given every window's draws of
:math:`\xi`, MBAR (Shirts & Chodera 2008, via ``pymbar``) solves for the window free energies
:math:`f_k` and weights each draw :math:`n` for the unbiased law,

.. math::
    W_n \propto \Big[\sum_k N_k\, e^{f_k - w_k(\xi_n)}\Big]^{-1},

(the unbiased potential :math:`U` is common to every window, so only the biases enter the
reduced potentials :math:`u_{kn} = w_k(\xi_n)`).  :func:`free_energy_profile` returns

* the profile :math:`F(\xi) = -\ln p(\xi)` on bins (nats, minimum 0),
* the probability mass of each side of a dividing value :math:`\xi_\dagger` and
  :math:`\Delta F = F_{\rm high} - F_{\rm low} = -\ln(m_{\rm high}/m_{\rm low})`,
* MBAR's overlap matrix and its smallest neighbour overlap :math:`O_{k,k+1}` (below about 0.03
  the windows do not connect and MBAR's answer is not determined by the data),

with standard errors from a bootstrap over chains (whole chains resampled within each window, so
the errors keep the chains' autocorrelation; MBAR's own asymptotic errors assume independent draws).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> centres, kappa = np.array([-1.0, 0.0, 1.0]), 4.0
>>> # exact draws of a standard normal biased by each window: N(kappa c / (1 + kappa), 1 / (1 + kappa))
>>> draws = [rng.normal(kappa * c / (1 + kappa), (1 + kappa) ** -0.5, size=(4, 400)) for c in centres]
>>> profile = free_energy_profile(np.array(draws), centres, kappa, divide=0.0, bins=np.linspace(-1.5, 1.5, 7))
>>> abs(profile.delta_F) < 3 * profile.delta_F_error and abs(profile.mean) < 3 * profile.mean_error
True
>>> profile.overlap_min > 0.03
True
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass

import numpy as np


def _pymbar():
    """Import ``pymbar`` quietly (it logs a JAX banner and a timeseries caveat at import)."""
    logging.getLogger("pymbar").setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pymbar
    except ImportError:
        from emergence.base.errors import EmergenceError

        raise EmergenceError("umbrella sampling needs pymbar: pip install 'emergence[bayes]'") from None
    return pymbar


def harmonic_bias(xi, centres, kappa) -> np.ndarray:
    r""":math:`w_k(\xi_n) = \tfrac{\kappa_k}{2}(\xi_n - \xi_k)^2`, shape ``(K, N)`` for ``xi (N,)``, ``centres (K,)``
    and ``kappa`` a float or ``(K,)`` (one stiffness per window)."""
    stiffness = np.broadcast_to(np.asarray(kappa, float), np.shape(centres))
    return 0.5 * stiffness[:, None] * (np.asarray(xi, float)[None, :] - np.asarray(centres, float)[:, None]) ** 2


@dataclass(frozen=True)
class FreeEnergyProfile:
    """MBAR's unbiased profile and basin masses; errors are bootstrap standard errors over chains."""

    bin_centres: np.ndarray  # (B,)
    F: np.ndarray  # (B,) nats, min 0; +inf for an empty bin
    F_error: np.ndarray  # (B,)
    mass_high: float  # P(xi >= divide)
    mass_high_error: float
    delta_F: float  # -ln(mass_high / mass_low)
    delta_F_error: float
    overlap: np.ndarray  # (K, K)
    overlap_min: float  # min_k O[k, k+1]
    mean: float  # unbiased mean of xi
    mean_error: float

    def basin_minimum(self, low: float, high: float) -> float | None:
        """Centre of the lowest bin with ``low <= centre < high`` if it is a local minimum of the profile
        (lower than both neighbours, which must be sampled); ``None`` otherwise (no basin there, only a slope)."""
        inside = np.flatnonzero((self.bin_centres >= low) & (self.bin_centres < high) & np.isfinite(self.F))
        if not len(inside):
            return None
        best = inside[np.argmin(self.F[inside])]
        if best == 0 or best == len(self.F) - 1:
            return None
        neighbours = self.F[[best - 1, best + 1]]
        return float(self.bin_centres[best]) if np.all(np.isfinite(neighbours)) and np.all(self.F[best] <= neighbours) else None


def delta_F_of_profile(grid, F, divide: float) -> float:
    r""":math:`\Delta F = -\ln(m_{\rm high}/m_{\rm low})` of a profile :math:`F(\xi)` given on ``grid (B,)`` (``F (B,)``),
    the quantity :class:`FreeEnergyProfile` measures from draws: the masses of :math:`e^{-F}` on the two sides of
    ``divide`` (trapezoid weights, summed in logs so that a basin :math:`e^{-700}` below the other stays finite).
    The copy task's posterior theory draws its profile in :math:`\xi = a_G`, high side the copy basin."""
    grid, F = np.asarray(grid, dtype=float), np.asarray(F, dtype=float)
    log_trapezoid = np.log(np.gradient(grid)) - F
    copy_side = grid >= divide
    return float(np.logaddexp.reduce(log_trapezoid[~copy_side]) - np.logaddexp.reduce(log_trapezoid[copy_side]))


def _unbiased_log_weights(xi, N_k, centres, kappa, pymbar, initial_f_k=None):
    """MBAR's log weights of the unbiased law for the pooled draws ``xi (N,)``, and the solved ``MBAR``; the solver
    starts from the window free energies ``initial_f_k (K,)`` where given (a bootstrap replica starts from the full
    data's: the same solution to the solver's tolerance, about 3x fewer iterations)."""
    u_kn = harmonic_bias(xi, centres, kappa)
    mbar = pymbar.MBAR(u_kn, N_k, solver_protocol="robust", initial_f_k=initial_f_k)
    log_denominator = np.logaddexp.reduce(np.log(N_k)[:, None] + mbar.f_k[:, None] - u_kn, axis=0)
    log_w = -log_denominator
    return log_w - np.logaddexp.reduce(log_w), mbar


def _summaries(xi, log_w, bins, divide):
    r"""The weighted histogram, the mass at ``xi >= divide``, :math:`\Delta F = \ln m_{\rm low} - \ln m_{\rm high}`
    and the mean.  Each side's mass is summed from its own draws, so a side without draws has mass exactly 0 and
    :math:`\Delta F = \pm\infty` (one minus the other side's sum of normalised weights is rounding, about 1e-14)."""
    w = np.exp(log_w)
    histogram = np.histogram(xi, bins=bins, weights=w)[0]
    high_side = xi >= divide
    high, low = np.float64(w[high_side].sum()), np.float64(w[~high_side].sum())
    with np.errstate(divide="ignore"):
        delta = float(np.log(low) - np.log(high))
    return histogram, float(high / (high + low)), delta, float((w * xi).sum())


def free_energy_profile(samples, centres, kappa, divide: float, bins, bootstrap: int = 100,
                        seed: int = 0, ladders: bool = False) -> FreeEnergyProfile:
    r"""The unbiased profile from ``samples (K, chains, draws)`` of :math:`\xi` in windows ``centres (K,)``
    of stiffness ``kappa`` (a float or ``(K,)``).

    ``divide`` splits the two basins; ``bins`` are the profile's bin edges.  The chains of each
    window are resampled with replacement ``bootstrap`` times for the errors; with ``ladders`` (windows
    that exchanged configurations, :mod:`~emergence.validation.samplers.window_exchange`) chain :math:`c` of
    every window is one ladder, and whole ladders are resampled (the same chain indices in every window),
    which keeps the correlation that exchange puts between neighbouring windows.
    """
    pymbar = _pymbar()
    samples = np.asarray(samples, dtype=float)
    K, chains, draws = samples.shape
    bins = np.asarray(bins, dtype=float)
    N_k = np.full(K, chains * draws)

    def estimate(chosen, initial_f_k=None):
        xi = samples[np.arange(K)[:, None], chosen].reshape(-1)
        log_w, mbar = _unbiased_log_weights(xi, N_k, centres, kappa, pymbar, initial_f_k)
        return _summaries(xi, log_w, bins, divide), mbar

    (histogram, high, delta, mean), mbar = estimate(np.tile(np.arange(chains), (K, 1)))
    overlap = np.asarray(mbar.compute_overlap()["matrix"])
    rng = np.random.default_rng(seed)
    def resample():
        return np.tile(rng.integers(0, chains, size=chains), (K, 1)) if ladders else rng.integers(0, chains, size=(K, chains))

    replicas = [estimate(resample(), mbar.f_k)[0] for _ in range(bootstrap)]
    with np.errstate(divide="ignore"):
        F = -np.log(histogram / np.diff(bins))
        F_replicas = -np.log(np.array([r[0] for r in replicas]) / np.diff(bins))
    F = F - np.min(F[np.isfinite(F)])
    F_replicas = F_replicas - np.nanmin(np.where(np.isfinite(F_replicas), F_replicas, np.nan), axis=1, keepdims=True)
    finite = np.isfinite(F_replicas)
    F_error = np.array([np.std(F_replicas[finite[:, b], b], ddof=1) if finite[:, b].sum() > 1 else np.inf
                        for b in range(len(F))])
    highs = np.array([r[1] for r in replicas])
    deltas = np.array([r[2] for r in replicas])  # an empty basin: Delta F = +-inf (no mass measured there)
    deltas = deltas[np.isfinite(deltas)]
    neighbours = [overlap[k, k + 1] for k in range(K - 1)]
    return FreeEnergyProfile(
        bin_centres=0.5 * (bins[1:] + bins[:-1]), F=F, F_error=F_error,
        mass_high=high, mass_high_error=float(np.std(highs, ddof=1)),
        delta_F=delta, delta_F_error=float(np.std(deltas, ddof=1)) if len(deltas) > 1 else float("inf"),
        overlap=overlap, overlap_min=float(min(neighbours)) if neighbours else 1.0,
        mean=mean, mean_error=float(np.std([r[3] for r in replicas], ddof=1)),
    )
