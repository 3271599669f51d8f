r"""The copy-task posterior's free energy along the copy order parameter: umbrella windows sampled by HMC.

The target is the readout-marginal posterior of model T's attention weights,
:math:`p(W_{QK}\mid D) \propto e^{-S_r(W_{QK})}` (:meth:`~emergence.validation.copy_task.models.CopyAttentionModel.marginal_potential`;
the readout is integrated out exactly).  The collective variable is :math:`a_G`, the attention on
the previous token averaged over the ``P`` training sequences and their positions,

.. math::
    a_G(W_{QK}) = \frac{1}{PL}\sum_{\mu}\sum_{i} A^\mu_{i,i-1},

differentiable in :math:`W_{QK}` (:meth:`~emergence.validation.copy_task.models.CopyAttentionModel.previous_token_attention`).  One sweep point (one
:math:`P`, :func:`run_free_energy_point`) runs ``chains`` HMC chains in each of ``K`` harmonic
windows :math:`\tfrac{\kappa_k}{2}(a_G - a_k)^2` (one stiffness for every window, or one per window: stiffer
windows where the profile bends down faster than a soft bias can hold), all ``K * chains`` of them as one batched model on
the same training set, and combines the windows with MBAR
(:func:`~emergence.validation.samplers.umbrella.free_energy_profile`).  Neighbouring windows swap
configurations every ``exchange_every`` trajectories
(:class:`~emergence.validation.samplers.window_exchange.WindowExchange`), and where a neighbour overlap
is below ``min_overlap`` after a pass, windows are added half-way, where a window's chains split it is made
stiffer with windows beside it, and the pass is rerun
(:func:`~emergence.validation.samplers.window_placement.place_windows`).  With one window and
:math:`\kappa = 0` it is plain (unbiased) HMC on the posterior.

Reported per point: the profile :math:`F(a_G)`, the copy-basin mass above ``divide`` and
:math:`\Delta F = F_{\rm copy} - F_{\rm uniform}`, the unbiased posterior mean of :math:`a_G`, each
window's rank-normalised :math:`\hat R` and bulk ESS (ArviZ), MBAR's smallest neighbour overlap,
the HMC acceptance, and the cost: seconds per batched gradient and its FLOPs
(``torch.utils.flop_counter``, or the compiled loops' per-query model where softmax model T uses them;
``gradient`` says which path ran), from which the command reports the fraction of the machine's
measured FLOP/s.

**The self-averaging probe** (``data_multiple`` :math:`k`).  The posterior theory replaces the data
statistics :math:`C, B, D` of the readout marginal by :math:`P` times their expectations (the data
term self-averages).  With :math:`k > 1` the point samples the posterior whose data term is that of
:math:`kP` sequences, each weighted :math:`1/k`, so its disorder shrinks as :math:`1/k` at fixed
:math:`P`.  Weighting every sequence by :math:`w` is exactly a likelihood temperature:
:math:`\beta(wD) - \beta\varepsilon w^2 \operatorname{tr}B^\top(I + \varepsilon wC)^{-1}B
= \beta'[D - \varepsilon'\operatorname{tr}B^\top(I + \varepsilon'C)^{-1}B]` and
:math:`\ln\det(I + \varepsilon wC) = \ln\det(I + \varepsilon'C)` with :math:`\beta' = w\beta`,
:math:`\varepsilon' = \beta'\lambda`, so the probe runs the ordinary model at :math:`\beta_0/k` on
:math:`kP` sequences.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from emergence.numerics.order_parameters import cyclic_shift
from emergence.validation.copy_task.config import FREE_ENERGY_DEFAULTS, CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.copy_task.training import measure_draw
from emergence.validation.samplers.diagnostics import mean_and_standard_error, rhat_and_bulk_ess
from emergence.validation.samplers.adaptation import StoppingRule, adapt_and_sample
from emergence.validation.samplers.hmc import HMC, HMCSettings
from emergence.validation.samplers.umbrella import free_energy_profile
from emergence.validation.samplers.window_exchange import WindowExchange, WindowExchangeSettings
from emergence.validation.samplers.window_placement import PlacementSettings, place_windows

EVALUATION_SEQUENCES = 128
"""Fresh sequences per run on which linear attention's order parameters are measured."""
RHAT_LIMIT = 1.01
ESS_MINIMUM = 400
OVERLAP_MINIMUM = 0.03
"""Diagnostics a point must meet to count: rank R-hat, bulk ESS per window, MBAR neighbour overlap."""
SPLIT_RHAT = 1.1
SPLIT_MIN_DRAWS = 100
STIFFEN = 4.0
"""A window whose chains split: rank R-hat above 1.1 after all its draws, at least 100 per chain (the windows on the
barrier that split read 1.13 at L = 24 and 1.25 at L = 16 after 800 and 400 draws; the noise of a few hundred draws
stays below 1.05, while chains of a few dozen draws, as in quick checks, read above 1.1 without splitting).  The
placement makes it ``STIFFEN`` times stiffer, with windows half-way to its neighbours
(:mod:`~emergence.validation.samplers.window_placement`)."""


