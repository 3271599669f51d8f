"""Golden results: the project's headline numbers, re-derived and compared with a baseline.

A module named in :data:`GOLDEN_SOURCES` exposes ``headline_numbers() ->
list[HeadlineNumber]``; each number is recomputed from the generated kernels and solvers
and compared with ``golden_baseline.json`` beside this file, within its relative
tolerance.  ``emergence check`` prints the comparison.  :func:`baseline_record` is the
content of a new baseline; in a source checkout ``python tools/regenerate.py golden`` writes
it (review the diff before committing it).
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from emergence.base.io import read_json

BASELINE_PATH = Path(__file__).resolve().parent / "golden_baseline.json"

GOLDEN_SOURCES: tuple[str, ...] = (
    "emergence.validation.leading_terms.golden",
    "emergence.validation.copy_head_golden",
    "emergence.validation.copy_head_derivation_golden",
)
"""Dotted names of modules that define ``headline_numbers()``."""


@dataclass(frozen=True)
class HeadlineNumber:
    """A named number the engine derives, how to recompute it, and its tolerance."""

    name: str
    description: str
    compute: Callable[[], float]
    rel_tol: float = 1e-9


@dataclass(frozen=True)
class Comparison:
    name: str
    description: str
    baseline: float | None
    current: float
    rel_tol: float

    @property
    def relative_drift(self) -> float:
        if self.baseline is None:
            return math.inf
        scale = max(abs(self.baseline), 1e-300)
        return abs(self.current - self.baseline) / scale

    @property
    def ok(self) -> bool:
        return self.baseline is not None and self.relative_drift <= self.rel_tol


def headline_numbers(sources: tuple[str, ...] = GOLDEN_SOURCES) -> list[HeadlineNumber]:
    numbers: list[HeadlineNumber] = []
    for dotted in sources:
        numbers.extend(importlib.import_module(dotted).headline_numbers())
    return numbers


def compare_with_baseline(
    numbers: list[HeadlineNumber], baseline_path: Path = BASELINE_PATH
) -> list[Comparison]:
    """Recompute every number and pair it with its stored value (``None`` when new)."""
    stored = read_json(baseline_path) if baseline_path.exists() else {}
    return [
        Comparison(
            n.name,
            n.description,
            stored.get(n.name, {}).get("value"),
            float(n.compute()),
            n.rel_tol,
        )
        for n in numbers
    ]


def stale_entries(numbers: list[HeadlineNumber], baseline_path: Path = BASELINE_PATH) -> list[str]:
    """Names stored in the baseline that no source computes any more (never compared: reported, not skipped)."""
    stored = read_json(baseline_path) if baseline_path.exists() else {}
    computed = {n.name for n in numbers}
    return sorted(name for name in stored if name not in computed)


def baseline_record(comparisons: list[Comparison]) -> dict[str, dict]:
    """The current values as a baseline: name -> value, tolerance and description."""
    return {
        c.name: {"value": c.current, "rel_tol": c.rel_tol, "description": c.description}
        for c in comparisons
    }
