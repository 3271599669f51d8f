r"""Which assumption of the **linear** posterior theory breaks: its Gaussian trial weighed against the model's posterior.

The linear posterior theory (:mod:`emergence.numerics.copy_head.linear_posterior`) is a variational
free energy over a Gaussian trial for model T's :math:`W_{QK}` (``(N, N)``, :math:`N = V + L`):

* mean :math:`\bar W`, the minimum-norm weights whose linear attention is :math:`c_1J/L + c_GS` on every
  sequence (:func:`mean_weights`; its prior cost is the theory's :math:`(c_1 + c_G)^2/2s_1 + (L-1)c_G^2/2s_G`);
* covariance ``product``: independent entries, :math:`t_us` in the key-token columns and :math:`t_vs` in the
  key-position columns; ``gauge`` (the default): that law's marginal on the directions the logits see and the
  prior :math:`s` on the :math:`2N - 1` flat ones, :math:`f\,d^T` and :math:`d\,f^T`, :math:`f = (\mathbf 1_V; -\mathbf 1_L)`
  (:func:`trial_covariance`).

:func:`importance_sampled_linear_free_energy` draws :math:`W_{QK}` from the trial and weighs each draw by
:math:`w = \text{prior}(\theta)\,e^{-S_{\rm data}(\theta)}/Q(\theta)`, with the model's own readout-marginal
action on the ``P`` training sequences of the measurement's data seed.  :math:`F_Q = \mathbb E_Q[-\ln w]`
is the trial's variational free energy with the exact data term (the theory's F evaluates that term at
the population level and at the trial's averaged :math:`\mathbb E[\Phi^T\Phi]`); :math:`F_{\rm IS} = -\ln\frac1N\sum_n w_n`
tends to :math:`-\ln Z` (biased upward at finite N, so the gap :math:`F_Q - F_{\rm IS} = \mathrm{KL}(Q\|p)`
it shows is a lower bound).  The posterior is even under :math:`\theta \to -\theta` (the readout follows the
sign), so where :math:`\bar W \ne 0` the trial is symmetrised, :math:`\tfrac12[Q(\theta) + Q(-\theta)]`; its
:math:`F_Q` then lies up to :math:`\ln 2` below the single Gaussian's (``F_Q_single``, the theory's F).

The same weights give self-normalised estimates of the posterior means of what the sampler reports
(gauge-fixed :math:`c_1, c_G` on held-out sequences), beside the trial's own means.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from emergence.numerics.order_parameters import cyclic_shift
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.free_energy import EVALUATION_SEQUENCES, training_data_seed
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.copy_task.training import measure

TRIALS = ("gauge", "product")


def logit_map(V: int, L: int) -> np.ndarray:
    r"""The logit :math:`z^T W z'` of every (query token, query position, key token, key position) as rows acting on ``W.ravel()``.

    :math:`z = e_a \oplus e_i`, so the logit is :math:`W_{tt}[a, b] + W_{tp}[a, j] + W_{pt}[i, b] + W_{pp}[i, j]`.
    Shape ``(V L V L, N^2)``.
    """
    N = V + L
    Z = np.zeros((V, L, N))
    Z[np.arange(V)[:, None], np.arange(L)[None, :], np.arange(V)[:, None]] = 1.0
    Z[np.arange(V)[:, None], np.arange(L)[None, :], V + np.arange(L)[None, :]] = 1.0
    Z = Z.reshape(V * L, N)
    return np.einsum("pa,qb->pqab", Z, Z).reshape((V * L) ** 2, N * N)


def mean_weights(V: int, L: int, c1: float, cG: float, exponent: float) -> np.ndarray:
    r"""The minimum-norm :math:`\bar W` whose attention :math:`z_i^T\bar Wz_j/L^k` is :math:`c_1/L + c_GS_{ij}` for every token pair, ``(N, N)``."""
    pattern = (c1 / L + cG * cyclic_shift(L)) * float(L) ** exponent  # (L, L): logits by query, key position
    target = np.broadcast_to(pattern[None, :, None, :], (V, L, V, L)).reshape(-1)
    solution, *_ = np.linalg.lstsq(logit_map(V, L), target, rcond=None)
    return solution.reshape(V + L, V + L)


def flat_projector(V: int, L: int) -> np.ndarray:
    r"""Orthogonal projector ``(N^2, N^2)`` onto linear attention's flat directions :math:`f\,d^T`, :math:`d\,f^T`."""
    N = V + L
    f = np.concatenate([np.ones(V), -np.ones(L)])
    generators = [np.outer(f, e).ravel() for e in np.eye(N)] + [np.outer(e, f).ravel() for e in np.eye(N)]
    left, singular, _ = np.linalg.svd(np.array(generators).T, full_matrices=False)
    basis = left[:, : int((singular > 1e-10 * singular[0]).sum())]
    return basis @ basis.T


def trial_covariance(V: int, L: int, t_u: float, t_v: float, s: float, trial: str = "gauge") -> np.ndarray:
    r"""The trial's covariance of ``W.ravel()``, ``(N^2, N^2)`` (see the module docstring)."""
    if trial not in TRIALS:
        raise ValueError(f"unknown trial {trial!r}; choose one of {TRIALS}")
    N = V + L
    column_variance = np.concatenate([np.full(V, t_u * s), np.full(L, t_v * s)])
    product = np.diag(np.tile(column_variance, N))
    if trial == "product":
        return product
    flat = flat_projector(V, L)
    visible = np.eye(N * N) - flat
    return visible @ product @ visible + s * flat


