r"""Effective sample size and error bars for correlated Markov-chain samples.

For ``samples`` of shape ``(chains, draws)`` the autocorrelation :math:`\rho_t` is
estimated across chains (the multi-chain estimator of Gelman et al. / Stan),
:math:`\hat\rho_t = 1 - (W - \bar\gamma_t)/\widehat{\operatorname{var}}^+`, and summed
with Geyer's initial positive sequence:

.. math::
    \tau = -1 + 2\sum_{k \ge 0} (\hat\rho_{2k} + \hat\rho_{2k+1}), \qquad
    \mathrm{ESS} = \frac{\text{chains}\cdot\text{draws}}{\tau}.

The standard error of the mean is :math:`\hat\sigma/\sqrt{\mathrm{ESS}}`.  Needs at least
4 draws per chain; for a constant series ESS is the number of samples.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> ess = effective_sample_size(rng.normal(size=(4, 1000)))
>>> 3000 < ess < 5000
True
"""

from __future__ import annotations

import warnings

import numpy as np


def effective_sample_size(samples) -> float:
    """ESS of a ``(chains, draws)`` array of one scalar quantity."""
    x = np.asarray(samples, dtype=float)
    if x.ndim == 1:
        x = x[None, :]
    chains, draws = x.shape
    if draws < 4:
        raise ValueError("effective_sample_size needs at least 4 draws per chain")
    centred = x - x.mean(axis=1, keepdims=True)
    spectrum = np.fft.rfft(centred, n=2 * draws, axis=1)
    autocov = np.fft.irfft(spectrum * np.conj(spectrum), axis=1)[:, :draws] / draws
    within = autocov[:, 0].mean() * draws / (draws - 1)
    between_part = x.mean(axis=1).var(ddof=1) if chains > 1 else 0.0
    variance_plus = within * (draws - 1) / draws + between_part
    if variance_plus <= 0:
        return float(chains * draws)
    rho = 1.0 - (within - autocov.mean(axis=0)) / variance_plus
    rho[0] = 1.0
    tau = -1.0
    for k in range(0, draws - 1, 2):
        pair = rho[k] + rho[k + 1]
        if pair < 0:
            break
        tau += 2.0 * pair
    return float(chains * draws / max(tau, 1e-12))


def mean_and_standard_error(samples) -> tuple[float, float]:
    """Sample mean of a ``(chains, draws)`` array and its standard error from the ESS.

    One estimator per record: ArviZ's ESS for the mean when ArviZ is installed (the same library
    as :func:`rhat_and_bulk_ess`), else :func:`effective_sample_size` (``tests/test_chain_diagnostics.py``
    checks the two agree on autocorrelated chains).
    """
    x = np.asarray(samples, dtype=float)
    if x.ndim == 1:
        x = x[None, :]
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(mean_ess(x)))


def mean_ess(x: np.ndarray) -> float:
    """ESS for the mean of a ``(chains, draws)`` array: ArviZ's ``method="mean"`` if installed, else our own."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import arviz
    except ImportError:
        return effective_sample_size(x)
    if np.ptp(x) == 0 or x.shape[1] < 4:
        return effective_sample_size(x)
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        return float(arviz.ess(x, method="mean"))


def rhat_and_bulk_ess(samples) -> tuple[float, float]:
    r"""Rank-normalised split :math:`\hat R` and bulk ESS of a ``(chains, draws)`` array, from ArviZ.

    ArviZ is the optional extra ``bayes``; without it this raises
    :class:`~emergence.base.errors.EmergenceError` (one line at the CLI).  A constant series
    (every chain stuck on one value) has an undefined :math:`\hat R`; it is reported as
    :math:`+\infty` only if the chains disagree, else 1.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import arviz
    except ImportError:
        from emergence.base.errors import EmergenceError

        raise EmergenceError("R-hat and bulk ESS need ArviZ: pip install 'emergence[bayes]'") from None
    x = np.asarray(samples, dtype=float)
    if x.ndim == 1:
        x = x[None, :]
    if x.shape[1] < 4:
        raise ValueError("rhat_and_bulk_ess needs at least 4 draws per chain")
    if np.ptp(x) == 0:
        return 1.0, float(x.size)
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")  # a chain that never moves: zero within-chain variance (R-hat inf below)
        rhat = float(arviz.rhat(x, method="rank"))
        ess = float(arviz.ess(x, method="bulk"))
    if not np.isfinite(rhat):
        rhat = float("inf")
    return rhat, ess
