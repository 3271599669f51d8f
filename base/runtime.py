"""Where torch runs: the device of a training command, the number of intra-op threads, and the float64
matmul rate of one thread (the limit a sweep point's cost is measured against).

>>> resolve_device("cpu")
'cpu'
>>> resolve_device("tpu")
Traceback (most recent call last):
...
emergence.base.errors.EmergenceError: unknown device 'tpu'; choose cpu or cuda
"""

from __future__ import annotations

from contextlib import contextmanager

from emergence.base.errors import EmergenceError, InvalidArgumentError


def resolve_device(device: str | None) -> str:
    """``cuda`` when torch sees a GPU and nothing was asked for; an error for unusable requests."""
    import torch

    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cpu", "cuda"):
        raise EmergenceError(f"unknown device {device!r}; choose cpu or cuda")
    if device == "cuda" and not torch.cuda.is_available():
        raise InvalidArgumentError("device", "cuda: torch sees no GPU; use {device} cpu", mentions=("device",))
    return device


@contextmanager
def torch_threads(threads: int | None):
    """Limit torch to ``threads`` intra-op threads inside the block (restored after); ``None`` changes nothing.

    Small batched models on a shared CPU run an order of magnitude faster on one thread than
    on contended threads.
    """
    if threads is None:
        yield
        return
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def torch_single_thread_flops(n: int = 768, repeats: int = 3) -> float:
    """float64 matmul FLOP/s of torch on one thread (``2 n^3 / t``, best of ``repeats``): the limit of a sweep
    point, which runs one torch thread per worker."""
    import time

    import torch

    a = torch.randn(n, n, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    b = a.T.contiguous()
    best = float("inf")
    with torch_threads(1):
        a @ b
        for _ in range(repeats):
            start = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - start)
    return 2.0 * n**3 / best
