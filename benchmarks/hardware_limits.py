r"""The machine's limits, measured once per bench run, and each row's fraction of them.

* matmul FLOP/s in float64 and float32: 2 n^3 / t for an n x n product (NumPy's BLAS, its
  default threads), the best of ``repeats``;
* copy bandwidth: 2 b / t bytes per second for a copy of b bytes (read b, write b), the best
  of ``repeats``.

A benchmark row that states its work (``engine_flops`` with ``engine_dtype``, or
``engine_bytes``) gets ``achieved_flop_per_second`` or ``achieved_bytes_per_second`` and
``fraction_of_limit`` from :func:`with_fraction_of_limit`.  The work is counted, not timed:
torch's ``FlopCounterMode`` for the training rows, a per-pair traffic model for the basis rows.

>>> limits = {"float64_flop_per_second": 1e10, "float32_flop_per_second": 2e10, "copy_bytes_per_second": 1e10}
>>> row = with_fraction_of_limit({"engine_seconds": 0.5, "engine_flops": 1e9, "engine_dtype": "float32"}, limits)
>>> row["achieved_flop_per_second"], row["fraction_of_limit"], row["limit"]
(2000000000.0, 0.1, 'float32 matmul')
"""

from __future__ import annotations

import time

import numpy as np


def _best_seconds(function, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def measure_hardware_limits(quick: bool = False) -> dict[str, float]:
    """{float64_flop_per_second, float32_flop_per_second, copy_bytes_per_second, matmul_n, copy_bytes}."""
    n = 768 if quick else 1536
    copy_bytes = (64 if quick else 256) << 20
    repeats = 3
    limits: dict[str, float] = {"matmul_n": n, "copy_bytes": copy_bytes}
    for dtype in ("float64", "float32"):
        a = np.random.default_rng(0).standard_normal((n, n)).astype(dtype)
        b = a.T.copy()
        a @ b
        limits[f"{dtype}_flop_per_second"] = 2.0 * n**3 / _best_seconds(lambda: a @ b, repeats)
    source = np.ones(copy_bytes // 8)
    target = np.empty_like(source)
    np.copyto(target, source)
    limits["copy_bytes_per_second"] = 2.0 * copy_bytes / _best_seconds(lambda: np.copyto(target, source), repeats)
    return limits


def with_fraction_of_limit(record: dict, limits: dict[str, float]) -> dict:
    """``record`` with its achieved rate and its fraction of the matching limit (unchanged if it states no work)."""
    if "engine_flops" in record:
        rate = record["engine_flops"] / record["engine_seconds"]
        dtype = record.get("engine_dtype", "float64")
        return record | {
            "achieved_flop_per_second": rate,
            "fraction_of_limit": rate / limits[f"{dtype}_flop_per_second"],
            "limit": f"{dtype} matmul",
        }
    if "engine_bytes" in record:
        rate = record["engine_bytes"] / record["engine_seconds"]
        return record | {
            "achieved_bytes_per_second": rate,
            "fraction_of_limit": rate / limits["copy_bytes_per_second"],
            "limit": "copy bandwidth",
        }
    return record


def torch_single_thread_flops(n: int = 768, repeats: int = 3) -> float:
    """float64 matmul FLOP/s of torch on one thread (``2 n^3 / t``, best of ``repeats``): the limit of a sweep point,
    which runs one torch thread per worker."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a = torch.randn(n, n, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        b = a.T.contiguous()
        a @ b
        return 2.0 * n**3 / _best_seconds(lambda: a @ b, repeats)
    finally:
        torch.set_num_threads(threads)
