r"""Which assumption of the posterior theory breaks: its data term and its variational bound, on its own trial distribution.

The posterior theory (:mod:`emergence.numerics.copy_head.posterior`) is a variational
(Gibbs–Bogoliubov) free energy over a Gaussian trial :math:`Q_{g, t_u, t_v}` for model T's
:math:`W_{QK}`: mean :math:`g S` in the position block, independent entries of variance
:math:`t_u s` (key-token columns) and :math:`t_v s` (key-position columns),

.. math::
    F(g, t_u, t_v; P) = \mathrm{KL}(Q \,\|\, \text{prior}) + S_{\rm data}\big(q_{\rm eff}(\mathbb E_Q Q_\Phi),
    m_{\rm eff}(\mathbb E_Q M_\Phi); P\big),

with two approximations beyond the variational bound itself: the data term is the population
action (the data statistics self-average; the measurement's ``data_multiple`` probe tests that), and
it is evaluated at the trial's *averaged* row statistics instead of averaged over the trial.
:func:`trial_data_action` measures the second one exactly: it draws :math:`W_{QK} \sim Q` and
averages the model's own readout-marginal data action (``marginal_potential`` minus the logit
prior) on real sequences,

.. math::
    \mathbb E_Q\big[S_r(W_{QK}) - \|W_{QK}\|^2/2s\big] \quad\text{against}\quad
    S_{\rm data}(q_{\rm eff}, m_{\rm eff}; P).

Replacing the theory's data term by this average along the profile gives the free energy of the
same trial without the second approximation, hence its :math:`\Delta F`
(:func:`~emergence.validation.samplers.umbrella.delta_F_of_profile`).

The bound itself: :math:`F_{\rm true} = -\ln Z \le F_Q = \mathbb E_Q[-\ln w]` with the importance
weight :math:`w = \text{prior}(\theta)\,e^{-S_{\rm data}(\theta)}/Q(\theta)`, and the gap is
:math:`\mathrm{KL}(Q\,\|\,p)`.  :func:`importance_sampled_free_energy` estimates both sides from
the same draws of the theory's trial at one of its modes: :math:`F_Q` and
:math:`F_{\rm IS} = -\ln\frac1N\sum_n w_n` (which tends to the free energy of the region the trial
covers; for finite :math:`N` it is biased upward, so a gap it shows is a lower bound).  Where the
gap differs between the uniform and the copy mode, the Gaussian product family, not the data term,
is what misplaces the transition.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from emergence.numerics.copy_head.block_trial import BlockTrial
from emergence.numerics.copy_head.posterior import DEFAULT_TRIAL
from emergence.numerics.copy_head.row_trial import sample_row_trial
from emergence.numerics.order_parameters import cyclic_shift
from emergence.validation.copy_task.config import PROFILE_POINTS, PROFILE_RANGE, CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.free_energy import training_data_seed
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.samplers.umbrella import delta_F_of_profile


def trial_moments(V: int, L: int, g: float, t_u: float, t_v: float, s: float) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Mean and entrywise variance of :math:`Q_{g, t_u, t_v}`, each ``(V + L, V + L)``: the gauge-centred copy
    pattern :math:`g(S - J/L)` in the position block (the theory's prior cost :math:`(L-1)g^2/2s`; a constant per
    row is a softmax gauge), :math:`t_u s` in the key-token columns and :math:`t_v s` in the key-position columns."""
    variance = torch.empty(V + L, V + L, dtype=torch.float64)
    variance[:, :V], variance[:, V:] = t_u * s, t_v * s
    mean = torch.zeros(V + L, V + L, dtype=torch.float64)
    mean[V:, V:] = g * (torch.as_tensor(cyclic_shift(L), dtype=torch.float64) - 1.0 / L)
    return mean, variance


def trial_weights(draws: int, V: int, L: int, g: float, t_u: float, t_v: float, s: float,
                  generator: torch.Generator) -> torch.Tensor:
    r"""``draws`` samples of :math:`W_{QK} \sim Q_{g, t_u, t_v}` (:func:`trial_moments`), shape ``(draws, V + L, V + L)``."""
    mean, variance = trial_moments(V, L, g, t_u, t_v, s)
    return mean + torch.randn(draws, V + L, V + L, generator=generator, dtype=torch.float64) * variance.sqrt()


