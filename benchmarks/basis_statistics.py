r"""Benchmark: O(N T^2) basis statistics against the literal T x T x T softmax-Jacobian construction.

``run(quick)`` returns one :func:`emergence.benchmarks.harness.compare` record per (T, V): the ratio
literal time / engine time (median, min, max over interleaved repeats on the same
windows), plus the engine's throughput ``engine_tokens_per_second`` and its peak traced
memory ``engine_peak_bytes``.  Not a test: nothing is asserted.

Sizes: T in {64, 128, 200} and V in {500, 3000}; N = 64 windows at V = 500 and 16 at
V = 3000 (the literal construction's dense one-hot products cost T V^2 per window, a quarter
of a second per window at V = 3000), plus T = 200, V = 3000 at N = 64: with 16 windows
(3200 tokens for 3000 types) the engine's time is its fixed O(V^2) work, writing the five
V x V results, and the ratio grows with N until the per-window costs dominate.  Quick: T = 200
at V = 500 (N = 128) and at V = 3000 (N = 24; V = 3000 rows take two repeats: the literal costs seconds per call).
On a quiet 2-core machine the warm engine's time at V = 500 is 6 ms fixed plus 0.3 ms per window and
the literal's 20 ms per window, so the ratio approaches about 60x from below (46x at N = 64, 54x at
N = 128); at V = 3000 the warm engine takes 0.12-0.16 s at N = 16-32 (mostly its fixed V x V work) against
the literal's 0.34 s per window, about 60-70x at N = 24.

Both sides use NumPy's BLAS on every core it may use (the rows say how many).  The same engine on a GPU:
:mod:`emergence.benchmarks.basis_statistics_gpu`.
"""

from __future__ import annotations

import numpy as np

from emergence.benchmarks.hardware_limits import cpu_cores, sides
from emergence.benchmarks.harness import compare, peak_memory_bytes
from emergence.numerics.leading_terms.basis_reference import literal_basis_statistics
from emergence.numerics.leading_terms.basis_statistics import basis_statistics


def _record(context_length: int, vocab_size: int, count: int, repeats: int) -> dict:
    windows = np.random.default_rng(0).integers(0, vocab_size, size=(count, context_length + 1))

    def engine():
        return basis_statistics(windows, vocab_size)

    def literal():
        return literal_basis_statistics(windows, vocab_size)

    record = compare(
        "basis statistics vs literal T^3 Jacobian",
        f"T={context_length}, V={vocab_size}, N={count}",
        engine,
        literal,
        repeats=repeats,
        **sides("cpu", cpu_cores(), "cpu", cpu_cores()),
    )
    record["engine_tokens_per_second"] = count * context_length / record["engine_seconds"]
    record["engine_peak_bytes"] = peak_memory_bytes(engine)
    record["engine_bytes"] = basis_traffic_bytes(count, context_length, vocab_size)
    record["work_counted"] = "traffic model: 40 bytes per causal pair + six V x V float64 arrays written"
    return record


def basis_traffic_bytes(count: int, context_length: int, vocab_size: int) -> int:
    """Memory traffic of the statistics, as a model: per causal pair one 8-byte accumulator read and
    write in pass 1, one gather and one read-write in pass 2 (40 bytes), plus the six dense V x V
    float64 arrays written once; the fraction of copy bandwidth is a lower bound of the cache misses'
    share."""
    pairs = count * context_length * (context_length + 1) // 2
    return 40 * pairs + 6 * 8 * vocab_size * vocab_size


def run(quick: bool = False) -> list[dict]:
    """Records {name, size, ratio_median, ratio_min, ratio_max, engine_seconds, alternative_seconds, ...}."""
    if quick:
        grid = [(200, 500, 128), (200, 3000, 24)]
    else:
        grid = [(T, 500, 64) for T in (64, 128, 200)] + [(T, 3000, 16) for T in (64, 128, 200)] + [(200, 3000, 64)]
    return [_record(T, V, count, repeats=2 if V > 1000 else 3) for T, V, count in grid]
