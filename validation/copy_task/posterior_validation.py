r"""Posterior validation: replica-exchange sweep points, the posterior theory beside the saddle, and the verdict.

* :func:`posterior_point_config` / :func:`run_posterior_point`: one sweep point (one :math:`P`):
  ``chains`` ladders of ``replicas`` rungs on one training set (half the ladders start in the
  uniform pattern, half in the copy pattern), sampled by
  :func:`~emergence.validation.copy_task.tempering.sample_replica_exchange` on the
  readout-marginal action.  Reported: posterior means with the ESS-based standard error,
  :math:`\hat R` and bulk ESS (ArviZ) per observable, the swap acceptance per rung pair, and
  ``mode_weight``: the fraction of target-rung draws with :math:`a_G` above ``copy_threshold``.
* :func:`predicted_posterior`: the posterior-level theory
  (:class:`~emergence.numerics.copy_head.posterior.PosteriorTheory`, softmax model T only) on
  the grid: both modes, the mode weights :math:`w_{\rm copy} = 1/(1 + e^{F_{\rm copy} - F_{\rm uniform}})`,
  the mode-averaged posterior means and :math:`P^*` (equal free energy).
* :func:`predicted_linear_posterior` / :func:`linear_posterior_agreement`: linear model T
  (:class:`~emergence.numerics.copy_head.linear_posterior.LinearPosteriorTheory`): predicted
  posterior means, P1 (the gauge-fixed :math:`c_1` first reaching :data:`P1_LEVEL_FACTOR` times its
  prior value, :func:`threshold_crossing`) and crossover (steepest rise of :math:`c_G`) by the same
  estimators and the same level as the measurement, ``P1_ratio``, ``crossover_ratio``
  (within 2x) and R-hat everywhere for ``passes``.
* :func:`posterior_agreement`: ``rms_aG`` (measured against predicted posterior means over the
  grid), ``P_star_ratio`` (measured :math:`P^*`, where the copy-mode weight crosses 1/2 by
  log-linear interpolation, over the predicted one; ``None`` when a bracketing point has
  :math:`\hat R > 1.05`, the unconverged crossing is kept as ``P_star_unconverged``) and ``passes``: RMS :math:`\le 0.05`,
  ratio within :math:`[1/1.5, 1.5]`, and every point with :math:`\hat R \le 1.05`.  Missing
  data (no prediction, no crossing, a flagged point) fails.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from emergence.validation.copy_task.config import POSTERIOR_DEFAULTS, CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.copy_task.tempering import sample_replica_exchange
from emergence.validation.samplers.diagnostics import mean_and_standard_error, rhat_and_bulk_ess

RHAT_LIMIT = 1.05
RMS_LIMIT = 0.05
P_STAR_FACTOR = 1.5
EVALUATION_SEQUENCES = 128
OBSERVABLES = ("c1", "cG", "aG", "coverage", "test_loss")

DEFAULTS = POSTERIOR_DEFAULTS


def temperature_ladder(replicas: int, coldest: float, hottest: float) -> torch.Tensor:
    """Geometric ladder from ``coldest`` to ``hottest`` with the target T = 1 inserted (``replicas`` rungs in all)."""
    if replicas < 1 or not 0 < coldest <= 1 <= hottest:
        raise ValueError(f"need replicas >= 1 and coldest <= 1 <= hottest, got {replicas}, {coldest}, {hottest}")
    if replicas == 1:
        return torch.ones(1, dtype=torch.float64)
    others = np.geomspace(coldest, hottest, replicas - 1) if coldest < hottest else np.ones(0)
    ladder = sorted(set(np.round(np.concatenate([others[np.abs(np.log(others)) > 1e-9], [1.0]]), 12)))
    return torch.tensor(ladder, dtype=torch.float64)


def posterior_point_config(attention: str, L: int, V: int, P: int, convention: CopyTaskConvention,
                           seed: int = 0, **settings) -> dict[str, Any]:
    """The JSON-able configuration of one posterior sweep point (its hash keys the result file)."""
    config = {"experiment": "posterior", "attention": attention, "L": int(L), "V": int(V), "P": int(P),
              "seed": int(seed), "convention": convention.with_attention(attention).as_dict()}
    config.update({key: settings.get(key, DEFAULTS[key]) for key in DEFAULTS})
    return config


def run_posterior_point(config: dict[str, Any], device: str = "cpu") -> dict[str, Any]:
    """Sample one P with replica exchange; return the summary (see the module docstring)."""
    started = time.perf_counter()
    convention = CopyTaskConvention(**config["convention"])
    L, V, P = config["L"], config["V"], config["P"]
    ladder = temperature_ladder(config["replicas"], config["coldest"], config["hottest"])
    rungs, chains = ladder.numel(), config["chains"]
    runs = rungs * chains
    data_seed = config["seed"] * 1_000_003 + 7919 * P
    batch = copy_task_batch([P] * runs, L, V, [data_seed] * runs, convention.shift, convention.targets,
                            torch.float64, device)
    evaluation = copy_task_batch([EVALUATION_SEQUENCES] * runs, L, V, [data_seed + 104_729] * runs,
                                 convention.shift, convention.targets, torch.float64, device)
    model = CopyAttentionModel(runs, L, V, convention, device=device)
    starts = ["uniform" if chain < chains // 2 else "copy" for chain in range(chains) for _ in range(rungs)]
    model.initialise(starts, [config["seed"] * 1_000_003 + r for r in range(runs)])
    tempered = sample_replica_exchange(
        model, batch, evaluation, ladder, burn_in=config["burn_in"], draws=config["draws"], thin=config["thin"],
        step_fraction=config["step_fraction"], swap_every=config["swap_every"], seed=config["seed"],
        tempering=config["tempering"])
    summary: dict[str, Any] = {"P": P, "temperatures": ladder.tolist(), "chains": chains}
    rhats, esses = [], []
    for key in OBSERVABLES:
        values = getattr(tempered.cold, key).cpu().numpy()
        mean, error = mean_and_standard_error(values)
        rhat, ess = rhat_and_bulk_ess(values)
        summary[f"{key}_mean"], summary[f"{key}_sem"] = mean, error
        summary[f"{key}_rhat"], summary[f"{key}_ess"] = rhat, ess
        if key != "test_loss":
            rhats.append(rhat)
            esses.append(ess)
    aG = tempered.cold.aG.cpu().numpy()
    summary["mode_weight"] = float((aG > config["copy_threshold"]).mean())
    summary["rhat_max"] = float(max(rhats))
    summary["ess_min"] = float(min(esses))
    acceptance = tempered.swap_acceptance.tolist()
    summary["swap_acceptance"] = acceptance
    summary["swap_acceptance_min"] = float(min(acceptance)) if acceptance else None
    summary["flagged"] = bool(summary["rhat_max"] > RHAT_LIMIT)
    summary["seconds"] = time.perf_counter() - started
    return summary


def predicted_posterior(L: int, V: int, convention, P_grid, draws: int = 20_000) -> dict[str, Any]:
    """Posterior theory on ``P_grid`` (softmax model T, the default trial): modes, weights, mode-averaged means and ``P_star``."""
    from emergence.numerics.copy_head.posterior import DEFAULT_TRIAL, PosteriorTheory
    from emergence.numerics.copy_head.posterior_action import posterior_transition
    from emergence.validation.copy_task.posterior_free_energy import theory_label

    result = posterior_transition(PosteriorTheory(L, V, convention, draws=draws), P_grid)
    record: dict[str, Any] = {"label": theory_label(DEFAULT_TRIAL), "P": list(map(float, P_grid)),
                              "P_star": result["P_star"]}
    weights = []
    for modes in result["modes"]:
        difference = modes["copy"].free_energy - modes["uniform"].free_energy
        distinct = abs(modes["copy"].aG - modes["uniform"].aG) > 0.05
        weights.append(float(1 / (1 + np.exp(np.clip(difference, -700, 700)))) if distinct else 0.0)
    record["copy_mode_weight"] = weights
    for key in ("c1", "cG", "aG", "coverage", "copy_fraction", "loss"):
        record[key] = [w * getattr(m["copy"], key) + (1 - w) * getattr(m["uniform"], key)
                       for w, m in zip(weights, result["modes"])]
        for start in ("uniform", "copy"):
            record[f"{key}_{start}"] = [getattr(m[start], key) for m in result["modes"]]
    record["copy_threshold"] = _copy_threshold(record)
    return record


TRANSITION_FACTOR = 2.0
"""Linear attention: measured P1 and crossover must lie within this factor of the posterior theory's."""
FINE_POINTS = 40


