r"""A whole copy-task sweep as one batched model versus the per-point loop (issue 28, item 1).

16 points of one sweep (softmax model T, Adam on the readout-marginal action, L = 32, V = 8, one seed,
both starts: 2 runs per point, :math:`P` log-spaced 16..256, float32, a fixed step budget):
:func:`~emergence.validation.copy_task.experiment.run_copy_points` trains all 32 runs as one model with
one Adam step for all; the alternative is the sweep's per-point loop,
:func:`~emergence.validation.copy_task.experiment.run_copy_point` once per point (each point is itself
batched over its seeds and starts).  Both build the data, train, measure and summarise, in this process,
with the same torch threads (on a CPU: every core, the ``cores`` field).  ``ratio`` = loop seconds /
batched seconds.  Batching removes each point's fixed cost per step (Python, operator launches, a small
Adam); the arithmetic is the same on both sides.
"""

from __future__ import annotations

import os

import numpy as np

from emergence.base.runtime import resolve_device, torch_threads
from emergence.benchmarks.harness import compare
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.experiment import point_config, run_copy_point, run_copy_points

L, V, POINTS = 32, 8, 16
P_GRID = tuple(int(P) for P in np.geomspace(16, 256, POINTS).round())


def sweep(steps: int) -> list[dict]:
    """The 16 point configurations at a budget of ``steps`` Adam steps."""
    convention = CopyTaskConvention(attention="softmax")
    return [point_config("softmax", "adam", L, V, P, 1, convention, adam_steps=steps, objective="marginal",
                         dtype="float32") for P in P_GRID]


def run(quick: bool) -> list[dict]:
    """The batched sweep against the per-point loop; ``quick`` uses fewer steps and repeats."""
    device = resolve_device(None)
    steps, repeats = (5, 1) if quick else (30, 2)
    configs = sweep(steps)
    cores = os.cpu_count() if device == "cpu" else None
    with torch_threads(cores):
        return [compare(
            "copy sweep batched vs point loop",
            f"{POINTS} points, L={L}, V={V}, {steps} steps, {device}" + (f", {cores} cores" if cores else ""),
            lambda: run_copy_points(configs, device),
            lambda: [run_copy_point(config, device) for config in configs],
            repeats=repeats,
            detail=f"softmax model T, marginal Adam, P in {P_GRID[0]}..{P_GRID[-1]}, 1 seed x 2 starts per point",
            cores=cores,
        )]


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
