"""Softmax model T's compiled loops with the targets read as tokens against the same loops reading the targets' rows.

``python -m emergence.benchmarks.target_tokens`` prints, side by side in one process (one torch thread, the
two paths interleaved, thread CPU time and wall clock, medians with [min, max] over the rounds):

* the model-T sweep of :mod:`emergence.benchmarks.training_sweeps` (64 runs, joint Adam, L = 32, V = 8):
  one batched step and the per-run loop's step, and their ratio, on each path;
* one batched gradient of :mod:`emergence.benchmarks.posterior_gradient` at L = 8, P = 272, 20 runs, on each
  path, and its ratio to the autograd path.

The rows path is what the loops run for targets that are not one-hot (centred targets); here it is forced
for raw targets by :meth:`~emergence.validation.copy_task.data.CopyTaskBatch.target_tokens` returning
``None``.  Not a test; no verdict.
"""

from __future__ import annotations

import os
import statistics
import time
from contextlib import contextmanager

from emergence.base.runtime import torch_threads
from emergence.benchmarks.posterior_gradient import gradient_call
from emergence.benchmarks.training_sweeps import adam, sweep_runs, training_stepper
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import CopyTaskBatch

PATHS = ("rows", "tokens")


@contextmanager
def _targets_as(path: str):
    """Build data whose loops read the targets as ``path`` (rows: ``target_tokens`` gives ``None``)."""
    tokens = CopyTaskBatch.target_tokens
    if path == "rows":
        CopyTaskBatch.target_tokens = lambda batch: None
    try:
        yield
    finally:
        CopyTaskBatch.target_tokens = tokens


def _timed(call, calls: int) -> tuple[float, float]:
    """(thread seconds, wall seconds) per call of ``calls`` calls."""
    thread, wall = time.thread_time(), time.perf_counter()
    for _ in range(calls):
        call()
    return (time.thread_time() - thread) / calls, (time.perf_counter() - wall) / calls


def _summary(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} [{min(values):.2f}, {max(values):.2f}]"


def sweep_rows(rounds: int = 5) -> list[str]:
    """The model-T sweep step, batched and looped, on both paths."""
    convention, (counts, seeds) = CopyTaskConvention(attention="softmax"), sweep_runs()
    sides = {}
    for path in PATHS:
        with _targets_as(path):  # the first step lays the data out in groups, reading target_tokens
            batched = training_stepper(counts, seeds, convention, adam)
            loop = [training_stepper([c], [s], convention, adam) for c, s in zip(counts, seeds)]
            batched(), [step() for step in loop]
        sides[path] = (batched, lambda loop=loop: [step() for step in loop])
    times = {path: [] for path in PATHS}
    for _ in range(rounds):
        for path, (batched, looped) in sides.items():
            times[path].append((_timed(batched, 10), _timed(looped, 3)))
    lines = []
    for path, rows in times.items():
        thread = [loop[0] / batch[0] for batch, loop in rows]
        wall = [loop[1] / batch[1] for batch, loop in rows]
        lines.append(f"sweep T, targets as {path}: batched step {1e3 * statistics.median(b[0] for b, _ in rows):.2f} ms, "
                     f"loop step {1e3 * statistics.median(lp[0] for _, lp in rows):.2f} ms (thread time); "
                     f"ratio thread {_summary(thread)}, wall {_summary(wall)}")
    return lines


def gradient_rows(rounds: int = 7) -> list[str]:
    """One posterior gradient at L = 8 on both paths and on the autograd path."""
    calls = {}
    for path in PATHS:
        with _targets_as(path):
            calls[path] = gradient_call(8, 272, 20, True)
            calls[path]()
    calls["autograd"] = gradient_call(8, 272, 20, False)
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            call()
            times[name].append(_timed(call, 5 if name == "autograd" else 20))
    lines = []
    for path in PATHS:
        thread = [a[0] / c[0] for c, a in zip(times[path], times["autograd"])]
        wall = [a[1] / c[1] for c, a in zip(times[path], times["autograd"])]
        lines.append(f"gradient L=8 P=272 20 runs, targets as {path}: {1e3 * statistics.median(t[0] for t in times[path]):.3f}"
                     f" ms (thread time); autograd / compiled thread {_summary(thread)}, wall {_summary(wall)}")
    return lines


if __name__ == "__main__":
    with torch_threads(1):
        print(f"load before {os.getloadavg()[0]:.1f}")
        for line in sweep_rows() + gradient_rows():
            print(line)
        print(f"load after {os.getloadavg()[0]:.1f}")
