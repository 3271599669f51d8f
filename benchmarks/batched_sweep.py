r"""A whole copy-task sweep trained as one batched model versus the per-point loop.

16 points of one sweep (softmax model T, Adam on the readout-marginal action, L = 32, V = 8, one seed and
both starts, so 2 runs per point; :math:`P` log-spaced 16..256; float32; a fixed budget of Adam steps).
The engine trains all 32 runs as one model, one Adam step for all, each point with its own early stop
(:func:`~emergence.validation.copy_task.experiment.sweep_model` and
:func:`~emergence.validation.copy_task.training.train_map` with ``points``, as
:func:`~emergence.validation.copy_task.experiment.run_copy_points` trains them); the alternative is the
per-point loop, one model per point (each point batched over its own seeds and starts, as
:func:`~emergence.validation.copy_task.experiment.run_copy_point` trains it).  Timed: the training,
from the starts (reset at every call) to the last step; the data and the measurement after training are
built once, outside (they cost the same on both sides).  Both sides in this process, with the same torch
threads (on a CPU every core: the ``cores`` field).  ``ratio`` = loop seconds / batched seconds.
Batching removes each point's fixed cost per step (Python, operator launches, one small Adam); the
arithmetic is the same on both sides.
"""

from __future__ import annotations

import os

import numpy as np

from emergence.base.runtime import resolve_device, torch_threads
from emergence.benchmarks.harness import compare
from emergence.benchmarks.posterior_gradient import WORK_COUNTED
from emergence.validation.copy_task.compiled_marginal_action import work_per_query
from emergence.benchmarks.training_sweeps import TORCH_WORK
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.experiment import point_config, sweep_model
from emergence.validation.copy_task.training import train_map

L, V, POINTS = 32, 8, 16
P_GRID = tuple(int(P) for P in np.geomspace(16, 256, POINTS).round())


def sweep(steps: int) -> list[dict]:
    """The 16 point configurations at a budget of ``steps`` Adam steps."""
    convention = CopyTaskConvention(attention="softmax")
    return [point_config("softmax", "adam", L, V, P, 1, convention, adam_steps=steps, objective="marginal",
                         dtype="float32") for P in P_GRID]


def trainer(configs: list[dict], device: str):
    """A call that trains ``configs`` as one batched model from their starts (data and model built once, here)."""
    batch, _, model, points = sweep_model(configs, device)
    starts = [p.detach().clone() for p in model.parameters()]
    config = configs[0]

    def train() -> None:
        for parameter, start in zip(model.parameters(), starts):
            parameter.data.copy_(start)
        train_map(model, batch, steps=config["adam_steps"], lr=config["adam_lr"], objective=config["objective"],
                  points=points)

    return train


def step_flops(configs: list[dict], device: str) -> tuple[int, str]:
    """Floating-point operations of one batched step (the action and its gradient) and how they were counted:
    the compiled loops' per-query model where the model uses them, else torch's ``FlopCounterMode``
    (matmul-like operators)."""
    from torch.utils.flop_counter import FlopCounterMode

    batch, _, model, _ = sweep_model(configs, device)
    if model.compiled_action:
        return int(batch.counts.sum()) * L * work_per_query(L, V)[0], WORK_COUNTED
    with FlopCounterMode(display=False) as counter:
        model.marginal_potential(batch).sum().backward()
    return counter.get_total_flops(), TORCH_WORK


def run(quick: bool) -> list[dict]:
    """The batched sweep against the per-point loop; ``quick`` uses fewer steps and repeats."""
    device = resolve_device(None)
    steps, repeats = (3, 1) if quick else (20, 5)
    configs = sweep(steps)
    cores = os.cpu_count() if device == "cpu" else None
    flops, counted = step_flops(configs, device)
    with torch_threads(cores):
        batched = trainer(configs, device)
        loop = [trainer([config], device) for config in configs]
        return [compare(
            "copy sweep batched vs point loop",
            f"{POINTS} points, L={L}, V={V}, {steps} steps, {device}" + (f", {cores} cores" if cores else ""),
            batched,
            lambda: [train() for train in loop],
            repeats=repeats,
            detail=f"softmax model T, marginal Adam, P in {P_GRID[0]}..{P_GRID[-1]}, 1 seed x 2 starts per point",
            cores=cores, engine_flops=steps * flops, engine_dtype="float32", work_counted=counted,
        )]


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