def trial_data_action(L: int, V: int, P: int, profile: dict[str, list[float]], convention: CopyTaskConvention,
                      draws: int = 300, data_multiple: int = 1, seed: int = 0) -> dict[str, Any]:
    r"""The model's data action averaged over the theory's trial at each point of ``profile``.

    ``profile``: :meth:`~emergence.numerics.copy_head.posterior.PosteriorTheory.profile` (its ``g``,
    ``t_u``, ``t_v`` per :math:`a_G`).  The data are :math:`kP` sequences at :math:`\beta_0/k`
    (``data_multiple`` :math:`k`; see :mod:`~emergence.validation.copy_task.free_energy`).  Returns
    ``mean`` and ``error`` (standard error over the draws) per profile point, ``(len(profile["aG"]),)`` each.
    """
    tempered = replace(convention.with_attention("softmax"), beta0=convention.beta0 / data_multiple)
    batch = copy_task_batch([data_multiple * P] * draws, L, V, [training_data_seed(seed, P)] * draws, tempered.shift,
                            tempered.targets, torch.float64, "cpu")
    model = CopyAttentionModel(draws, L, V, tempered)
    generator = torch.Generator().manual_seed(seed)
    mean, error = [], []
    for g, t_u, t_v in zip(profile["g"], profile["t_u"], profile["t_v"]):
        with torch.no_grad():
            model.logit_weights.copy_(trial_weights(draws, V, L, g, t_u, t_v, model.logit_prior_variance, generator))
            action = (model.marginal_potential(batch) - model.logit_prior_energy()).numpy()
        mean.append(float(action.mean()))
        error.append(float(action.std(ddof=1) / np.sqrt(draws)))
    return {"mean": mean, "error": error}


def theory_data_action(theory, P: float, profile: dict[str, list[float]]) -> list[float]:
    r"""The theory's own data term :math:`S_{\rm data}(q_{\rm eff}, m_{\rm eff}; P)` at each profile point."""
    from emergence.numerics.copy_head.posterior import data_action, effective_invariants

    values = []
    for g, t_u, t_v in zip(profile["g"], profile["t_u"], profile["t_v"]):
        averages = theory.row_averages(g, t_u, t_v)
        q_eff, m_eff = effective_invariants(averages["square"], averages["target"], theory.L, theory.V)
        values.append(float(data_action(q_eff, m_eff, theory.L, theory.L, P, theory.V, theory.lam, theory.beta, theory.L)))
    return values


def data_term_check(L: int, V: int, P: int, convention: CopyTaskConvention, divide: float = 0.3,
                    theory_draws: int = 4000, draws: int = 300, data_multiple: int = 1, seed: int = 0) -> dict[str, Any]:
    r"""The gauge-correct theory's profile at ``P`` with its data term and with the exact trial average in its place.

    Returns the profile grid, ``F_theory``, ``data_theory``, ``data_trial`` (mean, error) and the two
    :math:`\Delta F` by the measurement's estimator: where they agree, evaluating the data term at the
    averaged row statistics is not what breaks.
    """
    from emergence.numerics.copy_head.posterior import PosteriorTheory

    theory = PosteriorTheory(L, V, convention.with_attention("softmax"), draws=theory_draws, trial="gauge")
    grid = np.linspace(*PROFILE_RANGE, PROFILE_POINTS)
    profile = theory.profile(P, grid)
    data_theory = np.asarray(theory_data_action(theory, P, profile))
    trial = trial_data_action(L, V, P, profile, convention, draws, data_multiple, seed)
    F_theory = np.asarray(profile["F"])
    F_trial = F_theory - data_theory + np.asarray(trial["mean"])
    return {"L": L, "V": V, "P": P, "aG": grid.tolist(), "F_theory": F_theory.tolist(),
            "data_theory": data_theory.tolist(), "data_trial": trial,
            "delta_F_theory": delta_F_of_profile(grid, F_theory, divide),
            "delta_F_trial_average": delta_F_of_profile(grid, F_trial, divide)}