def training_data_seed(seed: int, P: int) -> int:
    """The data seed of the ``P`` training sequences of a point of ``seed`` (shared by its windows and its diagnoses)."""
    return int(seed) * 1_000_003 + 7919 * int(P)


def umbrella_point_config(L: int, V: int, P: int, convention: CopyTaskConvention, seed: int = 0,
                          attention: str = "softmax", **settings) -> dict[str, Any]:
    """The JSON-able configuration of one point (its hash keys the result file); linear attention samples without windows."""
    config = {"experiment": "posterior-free-energy", "attention": attention, "L": int(L), "V": int(V), "P": int(P),
              "seed": int(seed), "convention": convention.with_attention(attention).as_dict()}
    config.update({key: settings.get(key, FREE_ENERGY_DEFAULTS[key]) for key in FREE_ENERGY_DEFAULTS})
    if attention == "linear":
        config.update(centres=[0.0], kappa=0.0)
    config["centres"] = [float(c) for c in config["centres"]]
    if np.ndim(config["kappa"]) == 1:  # one stiffness per window, kept with its centre in increasing order
        pairs = sorted(zip(config["centres"], (float(k) for k in config["kappa"])))
        config["centres"], config["kappa"] = [c for c, _ in pairs], [k for _, k in pairs]
    return config


def start_windows(model: CopyAttentionModel, centres: torch.Tensor, seed: int) -> None:
    r"""Each run at a prior draw of :math:`W_{QK}` plus :math:`g S` in the position block, with :math:`g` set for its window's centre."""
    L, V = model.L, model.V
    generator = torch.Generator().manual_seed(int(seed))
    with torch.no_grad():
        noise = math.sqrt(model.logit_prior_variance) * torch.randn(model.logit_weights.shape, generator=generator,
                                                                    dtype=torch.float64)  # one draw for every dtype
        model.logit_weights.copy_(noise.to(model.logit_weights.device, model.logit_weights.dtype))
        a = centres.clamp(1e-3, 1 - 1e-3)
        g = torch.log(a * (L - 1) / (1 - a))
        shift = torch.as_tensor(cyclic_shift(L), dtype=noise.dtype)  # S[i, i-1] = 1
        model.logit_weights[:, V:, V:] += (g.to(model.logit_weights.device)[:, None, None]
                                          * shift.to(model.logit_weights.device))


