r"""The limits of each device a bench run uses, measured on that device, and each row's fraction of them.

For the CPU (NumPy's BLAS with its default threads) and, where one answers, the GPU (torch.cuda, else
CuPy), the best of ``repeats`` timings of:

* matmul FLOP/s in float64 and float32: :math:`2 n^3 / t` for an :math:`n \times n` product;
* copy bandwidth: :math:`2 b / t` bytes per second for a device-to-device copy of :math:`b` bytes
  (read :math:`b`, write :math:`b`).

A GPU timing is ``inner`` calls followed by one synchronisation, divided by ``inner`` (launches overlap
the previous call's work, as in a sweep).  torch's float32 GPU matmul is the IEEE product
(``torch.backends.cuda.matmul.allow_tf32`` is off by default), the limit a float32 row is held to.

A benchmark row names the device its engine ran on (``engine_device``: ``cpu`` or ``cuda``, default
``cpu``) and states its work (``engine_flops`` with ``engine_dtype``, or ``engine_bytes``);
:func:`with_fraction_of_limit` adds ``achieved_flop_per_second`` or ``achieved_bytes_per_second`` and
``fraction_of_limit`` of **that device's** limit.  A row on a device whose limits were not measured gets
no fraction: a GPU row is never divided by a CPU limit.  The work is counted, not timed: torch's
``FlopCounterMode`` for the training rows, a per-pair traffic model for the basis rows.

>>> limits = {"cpu": {"name": "CPU, 2 cores", "float64_flop_per_second": 1e10, "copy_bytes_per_second": 1e10},
...           "cuda": {"name": "GPU", "float32_flop_per_second": 4e13, "copy_bytes_per_second": 4e12}}
>>> row = with_fraction_of_limit({"engine_seconds": 0.5, "engine_flops": 1e12, "engine_dtype": "float32",
...                               "engine_device": "cuda"}, limits)
>>> row["achieved_flop_per_second"], row["fraction_of_limit"], row["limit"]
(2000000000000.0, 0.05, 'float32 matmul, GPU')
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Callable

from emergence.benchmarks.harness import side_text

DTYPES = ("float64", "float32")


def _best_seconds(function: Callable[[], Any], repeats: int, inner: int = 1,
                  synchronize: Callable[[], None] = lambda: None) -> float:
    """Best over ``repeats`` of the seconds per call of ``inner`` back-to-back calls (then one synchronisation)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            function()
        synchronize()
        best = min(best, (time.perf_counter() - start) / inner)
    return best


@dataclass(frozen=True)
class _Device:
    """How to allocate, multiply, copy and wait on one device: just what the limits' timings need."""

    name: str
    square: Callable[[int, str], Any]  # (n, dtype) -> an n x n array of normal draws on the device
    ones: Callable[[int], Any]  # (count,) -> a float64 vector of ones on the device
    synchronize: Callable[[], None]
    inner: int  # calls per timing


def measure_device_limits(device: _Device, n: int, copy_bytes: int, repeats: int = 3) -> dict[str, Any]:
    """``{name, matmul_n, copy_bytes, float64_flop_per_second, float32_flop_per_second, copy_bytes_per_second}``."""
    limits: dict[str, Any] = {"name": device.name, "matmul_n": n, "copy_bytes": copy_bytes}
    for dtype in DTYPES:
        a, b = device.square(n, dtype), device.square(n, dtype)
        a @ b
        device.synchronize()
        seconds = _best_seconds(lambda: a @ b, repeats, device.inner, device.synchronize)
        limits[f"{dtype}_flop_per_second"] = 2.0 * n**3 / seconds
    source = device.ones(copy_bytes // 8)
    target = source * 0
    target[...] = source
    device.synchronize()

    def copy() -> None:
        target[...] = source

    limits["copy_bytes_per_second"] = 2.0 * copy_bytes / _best_seconds(copy, repeats, device.inner, device.synchronize)
    return limits


def cpu_cores() -> int:
    """Cores this process may run on (its affinity), the threads NumPy's BLAS starts unless told fewer."""
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(variable, "").isdigit():
            return int(os.environ[variable])
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def cpu_device() -> _Device:
    import numpy as np

    rng = np.random.default_rng(0)
    return _Device(f"CPU, {side_text('cpu', cpu_cores())}", lambda n, dtype: rng.standard_normal((n, n)).astype(dtype),
                   np.ones, lambda: None, inner=1)


def gpu_device() -> _Device | None:
    """The GPU through torch.cuda, else through CuPy; ``None`` where neither sees one."""
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        import torch

        if torch.cuda.is_available():
            generator = torch.Generator(device="cuda").manual_seed(0)
            return _Device(torch.cuda.get_device_name(0),
                           lambda n, dtype: torch.randn(n, n, dtype=getattr(torch, dtype), device="cuda",
                                                        generator=generator),
                           lambda count: torch.ones(count, dtype=torch.float64, device="cuda"),
                           torch.cuda.synchronize, inner=10)
    from emergence.numerics.backend import array_module, cupy_status

    if not cupy_status()[0]:
        return None
    cupy = array_module("cupy")
    return _Device(cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                   lambda n, dtype: cupy.random.standard_normal((n, n)).astype(dtype),
                   cupy.ones, cupy.cuda.Stream.null.synchronize, inner=10)


def measure_hardware_limits(quick: bool = False) -> dict[str, dict[str, Any]]:
    """``{"cpu": limits, "cuda": limits}`` (``cuda`` only where a GPU answers), each of :func:`measure_device_limits`."""
    limits = {"cpu": measure_device_limits(cpu_device(), 768 if quick else 1536, (64 if quick else 256) << 20)}
    gpu = gpu_device()
    if gpu is not None:
        limits["cuda"] = measure_device_limits(gpu, 4096 if quick else 8192, (256 if quick else 1024) << 20)
    return limits


def with_fraction_of_limit(record: dict, limits: dict[str, dict[str, Any]]) -> dict:
    """``record`` with its achieved rate and its fraction of the matching limit of the device it ran on
    (unchanged if it states no work; no fraction, and a ``limit`` saying why, where that device's limits are missing)."""
    if "engine_flops" not in record and "engine_bytes" not in record:
        return record
    device = record.get("engine_device", "cpu")
    if device not in limits:
        return record | {"limit": f"no {device} limits measured"}
    device_limits = limits[device]
    if "engine_flops" in record:
        rate = record["engine_flops"] / record["engine_seconds"]
        dtype = record.get("engine_dtype", "float64")
        return record | {
            "achieved_flop_per_second": rate,
            "fraction_of_limit": rate / device_limits[f"{dtype}_flop_per_second"],
            "limit": f"{dtype} matmul, {device_limits['name']}",
        }
    rate = record["engine_bytes"] / record["engine_seconds"]
    return record | {
        "achieved_bytes_per_second": rate,
        "fraction_of_limit": rate / device_limits["copy_bytes_per_second"],
        "limit": f"copy bandwidth, {device_limits['name']}",
    }


def sides(engine_device: str, engine_cores: int | None, alternative_device: str, alternative_cores: int | None) -> dict:
    """The record fields naming where each side ran: ``{engine,alternative}_{device,cores}`` (cores on a CPU only)."""
    return {"engine_device": engine_device, "engine_cores": engine_cores,
            "alternative_device": alternative_device, "alternative_cores": alternative_cores}


def torch_sides(device: str) -> dict:
    """:func:`sides` of a torch row whose two sides run on ``device`` (on a CPU, with torch's current threads)."""
    import torch

    cores = torch.get_num_threads() if device == "cpu" else None
    return sides(device, cores, device, cores)