P1_LEVEL_FACTOR = 2.0
r"""Linear P1: where the posterior mean of the gauge-fixed :math:`c_1` first reaches this multiple of its prior value.

The sign fixing :math:`m \ge 0` gives an unordered attention a floor :math:`c_1^{(0)} > 0` (the prior's, about
0.6 at L = 8 and 0.75 at L = 16, V = 4), so a fixed level above zero, as the MAP verdict's 0.05, would
sit under the floor.  A level tied to the prior does not move with the grid's end, as the half rise did
(:func:`half_rise_crossing`: :math:`c_1` still rises at the grid's end at L = 16)."""


def threshold_crossing(P, values, level: float) -> float | None:
    """Where ``values`` first rise through ``level`` (log-linear interpolation in P); ``None`` if they never do.

    >>> round(threshold_crossing([10, 20, 40], [0.5, 1.0, 3.0], 2.0), 6)
    28.284271
    """
    values = np.asarray(values, dtype=float)
    for i in range(len(values) - 1):
        if values[i] < level <= values[i + 1]:
            fraction = (level - values[i]) / (values[i + 1] - values[i])
            return float(np.exp(np.log(P[i]) + fraction * (np.log(P[i + 1]) - np.log(P[i]))))
    return None


def prior_c1_level(theory, draws: int = 1024, seed: int = 1) -> float:
    r""":data:`P1_LEVEL_FACTOR` times the prior's mean of the gauge-fixed :math:`c_1` (Monte Carlo over ``draws`` prior
    draws of :math:`W_{QK}`, the measurement's protocol: :func:`~emergence.numerics.copy_head.linear_posterior.observables_under_law`
    at :math:`c_1 = c_G = 0`, :math:`t_u = t_v = 1`)."""
    from emergence.numerics.copy_head.linear_posterior import LinearNoise, observables_under_law

    noise = LinearNoise.draw(theory.L, theory.V, draws, theory.noise.tokens.shape[0], seed)
    return P1_LEVEL_FACTOR * observables_under_law(0.0, 0.0, theory.sG, theory.sG, noise)["c1"][0]


