"""Batched training sweep versus a Python loop over separate models.

64 copy-task runs (8 P values x 8 seeds), Adam on the theory's potential, L = 32, V = 8,
a fixed number of steps.  The engine trains all 64 as one tensor program
(:class:`emergence.validation.copy_task.models.CopyAttentionModel` with a run axis); the alternative
trains the same 64 models one after another, each with its own Adam.  Both do identical
arithmetic per run.  ``ratio`` = loop seconds / batched seconds (runs per second gained).

Batching removes the loop's fixed cost per model and step (Python, operator dispatch, a small
Adam); it cannot remove arithmetic or memory traffic, and one large batched tensor loses the
cache locality of 64 small ones.  ``benchmarks/RESULTS.md`` has the profile of both sides.  On
a CPU one torch thread is used on both sides, as in-process sweeps do
(:func:`emergence.base.runtime.torch_threads`).
"""

from __future__ import annotations

import torch

from emergence.benchmarks.hardware_limits import torch_sides
from emergence.benchmarks.harness import compare
from emergence.benchmarks.posterior_gradient import WORK_COUNTED
from emergence.validation.copy_task.compiled_marginal_action import work_per_query
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.base.runtime import resolve_device, torch_threads

L, V = 32, 8
P_VALUES = (16, 24, 32, 48, 64, 96, 128, 192)
SEEDS = 8


def sweep_runs() -> tuple[list[int], list[int]]:
    """The 64 runs' sequence counts and data seeds (8 P values x 8 seeds)."""
    counts = [P for P in P_VALUES for _ in range(SEEDS)]
    seeds = [1000 * P + s for P in P_VALUES for s in range(SEEDS)]
    return counts, seeds


def training_stepper(counts, seeds, convention, make_optimiser, device="cpu"):
    """Data, models and ``make_optimiser(parameters)`` for runs of ``counts`` sequences; returns one full-batch step.

    Model M's statistics are built here, outside the steps, as the sweeps build them once.
    """
    batch = copy_task_batch(counts, L, V, seeds, device=device)
    if convention.architecture == "M":
        batch.statistics()
    model = CopyAttentionModel(len(counts), L, V, convention, device=device)
    model.initialise(["uniform"] * len(counts), list(seeds))
    optimiser = make_optimiser(model.parameters())

    def step() -> None:
        optimiser.zero_grad(set_to_none=True)
        model.potential(batch).sum().backward()
        optimiser.step()

    return step


def adam(parameters) -> torch.optim.Optimizer:
    """The sweeps' Adam (learning rate 0.02)."""
    return torch.optim.Adam(parameters, lr=0.02)


def run_steps(step, steps: int, device: str) -> None:
    """``steps`` calls of ``step``, synchronised on a GPU."""
    for _ in range(steps):
        step()
    if device == "cuda":
        torch.cuda.synchronize()


def _train(counts, seeds, convention, steps, device) -> None:
    run_steps(training_stepper(counts, seeds, convention, adam, device), steps, device)


TORCH_WORK = "torch FlopCounterMode, matmul-like operators only, one step x steps"


def step_flops(counts, seeds, convention, device="cpu", make_optimiser=None) -> int:
    """Floating-point operations of one batched step (Adam unless ``make_optimiser`` is given),
    counted by torch's ``FlopCounterMode`` (matmul-like operators only: it counts the arithmetic
    a BLAS limit applies to)."""
    from torch.utils.flop_counter import FlopCounterMode

    step = training_stepper(counts, seeds, convention, make_optimiser or adam, device)
    with FlopCounterMode(display=False) as counter:
        step()
    return counter.get_total_flops()


def _one(architecture: str, attention: str, steps: int, repeats: int, device: str) -> dict:
    convention = CopyTaskConvention(architecture=architecture, attention=attention)
    counts, seeds = sweep_runs()
    if CopyAttentionModel(1, L, V, convention, device=device).compiled_action:  # the compiled loops' per-query model
        work = {"engine_flops": steps * sum(counts) * L * work_per_query(L, V)[0], "work_counted": WORK_COUNTED}
    else:
        work = {"engine_flops": steps * step_flops(counts, seeds, convention, device), "work_counted": TORCH_WORK}
    work["engine_dtype"] = "float64"
    return work | compare(
        f"copy sweep {architecture}/{attention} Adam",
        f"64 runs, L={L}, V={V}, {steps} steps, {device}",
        lambda: _train(counts, seeds, convention, steps, device),
        lambda: [_train([c], [s], convention, steps, device) for c, s in zip(counts, seeds)],
        repeats=repeats,
        detail=f"8 P in {P_VALUES[0]}..{P_VALUES[-1]} x 8 seeds; ratio = runs/s batched over runs/s looped",
        **torch_sides(device),
    )


def run(quick: bool) -> list[dict]:
    """Model T (the default) and model M, softmax attention; ``quick`` uses fewer steps and repeats."""
    device = resolve_device(None)
    steps, repeats = (5, 2) if quick else (50, 3)
    with torch_threads(1 if device == "cpu" else None):
        return [_one("T", "softmax", steps, repeats, device), _one("M", "softmax", steps, repeats, device)]


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
