"""Where the time of a training-sweep step goes: the batched program against the loop (CPU profile).

``python -m emergence.benchmarks.sweep_profile`` prints, for model T and model M (softmax, the 64 runs of
:mod:`emergence.benchmarks.training_sweeps`, one torch thread): the seconds of one Adam step of the batched
program and of the 64 separate models, the loop's fixed cost per model-step (a one-sequence model
of the same shape: for model T almost no arithmetic, for model M the same statistics), and the
five operators that take most of a batched step (``torch.profiler``).  Not a test.
"""

from __future__ import annotations

import time

import torch

from emergence.benchmarks.training_sweeps import adam, sweep_runs, training_stepper
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.base.runtime import torch_threads


def _stepper(counts, seeds, convention):
    """:func:`~emergence.benchmarks.training_sweeps.training_stepper` with the sweeps' Adam, warmed up by one step."""
    step = training_stepper(counts, seeds, convention, adam)
    step()
    return step


def _seconds_per_step(step, repeats: int = 10) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        step()
    return (time.perf_counter() - start) / repeats


def profile(architecture: str) -> str:
    convention = CopyTaskConvention(architecture=architecture, attention="softmax")
    counts, seeds = sweep_runs()
    batched = _stepper(counts, seeds, convention)
    batched_seconds = _seconds_per_step(batched)
    loop_seconds = sum(_seconds_per_step(_stepper([c], [s], convention)) for c, s in zip(counts, seeds))
    fixed = _seconds_per_step(_stepper([1], [0], convention), repeats=50)
    with torch.profiler.profile() as recorded:
        batched()
    table = recorded.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    return (
        f"model {architecture}: batched step {batched_seconds * 1e3:.1f} ms; loop step {loop_seconds * 1e3:.1f} ms "
        f"(ratio {loop_seconds / batched_seconds:.2f}); one-sequence model step {fixed * 1e3:.2f} ms "
        f"(x 64 = {64 * fixed * 1e3:.1f} ms)\n{table}"
    )


if __name__ == "__main__":
    with torch_threads(1):
        for architecture in ("T", "M"):
            print(profile(architecture))