def bulk_variance_ratios(weights: torch.Tensor, V: int, logit_prior_variance: float) -> dict[str, torch.Tensor]:
    r"""The sampled bulk of model T's :math:`W_{QK}` as the posterior theory's variance ratios :math:`t_u, t_v`, each ``(R,)``.

    The theory gives the entries of the key-token blocks :math:`W_{tt}, W_{pt}` variance :math:`t_u s`
    and those of the key-position blocks :math:`W_{tp}, W_{pp}` variance :math:`t_v s` (around the
    copy pattern :math:`g S` in :math:`W_{pp}`).  A constant added to a row (one query token or
    position, every key) is a softmax gauge the data never see, so rows are centred first:

    .. math::
        \hat t_u = \frac{\sum (W - \bar W_{\rm row})^2}{s\,(V + L)(V - 1)}, \qquad
        \hat t_v = \frac{\sum (W - \bar W_{\rm row} - \hat g\,(S - J/L))^2}{s\,[(V + L)(L - 1) - 1]},

    with :math:`\hat g` the least-squares copy logit of the centred :math:`W_{pp}` (one degree of freedom).
    The theory's symmetric ansatz gives the :math:`L` copy-diagonal entries :math:`d_i = \tilde W_{pp}[i, i-1]`
    (row-centred) the same variance as the rest of their block; their own spread about their mean,

    .. math::
        \hat t_{\rm copy} = \frac{\sum_i (d_i - \bar d)^2}{s\,(L - 1)(1 - 1/L)},

    tests that (each :math:`d_i` has variance :math:`t s (1 - 1/L)` when its entry has variance :math:`t s`).
    ``weights``: ``(R, V + L, V + L)``.
    """
    L = weights.shape[-1] - V
    token_keys = weights[:, :, :V]
    token_keys = token_keys - token_keys.mean(-1, keepdim=True)
    position_keys = weights[:, :, V:]
    position_keys = position_keys - position_keys.mean(-1, keepdim=True)
    pattern = torch.as_tensor(cyclic_shift(L), dtype=weights.dtype, device=weights.device) - 1.0 / L
    copy_logit = (position_keys[:, V:, :] * pattern).sum((-2, -1)) / (pattern * pattern).sum()
    residual = position_keys.clone()
    residual[:, V:, :] -= copy_logit[:, None, None] * pattern
    rows = torch.arange(L, device=weights.device)
    diagonal = position_keys[:, V + rows, (rows - 1) % L]  # (R, L): the row-centred W_pp[i, i-1]
    diagonal_spread = ((diagonal - diagonal.mean(-1, keepdim=True)) ** 2).sum(-1)
    return {"t_u": (token_keys**2).sum((-2, -1)) / (logit_prior_variance * (V + L) * (V - 1)),
            "t_v": (residual**2).sum((-2, -1)) / (logit_prior_variance * ((V + L) * (L - 1) - 1)),
            "t_copy": diagonal_spread / (logit_prior_variance * (L - 1) * (1 - 1 / L)),
            "g": copy_logit}


def gradient_cost(potential, parameter: torch.Tensor, flops: float | None = None, repeats: int = 5) -> dict[str, float]:
    """Seconds and FLOPs of one batched gradient of ``potential()``: ``flops`` where the caller counts them (the
    compiled loops' model), else ``torch.utils.flop_counter``'s count."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        torch.autograd.grad(potential().sum(), parameter)
    started = time.perf_counter()
    for _ in range(repeats):
        torch.autograd.grad(potential().sum(), parameter)
    return {"seconds_per_gradient": (time.perf_counter() - started) / repeats,
            "flops_per_gradient": float(counter.get_total_flops()) if flops is None else flops}


DRAW_BLOCK = 100
"""Draws per chain between two looks of :func:`diagnostics_stopping_rule`."""


def windows_converged(aG: torch.Tensor, windows: int) -> bool:
    """Whether every window's draws ``aG (windows * chains, n)`` meet :data:`RHAT_LIMIT` and :data:`ESS_MINIMUM`."""
    values = aG.cpu().numpy().reshape(windows, -1, aG.shape[-1])
    for window in values:
        rhat, ess = rhat_and_bulk_ess(window)
        if not (rhat <= RHAT_LIMIT and ess >= ESS_MINIMUM):
            return False
    return True


