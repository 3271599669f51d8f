r"""One point of a copy-task validation sweep: all seeds, both starts (and chains) at one :math:`P`.

:func:`run_copy_point` is what a sweep executor runs: it builds ``seeds x starts x chains``
models as one batched tensor program, trains them (Adam MAP) or samples them (SGLD) and
returns a JSON-ready summary.

The ``objective`` (:data:`~emergence.validation.copy_task.training.OBJECTIVES`) is the joint potential
:math:`U(\theta, W)` or the readout-marginal action :math:`S(\theta)`; "potential" below is that objective.

* Adam: for every seed the start (uniform or copy) with the lower final potential among
  the converged runs is the global MAP; the other start is reported as metastable when its
  order parameters differ (:math:`|\Delta a_G| > 0.05` or :math:`|\Delta c_G| > 0.05`), and the
  seed is bistable when, besides, both starts converged (two minima: hysteresis).
  ``c1_mean``/``c1_std`` etc. are the mean and standard deviation over seeds of the global MAP.
* SGLD: every (seed, start, chain) is one chain; means pool all chains and draws, the
  standard error comes from the effective sample size, and ``c1_std`` is the posterior
  standard deviation.  Means per start are reported too (chains from the two starts need
  not mix inside a metastable window).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from emergence.base.errors import EmergenceError
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.models import STARTS, CopyAttentionModel
from emergence.validation.copy_task.training import measure, sample_sgld, train_map
from emergence.validation.samplers.diagnostics import mean_and_standard_error

EVALUATION_SEQUENCES = 256
OBSERVABLES = ("c1", "cG", "aG", "coverage", "copy_fraction", "test_loss")

DEFAULTS: dict[str, Any] = {
    "objective": "joint",
    "adam_steps": 2000,
    "adam_lr": 0.05,
    "sgld_burn_in": 2000,
    "sgld_draws": 50,
    "sgld_thin": 20,
    "sgld_step_fraction": 0.05,
    "chains": 2,
    "dtype": "float64",
}


def point_config(
    attention: str,
    optimizer: str,
    L: int,
    V: int,
    P: int,
    seeds: int,
    convention: CopyTaskConvention,
    seed: int = 0,
    **settings,
) -> dict[str, Any]:
    """The JSON-able configuration of one sweep point (its hash keys the result file)."""
    config = {
        "experiment": "copy-head",
        "attention": attention,
        "optimizer": optimizer,
        "L": int(L),
        "V": int(V),
        "P": int(P),
        "seeds": int(seeds),
        "seed": int(seed),
        "convention": convention.with_attention(attention).as_dict(),
    }
    config.update({key: settings.get(key, DEFAULTS[key]) for key in DEFAULTS})
    return config


def point_cost(config: dict[str, Any]) -> float:
    r"""Relative run time of a point, for ordering a sweep: a step costs :math:`P L^2 V` per run (model T;
    model M's statistics cost the same once), times the runs and the step cap."""
    chains = config["chains"] if config["optimizer"] == "sgld" else 1
    steps = config["adam_steps"] if config["optimizer"] == "adam" else config["sgld_burn_in"] + config["sgld_draws"] * config["sgld_thin"]
    return float(config["P"] * config["L"] ** 2 * config["V"] * config["seeds"] * chains * steps)


def run_copy_point(config: dict[str, Any], device: str = "cpu") -> dict[str, Any]:
    """Train or sample every model of one sweep point; return the summary (see module docstring)."""
    started = time.perf_counter()
    convention = CopyTaskConvention(**config["convention"])
    L, V, P = config["L"], config["V"], config["P"]
    dtype = getattr(torch, config["dtype"])
    chains = config["chains"] if config["optimizer"] == "sgld" else 1
    runs = [
        (seed, start, chain)
        for seed in range(config["seeds"])
        for start in STARTS
        for chain in range(chains)
    ]
    data_seed = [config["seed"] * 1_000_003 + 7919 * P + seed for seed, _, _ in runs]
    batch = copy_task_batch([P] * len(runs), L, V, data_seed, convention.shift, convention.targets, dtype, device)
    evaluation = copy_task_batch(
        [EVALUATION_SEQUENCES] * len(runs), L, V, [s + 104_729 for s in data_seed],
        convention.shift, convention.targets, dtype, device,
    )
    model = CopyAttentionModel(len(runs), L, V, convention, dtype=dtype, device=device)
    model.initialise(
        [start for _, start, _ in runs],
        [config["seed"] * 1_000_003 + 31 * seed + chain for seed, _, chain in runs],
    )
    if config["optimizer"] == "adam":
        summary = _summarise_map(model, batch, evaluation, runs, config)
    elif config["optimizer"] == "sgld":
        summary = _summarise_sgld(model, batch, evaluation, runs, config)
    else:
        raise EmergenceError(f"unknown optimizer {config['optimizer']!r}; choose adam or sgld")
    summary["seconds"] = time.perf_counter() - started
    return summary


def _summarise_map(model, batch, evaluation, runs, config) -> dict[str, Any]:
    result = train_map(model, batch, steps=config["adam_steps"], lr=config["adam_lr"], objective=config["objective"])
    measured = {k: v.cpu().numpy() for k, v in measure(model, evaluation).items()}
    potential = result.potential.cpu().numpy()
    converged = result.converged.cpu().numpy()
    per_seed = []
    for seed in range(config["seeds"]):
        index = {start: runs.index((seed, start, 0)) for start in STARTS}
        candidates = [s for s in STARTS if converged[index[s]]] or list(STARTS)
        best = min(candidates, key=lambda s: potential[index[s]])
        other = [s for s in STARTS if s != best][0]
        entry = {
            "seed": seed,
            "global_start": best,
            "all_converged": bool(all(converged[index[s]] for s in STARTS)),
        }
        for start in STARTS:
            i = index[start]
            entry[start] = {
                "potential": float(potential[i]),
                "gradient_norm": float(result.gradient_norm[i]),
                "converged": bool(converged[i]),
                **{k: float(measured[k][i]) for k in OBSERVABLES},
            }
        entry["metastable"] = bool(
            abs(entry[best]["aG"] - entry[other]["aG"]) > 0.05 or abs(entry[best]["cG"] - entry[other]["cG"]) > 0.05
        )
        entry["bistable"] = entry["metastable"] and entry["all_converged"]
        per_seed.append(entry)
    summary: dict[str, Any] = {"P": config["P"], "per_seed": per_seed}
    for key in OBSERVABLES:
        values = np.array([entry[entry["global_start"]][key] for entry in per_seed])
        summary[f"{key}_mean"] = float(values.mean())
        summary[f"{key}_std"] = float(values.std(ddof=1)) if len(values) > 1 else 0.0
        for start in STARTS:
            summary[f"{key}_{start}_mean"] = float(np.mean([entry[start][key] for entry in per_seed]))
    summary["converged_fraction"] = float(np.mean(converged))
    summary["metastable_fraction"] = float(np.mean([entry["metastable"] for entry in per_seed]))
    summary["bistable_fraction"] = float(np.mean([entry["bistable"] for entry in per_seed]))
    summary["all_converged_fraction"] = float(np.mean([entry["all_converged"] for entry in per_seed]))
    return summary


def _summarise_sgld(model, batch, evaluation, runs, config) -> dict[str, Any]:
    samples = sample_sgld(
        model, batch, evaluation,
        burn_in=config["sgld_burn_in"], draws=config["sgld_draws"], thin=config["sgld_thin"],
        step_fraction=config["sgld_step_fraction"], seed=config["seed"], objective=config["objective"],
    )
    summary: dict[str, Any] = {"P": config["P"], "chains": len(runs)}
    for key in OBSERVABLES:
        values = getattr(samples, key).cpu().numpy()  # (chains, draws)
        mean, error = mean_and_standard_error(values)
        summary[f"{key}_mean"] = mean
        summary[f"{key}_std"] = float(values.std(ddof=1))
        summary[f"{key}_sem"] = error
        for start in STARTS:
            rows = [i for i, (_, s, _) in enumerate(runs) if s == start]
            summary[f"{key}_{start}_mean"] = float(values[rows].mean())
    summary["step_size_median"] = float(samples.step_size.median())
    return summary