def flat_log_ratio(standard: torch.Tensor, V: int, t_u: float, t_v: float) -> torch.Tensor:
    r""":math:`\ln[\text{prior}_{\mathcal K}(\theta_{\mathcal K}) / Q_{\mathcal K}(\theta_{\mathcal K})]` of product-trial
    draws :math:`\theta = \mu + \sqrt{\text{variance}}\,\text{standard}` (:func:`trial_moments`) along the flat directions.

    ``standard (n, V + L, V + L)``.  The trial's mean has no flat component and its variance is :math:`t s` on the
    flat directions of each column type (:func:`~emergence.numerics.copy_head.logit_gauge.flat_direction_basis`),
    so :math:`\theta_{\mathcal K} = \sqrt{ts}\,\xi_{\mathcal K}` with :math:`\xi_{\mathcal K}` standard, and the
    ratio is :math:`\sum_{\rm type}[-(t - 1)|\xi_{\mathcal K}|^2/2 + (n_{\rm type}/2)\ln t]`.  Returns ``(n,)``.
    """
    from emergence.numerics.copy_head.logit_gauge import flat_direction_basis

    L = standard.shape[-1] - V
    total = torch.zeros(standard.shape[0], dtype=torch.float64)
    for kind, basis in flat_direction_basis(V, L).items():
        t = t_u if kind == "key_token" else t_v
        xi = standard.flatten(1) @ torch.as_tensor(basis)
        total += -(t - 1) * (xi**2).sum(-1) / 2 + basis.shape[1] / 2 * math.log(t)
    return total


def trial_potential(L: int, V: int, P: int, convention: CopyTaskConvention, seed: int = 0, chunk: int = 250):
    r"""The model's potential :math:`U(\theta) = S_r(\theta) + \frac{N^2}2\ln 2\pi s` on the ``P`` training sequences of
    the measurement's data seed, as a function of draws ``theta (n, N, N)`` (array or tensor) returning ``(n,)``.

    :math:`e^{-U}` is the unnormalised posterior (prior density times :math:`e^{-S_{\rm data}}`, every constant of the
    model's action included), so :math:`\ln w = -U - \ln Q` and :math:`F_Q = \mathbb E_Q[U] - H[Q]`.  Evaluated
    ``chunk`` draws at a time (the last chunk padded).
    """
    softmax = convention.with_attention("softmax")
    batch = copy_task_batch([P] * chunk, L, V, [training_data_seed(seed, P)] * chunk, softmax.shift, softmax.targets,
                            torch.float64, "cpu")
    model = CopyAttentionModel(chunk, L, V, softmax)
    normaliser = 0.5 * (V + L) ** 2 * math.log(2 * math.pi * model.logit_prior_variance)

    def potential(theta) -> np.ndarray:
        theta = torch.as_tensor(theta, dtype=torch.float64)
        out = []
        for start in range(0, len(theta), chunk):
            part = theta[start:start + chunk]
            padded = torch.cat([part, part.new_zeros((chunk - len(part), *part.shape[1:]))])
            with torch.no_grad():
                model.logit_weights.copy_(padded)
                out.append(model.marginal_potential(batch)[:len(part)].numpy())
        return np.concatenate(out) + normaliser

    return potential


def held_out_r2(features: np.ndarray, log_weight: np.ndarray) -> float:
    r"""How much of the log importance weights a feature group explains: :math:`R^2` on the last quarter of
    ``log_weight (N,)`` from a least-squares fit (with intercept) on ``features (N, k)`` over the first three quarters.

    Near 0 for a group along which the trial already matches the posterior; negative where the fit does not carry
    over to unseen draws (too many features for the draws).

    >>> x = np.linspace(0.0, 1.0, 400)
    >>> round(held_out_r2(x[:, None], 2 * x), 12)
    1.0
    >>> held_out_r2(x[:, None], np.sin(97 * x)) < 0.1
    True
    """
    design = np.column_stack([np.ones(len(log_weight)), features])
    cut = 3 * len(log_weight) // 4
    coefficients, *_ = np.linalg.lstsq(design[:cut], log_weight[:cut], rcond=None)
    residual = log_weight[cut:] - design[cut:] @ coefficients
    return float(1 - residual.var() / log_weight[cut:].var())


def importance_summary(log_weight: np.ndarray, seed: int = 0, bootstrap: int = 200) -> dict[str, float]:
    r""":math:`F_Q = \mathbb E_Q[-\ln w]`, :math:`F_{\rm IS} = -\ln\frac1N\sum_nw_n`, bootstrap errors over draws of
    :math:`F_{\rm IS}` and of the gap :math:`F_Q - F_{\rm IS}`, and the log-weight spread, from ``log_weight (N,)``."""
    draws = len(log_weight)
    resamples = np.random.default_rng(seed).integers(0, draws, (bootstrap, draws))
    boot = np.array([np.log(draws) - np.logaddexp.reduce(log_weight[index]) for index in resamples])
    boot_gap = [-log_weight[index].mean() - value for index, value in zip(resamples, boot)]
    return {"F_trial": float(-log_weight.mean()), "F_IS": float(np.log(draws) - np.logaddexp.reduce(log_weight)),
            "F_IS_error": float(np.std(boot)), "gap_error": float(np.std(boot_gap)), "log_weight_sd": float(log_weight.std())}