def diagnostics_stopping_rule(config: dict[str, Any], windows: int) -> StoppingRule | None:
    r"""Softmax umbrella points: draws sized by the diagnostics.  After ``first_draws`` draws per chain, and then
    every :data:`DRAW_BLOCK`, the windows' :math:`a_G` chains are checked; the point stops once every window meets
    :math:`\hat R \le` :data:`RHAT_LIMIT` and bulk ESS :math:`\ge` :data:`ESS_MINIMUM`, and draws on to ``draws``
    otherwise.  The point's diagnostics are computed again on its final chains.  ``None`` (a fixed ``draws``) where
    ``first_draws`` is 0 or not below ``draws``, and for linear attention."""
    first = int(config.get("first_draws", 0))
    if config["attention"] != "softmax" or not 0 < first < int(config["draws"]):
        return None
    return StoppingRule(first, DRAW_BLOCK, lambda recorded: windows_converged(recorded["aG"], windows))


def window_stiffness(kappa, windows: int) -> np.ndarray:
    r"""The stiffness :math:`\kappa_k` of each of ``windows`` windows ``(windows,)``: ``kappa`` a float (every window)
    or one value per window.

    >>> window_stiffness(800.0, 3).tolist(), window_stiffness([800, 3200], 2).tolist()
    ([800.0, 800.0, 800.0], [800.0, 3200.0])
    >>> window_stiffness([800.0, 3200.0], 3)
    Traceback (most recent call last):
    ...
    ValueError: one stiffness per window: 2 values for 3 windows
    """
    stiffness = np.asarray(kappa, dtype=float)
    if stiffness.ndim == 1 and len(stiffness) != windows:
        raise ValueError(f"one stiffness per window: {len(stiffness)} values for {windows} windows")
    return np.broadcast_to(stiffness, (windows,)).copy()


