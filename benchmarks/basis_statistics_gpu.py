r"""Benchmark: the basis statistics on a GPU (CuPy), against the same engine on NumPy and alone at a large vocabulary.

Where CuPy can allocate on a GPU (:func:`emergence.numerics.backend.cupy_status`): one record times the engine
on the GPU against itself on NumPy at T = 200, V = 3000, N = 4096 (ratio = NumPy seconds / CuPy seconds,
synchronised; NumPy's BLAS on every core it may use), with the GPU's throughput; and, where the GPU's free
memory holds the dense arrays (48 V^2 bytes), one GPU-only record at V = 50 000 (T = 200, N = 4096, without
:math:`\Sigma_{\bar B}`; no NumPy side: its arrays alone would take about 112 GiB of host memory).  Work: the
traffic model of :func:`emergence.benchmarks.basis_statistics.basis_traffic_bytes`, a fraction of the GPU's
own device-to-device copy bandwidth.  Without a GPU: no records.  Its own module, so that
``emergence bench --only basis_statistics_gpu`` runs the GPU rows alone (the prepared GPU run does).
"""

from __future__ import annotations

import sys

import numpy as np

from emergence.benchmarks.basis_statistics import basis_traffic_bytes
from emergence.benchmarks.hardware_limits import cpu_cores, sides
from emergence.benchmarks.harness import compare, engine_only
from emergence.numerics.backend import array_module, cupy_status
from emergence.numerics.leading_terms.basis_statistics import basis_statistics, dense_statistics_bytes

GPU_ONLY_VOCABULARY = 50_000


def run(quick: bool = False) -> list[dict]:
    """The two records where a GPU answers (``quick`` changes nothing: the GPU side takes seconds), else none."""
    if not cupy_status()[0]:
        return []
    return [_gpu_record(200, 3000, 4096, repeats=3), *_gpu_only_records(200, GPU_ONLY_VOCABULARY, 4096, repeats=3)]


def _gpu_record(context_length: int, vocab_size: int, count: int, repeats: int) -> dict:
    cupy = array_module("cupy")
    windows = np.random.default_rng(0).integers(0, vocab_size, size=(count, context_length + 1))
    gpu = _gpu_engine(cupy, windows, vocab_size)
    gpu()
    record = compare(
        "basis statistics CuPy vs NumPy engine",
        f"T={context_length}, V={vocab_size}, N={count}",
        gpu,
        lambda: basis_statistics(windows, vocab_size),
        repeats=repeats,
        **sides("cuda", None, "cpu", cpu_cores()),
    )
    return record | _gpu_work(record, context_length, vocab_size, count)


def _gpu_engine(cupy, windows, vocab_size: int, **options):
    """One synchronised call of the statistics on the GPU, the windows already there."""
    on_device = cupy.asarray(windows)

    def gpu():
        basis_statistics(on_device, vocab_size, xp=cupy, **options)
        cupy.cuda.Stream.null.synchronize()

    return gpu


def _gpu_work(record: dict, context_length: int, vocab_size: int, count: int) -> dict:
    return {"engine_tokens_per_second": count * context_length / record["engine_seconds"],
            "engine_bytes": basis_traffic_bytes(count, context_length, vocab_size),
            "work_counted": "traffic model, compared with the GPU's measured device-to-device copy bandwidth"}


def _gpu_only_records(context_length: int, vocab_size: int, count: int, repeats: int) -> list[dict]:
    """The statistics at a vocabulary only the GPU holds (no alternative); none where its free memory is short."""
    cupy = array_module("cupy")
    free_bytes = cupy.cuda.runtime.memGetInfo()[0]
    if dense_statistics_bytes(vocab_size) > free_bytes:
        return []
    windows = np.random.default_rng(0).integers(0, vocab_size, size=(count, context_length + 1))
    gpu = _gpu_engine(cupy, windows, vocab_size, include_interchangeability=False, memory_limit_bytes=free_bytes)
    try:
        record = engine_only("basis statistics CuPy (no alternative)", f"T={context_length}, V={vocab_size}, N={count}",
                             gpu, repeats=repeats, **sides("cuda", None, None, None))
    except cupy.cuda.memory.OutOfMemoryError as error:  # the estimate's six arrays fitted, the temporaries did not
        print(f"basis statistics at V={vocab_size} on the GPU: out of memory ({error}); no record", file=sys.stderr)
        return []
    finally:
        cupy.get_default_memory_pool().free_all_blocks()
    return [record | _gpu_work(record, context_length, vocab_size, count)]