def half_rise_crossing(P, values) -> float | None:
    r"""Where ``values`` first cross half-way between their smallest and largest value (log-linear interpolation).

    The older linear P1 estimator, kept for comparison: the level moves with the grid's end where
    :math:`c_1` still rises there; :func:`threshold_crossing` at :func:`prior_c1_level` replaced it.
    ``None`` without a rise.
    """
    values = np.asarray(values, dtype=float)
    low, high = float(values.min()), float(values.max())
    return threshold_crossing(P, values, 0.5 * (low + high)) if high > low else None


def steepest_rise(P, values) -> float | None:
    """Geometric midpoint of the interval where ``values`` rise fastest in ln P (``None`` if they never rise)."""
    values, log_P = np.asarray(values, dtype=float), np.log(np.asarray(P, dtype=float))
    slope = np.diff(values) / np.diff(log_P)
    i = int(np.argmax(slope))
    return float(np.exp(0.5 * (log_P[i] + log_P[i + 1]))) if slope[i] > 0 else None


def predicted_linear_posterior(L: int, V: int, convention, P_grid, draws: int = 256) -> dict[str, Any]:
    """Posterior theory of linear model T on ``P_grid``: predicted posterior means, and the transitions.

    ``P1`` and ``crossover`` apply :func:`threshold_crossing` (gauge-fixed c1 at ``P1_level``,
    :func:`prior_c1_level`) and :func:`steepest_rise` (c_G) to the predicted curves on a fine grid over the
    same range, the estimators (and the level) the measurement uses; ``P1_half_rise`` keeps the older
    estimator; ``P1_mean_field`` and ``copy_onset_mean_field`` are the
    mean-field transitions themselves.
    """
    from emergence.numerics.copy_head.linear_posterior import LinearPosteriorTheory

    theory = LinearPosteriorTheory(L, V, convention, draws=draws)
    record: dict[str, Any] = {"label": "posterior (mean-field bulk; reconstructed theory)",
                              "P": list(map(float, P_grid))}
    curves = theory.curves(P_grid)
    for key in ("c1", "cG", "aG", "coverage", "copy_fraction", "loss", "c1_mean_field", "cG_mean_field", "t_u", "t_v"):
        record[key] = curves[key]
    fine = np.geomspace(float(min(P_grid)), float(max(P_grid)), FINE_POINTS)
    points = [theory.minimise(P) for P in fine]
    record["fine"] = {"P": fine.tolist(), "c1": [p.c1 for p in points], "cG": [p.cG for p in points]}
    record["P1_level"] = prior_c1_level(theory)
    record["P1"] = threshold_crossing(fine, record["fine"]["c1"], record["P1_level"])
    record["P1_half_rise"] = half_rise_crossing(fine, record["fine"]["c1"])
    record["crossover"] = steepest_rise(fine, record["fine"]["cG"])
    record["P1_mean_field"] = curves["P1_mean_field"]
    record["copy_onset_mean_field"] = curves["crossover"]
    return record