def sample_windows(config: dict[str, Any], centres, kappa, device: str = "cpu") -> dict[str, Any]:
    """One HMC pass of every window ``centres (K,)`` of stiffness ``kappa`` (a float or ``(K,)``) and chain of
    ``config``, batched; with window exchange every ``exchange_every`` trajectories (0: none; softmax with two or
    more windows only).

    Returns ``samples`` (:func:`~emergence.validation.samplers.adaptation.adapt_and_sample`'s record), ``cost``, ``gradient``
    (the gradient path), ``gradients`` (the sampler's gradient evaluations: ``leapfrog`` per trajectory, plus one at
    the start and one after every exchange that moved a configuration) and ``swap_acceptance`` (per neighbour pair,
    ``None`` without exchange).
    """
    multiple = int(config["data_multiple"])
    convention = CopyTaskConvention(**config["convention"])
    convention = replace(convention, beta0=convention.beta0 / multiple)  # the probe's weight 1/k (module docstring)
    L, V, P, chains = config["L"], config["V"], config["P"], config["chains"]
    centres = np.asarray(centres, dtype=float)
    stiffness = window_stiffness(kappa, len(centres))
    biased = bool(np.any(stiffness > 0))
    runs = len(centres) * chains
    data_seed = training_data_seed(config["seed"], P)
    batch = copy_task_batch([multiple * P] * runs, L, V, [data_seed] * runs, convention.shift, convention.targets,
                            torch.float64, device)
    model = CopyAttentionModel(runs, L, V, convention, device=device)
    run_centres = torch.tensor(np.repeat(centres, chains), dtype=torch.float64, device=device)
    run_stiffness = torch.tensor(np.repeat(stiffness, chains), dtype=torch.float64, device=device)
    exchange = None
    if config["attention"] == "softmax":
        start_windows(model, run_centres, config["seed"])

        @torch.no_grad()
        def record():
            bulk = bulk_variance_ratios(model.logit_weights.detach(), V, model.logit_prior_variance)
            return {"aG": model.previous_token_attention(batch).detach(), **bulk}

        if int(config["exchange_every"]) > 0 and len(centres) > 1 and biased:
            windows = WindowExchangeSettings(tuple(centres), tuple(stiffness), chains, every=int(config["exchange_every"]))
            exchange = WindowExchange([model.logit_weights], lambda: model.previous_token_attention(batch), windows,
                                      generator=torch.Generator().manual_seed(int(config["seed"]) + 29))
    else:
        model.initialise(["uniform" if r < runs // 2 else "copy" for r in range(runs)],
                         [config["seed"] * 1_000_003 + r for r in range(runs)])
        evaluation = copy_task_batch([EVALUATION_SEQUENCES] * runs, L, V, [data_seed + 104_729] * runs,
                                     convention.shift, convention.targets, torch.float64, device)

        def record():
            return measure_draw(model, batch, evaluation, "marginal", "HMC")

    def potential():
        if not biased:
            return model.marginal_potential(batch)
        action, aG = model.marginal_potential_and_previous_attention(batch)
        return action + 0.5 * run_stiffness * (aG - run_centres) ** 2

    # a first step of a tenth of the prior scale; dual averaging tunes it within the first iterations
    settings = HMCSettings(step_size=0.1 * math.sqrt(model.logit_prior_variance), leapfrog_steps=config["leapfrog"])
    sampler = HMC([model.logit_weights], potential, settings,
                  generator=torch.Generator().manual_seed(int(config["seed"]) + 17))
    cost = gradient_cost(potential, model.logit_weights, model.compiled_flops(batch))
    samples = adapt_and_sample(sampler, config["warmup"], config["draws"], record,
                               after_trajectory=exchange.after_trajectory if exchange else None,
                               stop=diagnostics_stopping_rule(config, len(centres)))
    return {"samples": samples, "cost": cost, "gradient": model.gradient_path,
            "gradients": sampler.gradient_evaluations,
            "swap_acceptance": None if exchange is None else exchange.acceptance().tolist()}


def _umbrella_profile(config: dict[str, Any], aG: np.ndarray, centres, kappa, ladders: bool):
    """MBAR's profile of the windows' draws ``aG (K, chains, draws)`` on the point's bins."""
    bins = np.linspace(0.0, 0.95, config["bins"] + 1)
    return free_energy_profile(aG, np.asarray(centres, dtype=float), kappa, divide=config["divide"], bins=bins,
                               seed=config["seed"], ladders=ladders)


def _placed_pass(config: dict[str, Any], device: str):
    """The softmax umbrella point's passes: windows added where a neighbour overlap is below ``min_overlap``, and
    windows whose chains split (:data:`SPLIT_RHAT`) made :data:`STIFFEN` times stiffer with windows beside them
    (:func:`~emergence.validation.samplers.window_placement.place_windows`, at most ``max_windows``; ``min_overlap``
    0: one pass); returns the last pass (its ``gradients`` those of every pass), its profile, and the placement
    record."""
    ladders = int(config["exchange_every"]) > 0
    gradients = []

    def run_pass(centres, stiffness):
        sampled = sample_windows(config, centres, stiffness, device)
        gradients.append(sampled["gradients"])
        aG = sampled["samples"]["aG"].cpu().numpy().reshape(len(centres), config["chains"], -1)
        profile = _umbrella_profile(config, aG, centres, stiffness, ladders)
        split = np.array([aG.shape[-1] >= SPLIT_MIN_DRAWS and rhat_and_bulk_ess(window)[0] > SPLIT_RHAT
                          for window in aG])
        return (sampled, profile), np.array([profile.overlap[k, k + 1] for k in range(len(centres) - 1)]), split

    minimum = float(config["min_overlap"])
    placement_settings = PlacementSettings(minimum, int(config["max_windows"]), STIFFEN if minimum > 0 else 1.0)
    stiffness = window_stiffness(config["kappa"], len(config["centres"]))
    (sampled, profile), placement = place_windows(run_pass, config["centres"], stiffness, placement_settings)
    return {**sampled, "gradients": sum(gradients)}, profile, placement


def run_free_energy_point(config: dict[str, Any], device: str = "cpu") -> dict[str, Any]:
    """HMC on one P (all windows and chains batched); return the summary of the module docstring.

    Softmax: ``chains`` per window started at the window's centre, :math:`a_G` over the training
    sequences recorded, windows exchanged (``exchange_every``) and added where neighbours do not overlap
    (``min_overlap``, ``max_windows``; ``placement`` in the summary).  Linear (no windows): half the chains
    start in the uniform pattern, half in the copy pattern, and each draw records the gauge-fixed
    :math:`c_1, c_G` (with :math:`a_G`, coverage and test loss) of
    :func:`~emergence.validation.copy_task.training.measure_draw`.
    """
    started = time.perf_counter()
    torch.set_num_threads(1)  # one core per point: small tensors, and 2-thread OpenMP under load was 7x slower
    kappa = config["kappa"]
    profile = None
    if np.any(window_stiffness(kappa, len(config["centres"])) > 0):
        sampled, profile, placement = _placed_pass(config, device)
        centres = np.asarray(placement["centres"], dtype=float)
    else:
        centres = np.asarray(config["centres"], dtype=float)
        sampled, placement = sample_windows(config, centres, kappa, device), None
    samples, chains = sampled["samples"], config["chains"]
    observed = {key: value.cpu().numpy().reshape(len(centres), chains, -1) for key, value in samples.items()
                if key in ("aG", "c1", "cG")}
    diagnostics = {key: [rhat_and_bulk_ess(values[k]) for k in range(len(centres))] for key, values in observed.items()}
    aG = observed["aG"]
    summary: dict[str, Any] = {
        "P": config["P"], "centres": centres.tolist(), "kappa": kappa,
        "window_mean": aG.mean(axis=(1, 2)).tolist(),
        **{f"window_{key}": samples[key].cpu().numpy().reshape(len(centres), -1).mean(1).tolist()
           for key in ("t_u", "t_v", "t_copy", "g") if key in samples},
        "window_rhat": [max(d[k][0] for d in diagnostics.values()) for k in range(len(centres))],
        "window_ess": [min(d[k][1] for d in diagnostics.values()) for k in range(len(centres))],
        "acceptance": float(samples["acceptance"].mean()),
        "swap_acceptance": sampled["swap_acceptance"], "placement": placement,
    }
    summary["rhat_max"] = float(max(summary["window_rhat"]))
    summary["ess_min"] = float(min(summary["window_ess"]))
    if profile is not None:
        summary.update({
            "bins": profile.bin_centres.tolist(), "F": _finite_or_none(profile.F), "F_error": _finite_or_none(profile.F_error),
            "mode_weight": profile.mass_high, "mode_weight_error": profile.mass_high_error,
            "delta_F": profile.delta_F, "delta_F_error": profile.delta_F_error,
            "overlap_min": profile.overlap_min, "aG_mean": profile.mean, "aG_sem": profile.mean_error,
            "window_overlap": [float(profile.overlap[k, k + 1]) for k in range(len(centres) - 1)],
            "basin_aG": {"uniform": profile.basin_minimum(0.0, config["divide"]),
                         "copy": profile.basin_minimum(config["divide"], 1.0)},
        })
    else:
        summary.update({"mode_weight": float((aG >= config["divide"]).mean()), "overlap_min": None})
        for key, values in observed.items():
            summary[f"{key}_mean"], summary[f"{key}_sem"] = mean_and_standard_error(values[0])
    summary["samples"] = int(aG.size)
    summary["draws"] = int(aG.shape[-1])
    summary["converged"] = bool(summary["rhat_max"] <= RHAT_LIMIT and summary["ess_min"] >= ESS_MINIMUM
                                and (summary["overlap_min"] is None or summary["overlap_min"] >= OVERLAP_MINIMUM))
    summary.update(sampled["cost"])
    summary["gradient"] = sampled["gradient"]
    summary["gradients"] = sampled["gradients"]
    summary["seconds"] = time.perf_counter() - started
    return summary


def _finite_or_none(values) -> list[float | None]:
    """JSON-safe list: non-finite entries (empty bins) as ``None``."""
    return [float(v) if np.isfinite(v) else None for v in values]