def importance_sampled_free_energy(L: int, V: int, P: int, mode, convention: CopyTaskConvention, draws: int = 2000,
                                   seed: int = 0, chunk: int = 250, bootstrap: int = 200,
                                   trial: str = DEFAULT_TRIAL) -> dict[str, float]:
    r"""The trial's variational free energy :math:`F_Q` and the importance-sampled :math:`F_{\rm IS}` at one theory mode.

    ``mode``: a :class:`~emergence.numerics.copy_head.posterior.PosteriorMode` (its ``g, t_u, t_v``).
    The trial is :func:`trial_moments` (``trial="product"``), the gauge-correct trial (``"gauge"``: the same law on
    the directions the data sees and the prior on the flat ones), the row trial
    (:func:`~emergence.numerics.copy_head.row_trial.sample_row_trial`, its own draws and log density), or, by default
    (:data:`~emergence.numerics.copy_head.posterior.DEFAULT_TRIAL`), the block trial at a
    :class:`~emergence.numerics.copy_head.block_posterior.BlockMode`'s ratios
    (:meth:`~emergence.numerics.copy_head.block_trial.BlockTrial.sample`, its own draws and exact log density).  The
    gauge-correct trial's weight is the product trial's divided by
    :func:`flat_log_ratio`'s exponential, on the same draws (the data term does not see the flat part).  Both free energies include every constant of the model's action on the
    ``P`` training sequences of the measurement's data seed (:func:`trial_potential`), so differences between modes are
    comparable with the sampled :math:`\Delta F` (the same data as the umbrella point of ``seed``).  Returns
    :func:`importance_summary`: ``F_trial``, ``F_IS``, ``F_IS_error`` and ``gap_error`` (of :math:`F_{\rm trial} - F_{\rm IS}`;
    bootstrap over draws) and ``log_weight_sd`` (its spread: about :math:`\sqrt{2\,\mathrm{KL}}` when the weights are log-normal).
    """
    runs = min(chunk, draws)
    potential = trial_potential(L, V, P, convention, seed, runs)
    s = convention.logit_prior_variance(L)
    mean, variance = trial_moments(V, L, mode.g, mode.t_u, mode.t_v, s)
    trial_normaliser = -0.5 * torch.log(2 * math.pi * variance).sum()
    generator = torch.Generator().manual_seed(seed)
    row_generator = np.random.default_rng(seed)
    log_weights = []
    for _ in range(-(-draws // runs)):
        if trial in ("row", "block"):
            theta, log_q = (sample_row_trial(mode, L, V, s, runs, row_generator) if trial == "row" else
                            BlockTrial(L, V, s, mode.g, 0.0, mode.ratios).sample(
                                row_generator.standard_normal((runs, (V + L) ** 2))))
            theta, log_trial = torch.as_tensor(theta), torch.as_tensor(log_q)
        else:
            standard = torch.randn(runs, V + L, V + L, generator=generator, dtype=torch.float64)
            theta = mean + standard * variance.sqrt()
            log_trial = -0.5 * (standard**2).sum((-2, -1)) + trial_normaliser
            if trial == "gauge":
                log_trial = log_trial + flat_log_ratio(standard, V, mode.t_u, mode.t_v)
        log_weights.append(-potential(theta) - log_trial.numpy())
    return importance_summary(np.concatenate(log_weights)[:draws], seed, bootstrap)


def mode_free_energies(L: int, V: int, P: int, modes: dict, convention: CopyTaskConvention, draws: int = 2000,
                       seed: int = 0, trial: str = DEFAULT_TRIAL) -> dict[str, Any]:
    r"""At each of the theory's modes (``{"uniform": PosteriorMode, "copy": PosteriorMode}``, found with ``trial``): its
    :math:`F`, :math:`a_G` and :func:`importance_sampled_free_energy`; and the copy-minus-uniform differences of the three."""
    result: dict[str, Any] = {"draws": draws, "trial": trial}
    for name, mode in modes.items():
        result[name] = {"aG": mode.aG, "F_theory": mode.free_energy,
                        **importance_sampled_free_energy(L, V, P, mode, convention, draws, seed, trial=trial)}
    result["delta"] = {key: result["copy"][key] - result["uniform"][key] for key in ("F_theory", "F_trial", "F_IS")}
    result["delta_error"] = float(np.hypot(result["copy"]["F_IS_error"], result["uniform"]["F_IS_error"]))
    return result
