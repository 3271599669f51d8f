"""Benchmark: O(N T^2) basis statistics against the literal T x T x T softmax-Jacobian construction.

``run(quick)`` returns one row per (T, V): the median, minimum and maximum ratio of the
literal time to the engine's time over repeats (both on the same windows in the same
process), the engine's throughput in tokens per second and its peak traced memory
(``tracemalloc``; NumPy reports its allocations to it).  Not a test: nothing is asserted.

Sizes: T in {64, 128, 200} and V in {500, 3000} (quick: T in {64, 200}, V = 500, fewer
windows and repeats).  N = 64 windows at V = 500 and 16 at V = 3000 (the literal construction's dense one-hot
products cost T V^2 per window, about a second per window at V = 3000), 32 when quick.
"""

from __future__ import annotations

import statistics
import time
import tracemalloc

import numpy as np

from numerics.basis_reference import literal_basis_statistics
from numerics.basis_statistics import basis_statistics


def _seconds(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def _peak_bytes(function) -> int:
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _row(context_length: int, vocab_size: int, count: int, repeats: int) -> dict:
    windows = np.random.default_rng(0).integers(0, vocab_size, size=(count, context_length + 1))
    engine = lambda: basis_statistics(windows, vocab_size)  # noqa: E731
    literal = lambda: literal_basis_statistics(windows, vocab_size)  # noqa: E731
    engine_times, literal_times = [], []
    for _ in range(repeats):
        engine_times.append(_seconds(engine))
        literal_times.append(_seconds(literal))
    ratios = [a / e for a, e in zip(literal_times, engine_times)]
    engine_seconds = statistics.median(engine_times)
    return {
        "name": "basis statistics vs literal T^3 Jacobian",
        "size": f"T={context_length}, V={vocab_size}, N={count}",
        "ratio_median": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "engine_seconds": engine_seconds,
        "alternative_seconds": statistics.median(literal_times),
        "engine_tokens_per_second": count * context_length / engine_seconds,
        "engine_peak_bytes": _peak_bytes(engine),
    }


def run(quick: bool = False) -> list[dict]:
    """Rows {name, size, ratio_median, ratio_min, ratio_max, engine_seconds, alternative_seconds, ...}."""
    if quick:
        grid = [(64, 500, 32), (200, 500, 32)]
        repeats = 3
    else:
        grid = [(T, 500, 64) for T in (64, 128, 200)] + [(T, 3000, 16) for T in (64, 128, 200)]
        repeats = 3
    return [_row(T, V, count, repeats) for T, V, count in grid]


if __name__ == "__main__":
    import sys

    for row in run(quick="--quick" in sys.argv):
        print(
            f"{row['size']:<24} ratio {row['ratio_median']:8.1f} [{row['ratio_min']:.1f}, {row['ratio_max']:.1f}]  "
            f"engine {row['engine_seconds']:.3f} s ({row['engine_tokens_per_second']:.3g} tok/s, "
            f"peak {row['engine_peak_bytes'] / 2**20:.1f} MiB)  literal {row['alternative_seconds']:.3f} s"
        )
