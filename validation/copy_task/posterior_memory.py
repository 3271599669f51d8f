r"""Memory estimates of a posterior validation, checked before anything is allocated.

:func:`emergence.api.validate_posterior` (and so ``emergence validate posterior``) calls
:func:`check_posterior_memory` first, and each posterior sweep calls :func:`check_sampler_memory`
on the grid it runs (the softmax default grid is known only after the theory's :math:`P^*`): an
oversize run ends in one line with the estimate (:class:`~emergence.base.errors.InvalidSizeError`)
instead of being killed by the kernel after minutes.  The budget is
:func:`~emergence.base.limits.memory_budget`.

* **Sampler point** (one :math:`P`): ``len(centres) * chains`` models (umbrella windows and linear
  HMC) or ``replicas * chains`` (replica exchange) of width :math:`V + L`, in float64, on
  ``data_multiple * P`` training sequences: :func:`~emergence.base.limits.copy_point_bytes`, the bound
  measured for the same models and batches in copy-task training (autograd).  ``workers`` points run at once.
  Where the point samples through the compiled loops (:func:`compiled_sampling`: softmax model T, umbrella or
  HMC, Numba installed), which keep no autograd tables, the bound is :data:`COMPILED_FLOATS_PER_SEQUENCE_ENTRY`
  numbers per model, sequence and :math:`L(V + L)` plus :data:`COMPILED_RUNTIME_BYTES`: measured peak RSS
  (2026-12-06, whole process, V = 4) 0.59 GiB at L = 8, P = 200, 32 models; 0.70 GiB at L = 16, P = 600, 64;
  0.76 and 1.18 GiB at L = 24, P = 1100, 40 and 100 (a few trajectories each), and 1.51 GiB for a whole point
  at L = 24, P = 1040, 100 models (MBAR and diagnostics included), about 0.58 GiB of runtime and 1.0-1.8 numbers
  per entry; the autograd bound asks 10.5 GiB for that point.
* **Softmax posterior theory** (:class:`~emergence.numerics.copy_head.posterior.PosteriorTheory`):
  the fixed noise and tokens, ``draws`` rows of :math:`L + V` numbers, and the row averages' arrays of
  ``draws`` :math:`\times L`: at most :data:`SOFTMAX_THEORY_FLOATS` numbers per draw and key.
* **Linear posterior theory** (:class:`~emergence.numerics.copy_head.linear_posterior.LinearPosteriorTheory`):
  the noise of the four :math:`W_{QK}` blocks, ``draws`` :math:`\times (L + V)^2`, and, per chunk of
  ``LINEAR_CHUNK`` draws, :data:`LINEAR_CHUNK_ARRAYS` arrays of
  ``chunk`` :math:`\times` ``sequences`` :math:`\times L^2`.

The bound at L = 16, V = 8, P = 900 for 8 windows (32 models) against the peak RSS measured for one
umbrella point there, 0.78 GiB (2026-12-05, a few HMC draws); with window placement on (the default) the
estimate counts the placement's cap of 16 windows (64 models), twice the models:

>>> from emergence.validation.copy_task.config import FREE_ENERGY_DEFAULTS
>>> gib = sampler_point_bytes("umbrella", L=16, V=8, P=900, settings={**FREE_ENERGY_DEFAULTS, "min_overlap": 0.0}) / 2**30
>>> 2 < gib < 2.5
True
>>> sampler_runs("umbrella", FREE_ENERGY_DEFAULTS), sampler_runs("umbrella", {"min_overlap": 0.0})
(64, 32)
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from emergence.base.limits import check_memory, copy_point_bytes

COMPILED_FLOATS_PER_SEQUENCE_ENTRY = 3
COMPILED_RUNTIME_BYTES = 2**30
"""The compiled-loop sampler point's bound (module docstring): numbers per model, training sequence and
:math:`L(V + L)` (measured 1.0-1.8), and a fixed part for torch, Numba and the compiled loops (measured 0.58 GiB)."""

SOFTMAX_THEORY_FLOATS = 8
"""Numbers per draw and key of the softmax theory's Monte Carlo (tracemalloc peak 4.7 at L = 64, V = 8, 20000 draws)."""

LINEAR_CHUNK = 32
LINEAR_CHUNK_ARRAYS = 8
LINEAR_SEQUENCES = 128
"""The linear theory's held-out sequences and its draws per chunk
(:func:`~emergence.numerics.copy_head.linear_posterior.observables_under_law`), and the arrays of a chunk held at once."""

SOFTMAX_THEORY_DRAWS = 20_000
LINEAR_THEORY_DRAWS = 256
"""Draws of the theories when ``theory_draws`` is not given (as :func:`emergence.api.validate_posterior`)."""