def linear_posterior_agreement(measured: dict[str, Any], predicted: dict[str, Any] | None,
                               factor: float = TRANSITION_FACTOR) -> dict[str, Any]:
    r"""``rms_aG``, ``P1_ratio``, ``crossover_ratio`` (measured over posterior theory) and ``passes``.

    Passes when both ratios lie within ``factor`` and every point converged: ``measured["flagged"]``
    where the sampler sets it (HMC: R-hat, ESS), else :math:`\hat R \le` :data:`RHAT_LIMIT`.
    """
    flags = measured.get("flagged") or [not rhat <= RHAT_LIMIT for rhat in measured["rhat_max"]]
    flagged = [P for P, flag in zip(measured["P"], flags) if flag]
    if predicted is None:
        return {"rms_aG": None, "P1_ratio": None, "crossover_ratio": None, "flagged_points": flagged,
                "passes": False, "reason": "no posterior prediction"}
    rms = float(np.sqrt(np.mean((np.asarray(measured["aG_mean"]) - np.asarray(predicted["aG"])) ** 2)))
    ratios, reasons = {}, []
    for name in ("P1", "crossover"):
        value, reference = measured.get(name), predicted.get(name)
        ratios[name] = None if value is None or reference is None else value / reference
        if ratios[name] is None:
            reasons.append(f"no {name} (measured or predicted) on the grid")
        elif not 1 / factor <= ratios[name] <= factor:
            reasons.append(f"{name} ratio {ratios[name]:.2f} outside {factor:g}x")
    if flagged:
        reasons.append(f"not converged at P = {flagged}")
    return {"rms_aG": rms, "P1_ratio": ratios["P1"], "crossover_ratio": ratios["crossover"],
            "flagged_points": flagged, "passes": not reasons, "reason": "; ".join(reasons) or None}


def _copy_threshold(record: dict[str, Any]) -> float:
    """Midpoint between the predicted uniform and copy a_G where both modes exist (largest such P)."""
    pairs = [(u, c) for u, c in zip(record["aG_uniform"], record["aG_copy"]) if abs(c - u) > 0.05]
    if not pairs:
        return DEFAULTS["copy_threshold"]
    uniform, copy = pairs[-1]
    return float(0.5 * (uniform + copy))


def measured_crossing(P, weight) -> float | None:
    """Where the copy-mode weight first crosses 1/2 (log-linear interpolation); ``None`` without a crossing."""
    for i in range(len(P) - 1):
        if weight[i] < 0.5 <= weight[i + 1]:
            fraction = (0.5 - weight[i]) / (weight[i + 1] - weight[i])
            return float(np.exp(np.log(P[i]) + fraction * (np.log(P[i + 1]) - np.log(P[i]))))
    return None


def posterior_agreement(measured: dict[str, Any], predicted: dict[str, Any] | None) -> dict[str, Any]:
    """``rms_aG``, ``P_star_ratio``, ``flagged_points`` and ``passes`` (see the module docstring)."""
    flagged = [P for P, rhat in zip(measured["P"], measured["rhat_max"]) if not rhat <= RHAT_LIMIT]
    if predicted is None:
        return {"rms_aG": None, "P_star_ratio": None, "flagged_points": flagged, "passes": False,
                "reason": "no posterior prediction"}
    predicted_aG = np.interp(np.log(measured["P"]), np.log(predicted["P"]), predicted["aG"])
    rms = float(np.sqrt(np.mean((np.asarray(measured["aG_mean"]) - predicted_aG) ** 2)))
    ratio = None
    if measured["P_star"] is not None and predicted["P_star"] is not None:
        ratio = measured["P_star"] / predicted["P_star"]
    passes = bool(rms <= RMS_LIMIT and ratio is not None and 1 / P_STAR_FACTOR <= ratio <= P_STAR_FACTOR
                  and not flagged)
    reasons = []
    if rms > RMS_LIMIT:
        reasons.append(f"rms_aG {rms:.3f} > {RMS_LIMIT}")
    if ratio is None:
        reasons.append("no P* (measured or predicted) on the grid")
    elif not 1 / P_STAR_FACTOR <= ratio <= P_STAR_FACTOR:
        reasons.append(f"P* ratio {ratio:.2f} outside 1.5x")
    if flagged:
        reasons.append(f"R-hat > {RHAT_LIMIT} at P = {flagged}")
    return {"rms_aG": rms, "P_star_ratio": ratio, "flagged_points": flagged, "passes": passes,
            "reason": "; ".join(reasons) or None}


