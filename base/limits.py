r"""Memory estimates of the engine's large computations, and the budget they must fit.

An estimate is taken from the sizes alone, before anything is allocated, so an oversize problem is
refused in milliseconds (:func:`check_memory`, :class:`~emergence.base.errors.InvalidSizeError`
with the estimate in the message) instead of being killed by the kernel after minutes.

Copy-task point (:func:`copy_point_bytes`): ``runs`` models of width :math:`w = V + L` (model T) or
:math:`L` (model M), trained on :math:`N = \text{runs}\,(P + P_{eval})` sequences.  Per sequence the
one-hot inputs and targets, logits, attention, outputs and their autograd copies hold at most
:data:`FLOATS_PER_SEQUENCE_ENTRY` :math:`\times L (V + L)` numbers; per run the weights, gradients,
optimiser moments and the readout's Cholesky factor hold at most :data:`FLOATS_PER_WEIGHT`
:math:`\times (w^2 + V^2)`; plus a fixed :data:`RUNTIME_BYTES` for torch itself.  The constants
are upper bounds of peak-RSS measurements (Adam and SGLD, joint and marginal objectives, at
:math:`(L, V, P)` = (8, 4, 20000), (32, 64, 2000), (8, 400, 200): measured 2-12 numbers per
:math:`L(V+L)` and sequence, and a fixed 0.45 GiB).

The budget (:func:`memory_budget`) is ``EMERGENCE_MEMORY_BUDGET`` (bytes, or with a suffix
``K``, ``M``, ``G``, ``T``) when set, else 80 % of the memory the system reports available.

>>> gib = copy_point_bytes(L=8, V=4, P=20_000, runs=4) / 2**30
>>> 0.5 < gib < 2
True
>>> parse_bytes("1.5G") == 1.5 * 2**30
True
"""

from __future__ import annotations

import os

from emergence.base.errors import InvalidSizeError

FLOATS_PER_SEQUENCE_ENTRY = 16
FLOATS_PER_WEIGHT = 8
RUNTIME_BYTES = 2**29
EVALUATION_SEQUENCES = 256
_SUFFIXES = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_bytes(text: str) -> float:
    """``"12G"``, ``"512M"`` or a plain number of bytes."""
    cleaned = text.strip().upper().removesuffix("IB").removesuffix("B")
    suffix = cleaned[-1:] if cleaned[-1:] in _SUFFIXES and cleaned[-1:] else ""
    try:
        value = float(cleaned[: len(cleaned) - len(suffix)]) * _SUFFIXES[suffix]
    except ValueError:
        raise InvalidSizeError(f"cannot read a memory size from {text!r}; use e.g. 8G or 512M") from None
    if not value > 0 or value == float("inf"):
        raise InvalidSizeError(f"a memory size must be positive and finite, got {text!r}")
    return value


def available_memory_bytes() -> int:
    """Memory available to this process now (``MemAvailable`` on Linux, else physical memory)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def memory_budget() -> float:
    """Bytes one command may plan to use (see the module docstring)."""
    configured = os.environ.get("EMERGENCE_MEMORY_BUDGET")
    return parse_bytes(configured) if configured else 0.8 * available_memory_bytes()


def format_bytes(value: float) -> str:
    """``3.2 GiB``: three significant digits in the largest binary unit below the value.

    >>> format_bytes(3.4e12)
    '3.09 TiB'
    >>> format_bytes(2.6e15)
    '2365 TiB'
    """
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            scaled = value / size
            return f"{scaled:.3g} {unit}" if scaled < 1000 else f"{scaled:.0f} {unit}"
    return f"{value:.0f} B"


def copy_point_bytes(L: int, V: int, P: int, runs: int, architecture: str = "T", dtype_bytes: int = 8, *,
                     floats_per_entry: float = FLOATS_PER_SEQUENCE_ENTRY, runtime_bytes: float = RUNTIME_BYTES,
                     evaluation_sequences: int = EVALUATION_SEQUENCES) -> float:
    """Peak bytes of one copy-task sweep point (upper bound; see the module docstring).  The per-entry numbers, the
    fixed part and the evaluation sequences per run default to training's; a computation that keeps fewer
    intermediates passes its own measured bound."""
    width = V + L if architecture == "T" else L
    sequences = float(runs) * (float(P) + evaluation_sequences)
    numbers = sequences * floats_per_entry * L * (V + L) + runs * FLOATS_PER_WEIGHT * (width**2 + V**2)
    return runtime_bytes + dtype_bytes * numbers


def check_memory(estimate: float, what: str, hint: str = "", budget: float | None = None) -> float:
    """Raise :class:`InvalidSizeError` when ``estimate`` bytes exceed the budget; return the estimate."""
    budget = memory_budget() if budget is None else budget
    if estimate > budget:
        raise InvalidSizeError(
            f"{what} needs an estimated {format_bytes(estimate)} of memory, more than the budget of "
            f"{format_bytes(budget)} (80% of available memory, or EMERGENCE_MEMORY_BUDGET)"
            + (f"; {hint}" if hint else "")
        )
    return estimate


def copy_sweep_bytes(L: int, V: int, P_grid, runs: int, workers: int, architecture: str = "T",
                     dtype_bytes: int = 8) -> float:
    """Peak bytes of a copy-task sweep whose ``workers`` largest points run at the same time."""
    largest = sorted(P_grid, reverse=True)[: max(1, workers)]
    return sum(copy_point_bytes(L, V, P, runs, architecture, dtype_bytes) for P in largest)