def sampler_runs(method: str, settings: dict[str, Any]) -> int:
    """Models sampled together at one P: windows x chains (umbrella, HMC) or rungs x chains (replica exchange)."""
    from emergence.validation.copy_task.config import FREE_ENERGY_DEFAULTS, POSTERIOR_DEFAULTS

    if method == "replica-exchange":
        chosen = {**POSTERIOR_DEFAULTS, **settings}
        return int(chosen["replicas"]) * int(chosen["chains"])
    chosen = {**FREE_ENERGY_DEFAULTS, **settings}
    windows = len(chosen["centres"])
    if method == "umbrella" and float(chosen["min_overlap"]) > 0:
        windows = max(windows, int(chosen["max_windows"]))  # the placement may add windows up to its cap
    return windows * int(chosen["chains"])


def compiled_sampling(method: str, attention: str, architecture: str | None) -> bool:
    """Whether a sampler point runs through the compiled loops of softmax model T (umbrella and HMC, where Numba is
    installed; :attr:`~emergence.validation.copy_task.models.CopyAttentionModel.compiled_action`); ``architecture``
    ``None`` (not known): no."""
    import importlib.util

    return (method in ("umbrella", "hmc") and attention == "softmax" and architecture == "T"
            and importlib.util.find_spec("numba") is not None)


def sampler_point_bytes(method: str, L: int, V: int, P: int, settings: dict[str, Any], compiled: bool = False) -> float:
    """Peak bytes of one sampler point (see the module docstring); ``compiled``: through the compiled loops."""
    multiple = 1 if method == "replica-exchange" else int(settings.get("data_multiple", 1))
    runs, sequences = sampler_runs(method, settings), multiple * int(P)
    if compiled:
        return copy_point_bytes(L, V, sequences, runs, "T", dtype_bytes=8, floats_per_entry=COMPILED_FLOATS_PER_SEQUENCE_ENTRY,
                                runtime_bytes=COMPILED_RUNTIME_BYTES, evaluation_sequences=0)
    return copy_point_bytes(L, V, sequences, runs, "T", dtype_bytes=8)


def theory_bytes(attention: str, L: int, V: int, draws: int | None) -> float:
    """Peak bytes of the posterior theory's Monte Carlo at ``draws`` (default: the validation's)."""
    if attention == "softmax":
        return 8.0 * SOFTMAX_THEORY_FLOATS * (draws or SOFTMAX_THEORY_DRAWS) * (L + V)
    draws = draws or LINEAR_THEORY_DRAWS
    return 8.0 * (draws * (L + V) ** 2 + LINEAR_CHUNK_ARRAYS * min(draws, LINEAR_CHUNK) * LINEAR_SEQUENCES * L * L)


def parallel_points(points: int, workers: int | None) -> int:
    """How many sweep points run at once: ``workers`` (default: the CPU count), at most ``points``."""
    return max(1, min(workers or os.cpu_count() or 1, points))


def executor_workers(executor) -> int | None:
    """The points an executor runs at once: 1 in this process (``None``, no ``workers``), else its ``workers``."""
    return getattr(executor, "workers", 1) if executor is not None else 1


def check_sampler_memory(method: str, L: int, V: int, P_grid: Sequence[int], settings: dict[str, Any],
                         workers: int | None = None, compiled: bool = False) -> float:
    """Refuse (one line, the estimate) a grid whose ``workers`` largest points would not fit at once."""
    parallel = parallel_points(len(P_grid), workers)
    largest = sorted((int(P) for P in P_grid), reverse=True)[:parallel]
    estimate = sum(sampler_point_bytes(method, L, V, P, settings, compiled) for P in largest)
    return check_memory(estimate, f"validate posterior ({method}) at L={L}, V={V}, P up to {largest[0]} with "
                        f"{sampler_runs(method, settings)} models per point on {parallel} worker(s)",
                        "use a smaller --P-grid, --L, --V, --chains or --workers")


def check_posterior_memory(attention: str, method: str, L: int, V: int, P_grid: Sequence[int] | None,
                           settings: dict[str, Any], theory_draws: int | None = None,
                           workers: int | None = None, architecture: str | None = None) -> None:
    """Refuse, before any work, a posterior validation whose theory or (given) grid would not fit in memory
    (``architecture``, the convention's, decides whether the sampler's compiled-loop bound applies)."""
    estimate = theory_bytes(attention, L, V, theory_draws)
    draws = theory_draws or (SOFTMAX_THEORY_DRAWS if attention == "softmax" else LINEAR_THEORY_DRAWS)
    check_memory(estimate, f"validate posterior: the {attention} posterior theory at L={L}, V={V} with {draws} draws",
                 "use a smaller --L, --V or --theory-draws")
    if P_grid:
        check_sampler_memory(method, L, V, P_grid, settings, workers, compiled_sampling(method, attention, architecture))
