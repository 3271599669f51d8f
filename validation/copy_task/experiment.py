r"""One point of a copy-task validation sweep: all seeds, both starts (and chains) at one :math:`P`.

:func:`run_copy_point` is what a sweep executor runs: it builds ``seeds x starts x chains``
models as one batched tensor program, trains them (Adam MAP) or samples them (SGLD) and
returns a JSON-ready summary.  :func:`run_copy_points` trains several Adam points of one sweep (equal
but for :math:`P`) as one batched model, each point stopping early on its own, and returns each point's
summary as :func:`run_copy_point` would (to rounding); :func:`sweep_work` hands either to
:func:`~emergence.base.sweeps.run_sweep`, which stores each point under its own key (a batched sweep
resumes point by point; Ctrl-C keeps every finished chunk of points).

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

import json
import time
from functools import partial
from typing import Any

import numpy as np
import torch

from emergence.base.errors import EmergenceError
from emergence.base.sweeps import BatchedWork
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
    if settings.get("tokens", "iid") != "iid":  # i.i.d. points keep their configuration (and stored results)
        config["tokens"] = settings["tokens"]
    if config.get("tokens", "").startswith("corpus:"):  # a changed file is a new point, not a stored one
        from emergence.numerics.copy_head.token_process import TokenProcess
        from emergence.numerics.copy_head.corpus_process import file_sha256

        config["tokens_sha256"] = file_sha256(TokenProcess.parse(config["tokens"]).source)
    return config


def point_cost(config: dict[str, Any]) -> float:
    r"""Relative run time of a point, for ordering a sweep: a step costs :math:`P L^2 V` per run (model T;
    model M's statistics cost the same once), times the runs and the step cap."""
    chains = config["chains"] if config["optimizer"] == "sgld" else 1
    steps = config["adam_steps"] if config["optimizer"] == "adam" else config["sgld_burn_in"] + config["sgld_draws"] * config["sgld_thin"]
    return float(config["P"] * config["L"] ** 2 * config["V"] * config["seeds"] * chains * steps)


def point_runs(config: dict[str, Any]) -> list[tuple[int, str, int]]:
    """The ``(seed, start, chain)`` of every model of one point, in the model's run order."""
    chains = config["chains"] if config["optimizer"] == "sgld" else 1
    return [(seed, start, chain) for seed in range(config["seeds"]) for start in STARTS for chain in range(chains)]


def _data_seeds(config: dict[str, Any]) -> list[int]:
    """Each run's data seed: the sweep seed, the point's :math:`P` and the run's own seed (no other point's)."""
    return [config["seed"] * 1_000_003 + 7919 * config["P"] + seed for seed, _, _ in point_runs(config)]


def _initial_seeds(config: dict[str, Any]) -> list[int]:
    """Each run's seed for its start's noise: the sweep seed, the run's own seed and chain (not P)."""
    return [config["seed"] * 1_000_003 + 31 * seed + chain for seed, _, chain in point_runs(config)]


def sweep_model(configs: list[dict[str, Any]], device: str):
    r"""One batched model for every run of ``configs`` (points equal but for :math:`P`): data, evaluation data, model, point of each run.

    Each run's data and start depend only on its own point's configuration, so a point's runs are the
    same numbers whether it is batched alone or with others.
    """
    first = configs[0]
    convention = CopyTaskConvention(**first["convention"])
    L, V, dtype = first["L"], first["V"], getattr(torch, first["dtype"])
    counts = _over_points(configs, lambda config: [config["P"]] * len(point_runs(config)))
    data_seeds = _over_points(configs, _data_seeds)
    tokens = first.get("tokens", "iid")
    batch = copy_task_batch(counts, L, V, data_seeds, convention.shift, convention.targets, dtype, device, tokens)
    evaluation = copy_task_batch([EVALUATION_SEQUENCES] * len(counts), L, V, [s + 104_729 for s in data_seeds],
                                 convention.shift, convention.targets, dtype, device, tokens)
    model = CopyAttentionModel(len(counts), L, V, convention, dtype=dtype, device=device)
    model.initialise(_over_points(configs, lambda config: [start for _, start, _ in point_runs(config)]),
                     _over_points(configs, _initial_seeds))
    sizes = torch.tensor([len(point_runs(config)) for config in configs])
    return batch, evaluation, model, torch.repeat_interleave(torch.arange(len(configs)), sizes).to(device)


def _over_points(configs: list[dict[str, Any]], per_point) -> list:
    """``per_point(config)`` (a list over the point's runs) concatenated over the points: one entry per run of the batch."""
    return [value for config in configs for value in per_point(config)]


def run_copy_point(config: dict[str, Any], device: str = "cpu") -> dict[str, Any]:
    """Train or sample every model of one sweep point; return the summary (see module docstring).

    The reference of :func:`run_copy_points`: one point, one batched model of its own runs.
    """
    started = time.perf_counter()
    if config["optimizer"] not in ("adam", "sgld"):
        raise EmergenceError(f"unknown optimizer {config['optimizer']!r}; choose adam or sgld")
    batch, evaluation, model, _ = sweep_model([config], device)
    summarise = summarise_map if config["optimizer"] == "adam" else _summarise_sgld
    summary = summarise(model, batch, evaluation, point_runs(config), config)
    summary["seconds"] = time.perf_counter() - started
    return summary


BATCHED_KEYS_EXCLUDED = ("P", "seed")
"""Points may share one batched model when their configurations agree on every key but these."""


def run_copy_points(configs: list[dict[str, Any]], device: str = "cpu") -> list[dict[str, Any]]:
    r"""Train or sample several points of one sweep as one batched model; each point's summary, as
    :func:`run_copy_point` gives it.

    Every ``(P, seed, start)`` run (SGLD: every chain) of every point is one run of one
    :class:`~emergence.validation.copy_task.models.CopyAttentionModel` (the data layer groups the runs by
    :math:`P`, so no run is padded).  Adam: one step moves them all, and each point stops early on its own
    (:func:`~emergence.validation.copy_task.training.train_map` with ``points``).  SGLD: one step moves
    every chain, and each point draws its noise and its step sizes' curvature start from its own
    generator (:func:`~emergence.validation.copy_task.training.sample_sgld` with ``points``).  Either way
    each point's runs do the same arithmetic as in :func:`run_copy_point`, so the summaries agree to
    rounding (float64: 1e-10, ``tests/test_batched_sweep.py``).  What batching saves is the fixed cost of
    a step (Python, operator launches, one small optimiser per point), which dominates on a GPU.
    ``seconds`` of each point is the chunk's wall time shared by the points in proportion to their runs' :math:`P`.
    """
    if not configs:
        return []
    _check_batchable(configs)
    if configs[0]["optimizer"] not in ("adam", "sgld"):
        raise EmergenceError(f"unknown optimizer {configs[0]['optimizer']!r}; choose adam or sgld")
    started = time.perf_counter()
    batch, evaluation, model, points = sweep_model(configs, device)
    bounds = np.cumsum([0] + [len(point_runs(config)) for config in configs])
    if configs[0]["optimizer"] == "adam":
        per_run, summarise = _train_and_measure(model, batch, evaluation, configs[0], points), _map_summary
    else:
        per_run, summarise = _sample(model, batch, evaluation, configs, points), _sgld_summary
    summaries = [summarise({key: values[begin:end] for key, values in per_run.items()}, point_runs(config), config)
                 for config, begin, end in zip(configs, bounds[:-1], bounds[1:])]
    seconds = time.perf_counter() - started
    total = sum(config["P"] for config in configs)
    for config, summary in zip(configs, summaries):
        summary["seconds"] = seconds * config["P"] / total
    return summaries


def batch_group(config: dict[str, Any]) -> str:
    """The key under which sweep points may share one batched model: every setting but :data:`BATCHED_KEYS_EXCLUDED`."""
    return json.dumps({k: v for k, v in config.items() if k not in BATCHED_KEYS_EXCLUDED}, sort_keys=True, default=str)


def sweep_work(device: str, points_per_model: int = 1):
    """What a sweep executor runs (:func:`~emergence.base.sweeps.run_sweep`): :func:`run_copy_point` per point, or,
    with ``points_per_model > 1``, a :class:`~emergence.base.sweeps.BatchedWork` of :func:`run_copy_points`
    over chunks of at most that many points of one :func:`batch_group`; each point's result is stored under its own key."""
    if points_per_model <= 1:
        return partial(run_copy_point, device=device)
    return BatchedWork(partial(run_copy_points, device=device), points_per_model, batch_group)


def _check_batchable(configs: list[dict[str, Any]]) -> None:
    """Fail unless the points agree on every key but :data:`BATCHED_KEYS_EXCLUDED`."""
    if len({batch_group(config) for config in configs}) > 1:
        raise EmergenceError("points batched into one model must agree on every setting but P and seed")


def _train_and_measure(model, batch, evaluation, config, points=None) -> dict[str, np.ndarray]:
    """Adam on every run, then the per-run arrays a summary needs: potential, gradient norm, convergence, observables."""
    result = train_map(model, batch, steps=config["adam_steps"], lr=config["adam_lr"], objective=config["objective"],
                       points=points)
    measured = {k: v.cpu().numpy() for k, v in measure(model, evaluation).items()}
    return {"potential": result.potential.cpu().numpy(), "gradient_norm": result.gradient_norm.cpu().numpy(),
            "converged": result.converged.cpu().numpy(), **measured}


def summarise_map(model, batch, evaluation, runs, config) -> dict[str, Any]:
    """Adam on a point's runs and its summary (:func:`_map_summary`: per seed the global MAP among the starts)."""
    return _map_summary(_train_and_measure(model, batch, evaluation, config), runs, config)


def _run_entry(trained: dict[str, np.ndarray], i: int) -> dict[str, Any]:
    """One run's record: potential, gradient norm, convergence and the observables."""
    return {"potential": float(trained["potential"][i]), "gradient_norm": float(trained["gradient_norm"][i]),
            "converged": bool(trained["converged"][i]), **{k: float(trained[k][i]) for k in OBSERVABLES}}


def _seed_entry(trained: dict[str, np.ndarray], runs, seed: int) -> dict[str, Any]:
    """One seed's two starts: the global MAP (lowest potential among the converged), metastability, bistability."""
    by_start = {start: _run_entry(trained, runs.index((seed, start, 0))) for start in STARTS}
    candidates = [start for start in STARTS if by_start[start]["converged"]] or list(STARTS)
    best = min(candidates, key=lambda start: by_start[start]["potential"])
    other = STARTS[1 - STARTS.index(best)]
    entry = {"seed": seed, "global_start": best,
             "all_converged": all(by_start[start]["converged"] for start in STARTS), **by_start}
    entry["metastable"] = bool(
        abs(entry[best]["aG"] - entry[other]["aG"]) > 0.05 or abs(entry[best]["cG"] - entry[other]["cG"]) > 0.05
    )
    entry["bistable"] = entry["metastable"] and entry["all_converged"]
    return entry


def _map_summary(trained: dict[str, np.ndarray], runs, config) -> dict[str, Any]:
    """A point's Adam summary from its runs' arrays (see the module docstring)."""
    per_seed = [_seed_entry(trained, runs, seed) for seed in range(config["seeds"])]
    summary: dict[str, Any] = {"P": config["P"], "per_seed": per_seed}
    for key in OBSERVABLES:
        values = np.array([entry[entry["global_start"]][key] for entry in per_seed])
        summary[f"{key}_mean"] = float(values.mean())
        summary[f"{key}_std"] = float(values.std(ddof=1)) if len(values) > 1 else 0.0
        for start in STARTS:
            summary[f"{key}_{start}_mean"] = float(np.mean([entry[start][key] for entry in per_seed]))
    summary["converged_fraction"] = float(np.mean(trained["converged"]))
    for key in ("metastable", "bistable", "all_converged"):
        summary[f"{key}_fraction"] = float(np.mean([entry[key] for entry in per_seed]))
    return summary


def _summarise_sgld(model, batch, evaluation, runs, config) -> dict[str, Any]:
    return _sgld_summary(_sample(model, batch, evaluation, [config]), runs, config)


def _sample(model, batch, evaluation, configs, points=None) -> dict[str, np.ndarray]:
    """SGLD on every chain of ``configs``' points (one batched model); per chain, its draws of each observable
    (chains, draws) and its step size."""
    config = configs[0]
    samples = sample_sgld(
        model, batch, evaluation,
        burn_in=config["sgld_burn_in"], draws=config["sgld_draws"], thin=config["sgld_thin"],
        step_fraction=config["sgld_step_fraction"], seed=[c["seed"] for c in configs], objective=config["objective"],
        points=points,
    )
    return {key: getattr(samples, key).cpu().numpy() for key in (*OBSERVABLES, "step_size")}


def _sgld_summary(samples: dict[str, np.ndarray], runs, config) -> dict[str, Any]:
    """One point's summary from its chains' draws (:func:`_sample`, the point's rows)."""
    summary: dict[str, Any] = {"P": config["P"], "chains": len(runs)}
    for key in OBSERVABLES:
        values = samples[key]  # (chains, draws)
        mean, error = mean_and_standard_error(values)
        summary[f"{key}_mean"] = mean
        summary[f"{key}_std"] = float(values.std(ddof=1))
        summary[f"{key}_sem"] = error
        for start in STARTS:
            rows = [i for i, (_, s, _) in enumerate(runs) if s == start]
            summary[f"{key}_{start}_mean"] = float(values[rows].mean())
    summary["step_size_median"] = float(torch.as_tensor(samples["step_size"]).median())  # torch: the lower middle value of an even count
    return summary