def _log_gaussian(x: np.ndarray, mean: np.ndarray, cholesky: np.ndarray, log_det: float) -> np.ndarray:
    """Log density of ``x (n, d)`` under N(mean, C), C = cholesky cholesky^T with log det C = ``log_det``."""
    from scipy.linalg import solve_triangular

    z = solve_triangular(cholesky, (x - mean).T, lower=True)
    return -0.5 * (z**2).sum(0) - 0.5 * (x.shape[1] * math.log(2 * math.pi) + log_det)


def importance_sampled_linear_free_energy(L: int, V: int, P: int, point: dict[str, float], convention: CopyTaskConvention,
                                          draws: int = 4000, seed: int = 0, trial: str = "gauge", chunk: int = 200,
                                          bootstrap: int = 200) -> dict[str, Any]:
    r""":math:`F_Q`, :math:`F_{\rm IS}` (bootstrap error), the log-weight spread, the importance-sampling ESS and the
    posterior means of the gauge-fixed :math:`c_1, c_G` (importance-weighted and under the trial) at ``point``
    (``c1, cG, t_u, t_v``: the theory's minimum at ``P``, :meth:`~emergence.numerics.copy_head.linear_posterior.LinearPosteriorTheory.mean_field`)."""
    linear = convention.with_attention("linear")
    runs = min(chunk, draws)
    data_seed = training_data_seed(seed, P)
    batch = copy_task_batch([P] * runs, L, V, [data_seed] * runs, linear.shift, linear.targets, torch.float64, "cpu")
    evaluation = copy_task_batch([EVALUATION_SEQUENCES] * runs, L, V, [data_seed + 104_729] * runs, linear.shift,
                                 linear.targets, torch.float64, "cpu")
    model = CopyAttentionModel(runs, L, V, linear)
    s, N = model.logit_prior_variance, V + L
    mean = mean_weights(V, L, point["c1"], point["cG"], linear.attention_normalisation_exponent).ravel()
    covariance = trial_covariance(V, L, point["t_u"], point["t_v"], s, trial)
    cholesky = np.linalg.cholesky(covariance)
    log_det = 2 * float(np.log(np.diag(cholesky)).sum())
    symmetric = bool(np.abs(mean).max() > 0)
    rng = np.random.default_rng(seed)
    columns: dict[str, list[np.ndarray]] = {key: [] for key in ("log_weight", "log_weight_single", "c1", "cG")}
    for _ in range(-(-draws // runs)):
        theta = mean + rng.standard_normal((runs, N * N)) @ cholesky.T
        log_q = _log_gaussian(theta, mean, cholesky, log_det)
        if symmetric:
            theta *= rng.choice([-1.0, 1.0], size=(runs, 1))
            log_q_mirror = _log_gaussian(-theta, mean, cholesky, log_det)
            log_q_plus = _log_gaussian(theta, mean, cholesky, log_det)
            log_q_mixture = np.logaddexp(log_q_plus, log_q_mirror) - math.log(2)
        else:
            log_q_mixture = log_q
        with torch.no_grad():
            model.logit_weights.copy_(torch.as_tensor(theta.reshape(runs, N, N)))
            action = model.marginal_potential(batch).numpy()
            model.set_posterior_mean_readout(batch)
            observed = measure(model, evaluation)
        log_prior_normaliser = -0.5 * N * N * math.log(2 * math.pi * s)
        columns["log_weight"].append(-action + log_prior_normaliser - log_q_mixture)
        columns["log_weight_single"].append(-action + log_prior_normaliser - log_q)
        columns["c1"].append(observed["c1"].numpy())
        columns["cG"].append(observed["cG"].numpy())
    values = {key: np.concatenate(v)[:draws] for key, v in columns.items()}
    return _summary(values, draws, bootstrap, seed) | {"trial": trial, "draws": draws, "symmetrised": symmetric}


def _summary(values: dict[str, np.ndarray], draws: int, bootstrap: int, seed: int) -> dict[str, Any]:
    """F_Q, F_IS with its bootstrap error, ESS and the weighted and trial means of c1, cG from per-draw ``values``."""
    log_weight = values["log_weight"]
    F_IS = float(np.log(draws) - np.logaddexp.reduce(log_weight))
    resamples = np.random.default_rng(seed + 1).integers(0, draws, (bootstrap, draws))
    boot_F = [np.log(draws) - np.logaddexp.reduce(log_weight[index]) for index in resamples]
    normalised = np.exp(log_weight - log_weight.max())
    normalised /= normalised.sum()
    out: dict[str, Any] = {"F_Q": float(-log_weight.mean()), "F_Q_single": float(-values["log_weight_single"].mean()),
                           "F_IS": F_IS, "F_IS_error": float(np.std(boot_F)), "log_weight_sd": float(log_weight.std()),
                           "ess": float(1.0 / (normalised**2).sum())}
    out["gap"] = out["F_Q"] - F_IS
    for key in ("c1", "cG"):
        x = values[key]
        boot = [float(np.sum(normalised[index] * x[index]) / np.sum(normalised[index])) for index in resamples]
        out[f"{key}_weighted"], out[f"{key}_weighted_error"] = float(np.sum(normalised * x)), float(np.std(boot))
        out[f"{key}_trial"], out[f"{key}_trial_sd"] = float(x.mean()), float(x.std())
    return out


__all__ = ["TRIALS", "flat_projector", "importance_sampled_linear_free_energy", "logit_map", "mean_weights",
           "trial_covariance"]