def measured_posterior(grid, results, P1_level: float | None = None) -> dict[str, Any]:
    """The ``measured`` record from the per-point summaries (linear ``P1`` at the prediction's ``P1_level``)."""
    keys = ("c1_mean", "cG_mean", "aG_mean", "aG_sem", "coverage_mean", "test_loss_mean", "mode_weight",
            "rhat_max", "ess_min", "swap_acceptance_min", "seconds", "flagged")
    measured: dict[str, Any] = {"P": list(grid)}
    for key in keys:
        measured[key] = [result[key] for result in results]
    crossing = measured_crossing(grid, measured["mode_weight"])
    bracket = [i for i in range(len(grid) - 1) if measured["mode_weight"][i] < 0.5 <= measured["mode_weight"][i + 1]]
    converged = bool(bracket) and not any(measured["flagged"][i] for i in (bracket[0], bracket[0] + 1))
    measured["P_star"] = crossing if converged else None
    measured["P_star_unconverged"] = None if converged else crossing
    if len(grid) > 1:
        measured["P1"] = None if P1_level is None else threshold_crossing(grid, measured["c1_mean"], P1_level)
        measured["crossover"] = steepest_rise(grid, measured["cG_mean"])
    return measured


def run_replica_exchange_validation(attention: str, L: int, V: int, grid, convention, settings: dict[str, Any],
                                    out: str, executor=None, seed: int = 0, theory_draws: int | None = None,
                                    progress: bool = True) -> dict[str, Any]:
    """Replica-exchange points on ``grid`` against the posterior theory and the saddle: the report's records.

    ``settings`` are the :data:`DEFAULTS` fields.  A missing theory leaves ``predicted`` null with
    ``prediction_note``; a saddle that cannot be solved on the grid leaves ``saddle`` null with ``saddle_note``.
    """
    from functools import partial

    from emergence.base.errors import EmergenceError
    from emergence.base.sweeps import run_sweep
    from emergence.validation.copy_task.posterior_memory import check_sampler_memory, executor_workers
    from emergence.validation.copy_task.predictions import predicted_saddle

    check_sampler_memory("replica-exchange", L, V, grid, settings, executor_workers(executor))
    predicted, prediction_note = None, None
    try:
        if attention == "softmax":
            predicted = predicted_posterior(L, V, convention, grid, draws=theory_draws or 20_000)
        else:
            predicted = predicted_linear_posterior(L, V, convention, grid, draws=theory_draws or 256)
    except EmergenceError as error:
        prediction_note = str(error)
    saddle, saddle_note = None, None
    try:
        saddle = predicted_saddle(attention, L, V, convention, grid[0], grid[-1])
    except (EmergenceError, ValueError) as error:  # ValueError: first_order's fold search on some grids
        saddle_note = str(error)
    threshold = predicted.get("copy_threshold", 0.25) if predicted else 0.25
    configs = [posterior_point_config(attention, L, V, P, convention, seed=seed, **{**settings, "copy_threshold": threshold})
               for P in grid]
    results = run_sweep(partial(run_posterior_point, device="cpu"), configs, out, executor=executor,
                        progress=progress, description=f"posterior {attention}")
    measured = measured_posterior(grid, results, (predicted or {}).get("P1_level"))
    agreement = (posterior_agreement if attention == "softmax" else linear_posterior_agreement)(measured, predicted)
    return {"predicted": predicted, "prediction_note": prediction_note, "saddle": saddle, "saddle_note": saddle_note,
            "measured": measured, "agreement": agreement}
