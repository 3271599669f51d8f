r"""Convention study: which model choices give which exponents for the three claims.

For every convention in :data:`STUDIED_CONVENTIONS` and every claim, the transition is
measured at the fast sizes of :mod:`.scaling` (``dps`` digits) and the verdict recorded; for
linear attention the literal crossover (first :math:`c_G = c_1`) is measured too (float64), so
that both crossover definitions can be compared.  :func:`markdown_table` prints the table
of ``docs/copy_head_scaling.md``; in a source checkout ``python tools/regenerate.py
conventions`` prints it.

Conventions the solvers do not support (softmax attention of architecture M, centred
targets, open shift) are listed as such rather than silently skipped.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from emergence.numerics.copy_head.crossover import literal_crossover
from emergence.numerics.copy_head.minimisation import local_minima
from emergence.numerics.copy_head.reduced_action import reduced_action
from emergence.numerics.copy_head.scaling import scaling_report
from emergence.numerics.copy_head.scaling_claims import CLAIMS
from emergence.theory.copy_head.conventions import Convention
from emergence.base.errors import EmergenceError

STUDIED_CONVENTIONS: dict[str, str] = {
    "T (default, lambda = 1/L)": "",
    "T, lambda = 1 (earlier default)": "r=0",
    "T, lambda = 1/V": "c=1",
    "T, G-prior 1/L": "a=1",
    "T, beta = 1 (summed loss)": "d=0",
    "T, beta = 1/(LV)": "e=1",
    "T, A = G": "normalisation=G",
    "M (bulk-free)": "architecture=M",
}
"""Label -> ``--convention`` text."""


def _exponent_text(report: dict) -> str:
    parts = []
    for variable, exponents in report["local_exponent"].items():
        tail = exponents[-3:]
        parts.append(f"{variable}^{exponents[-1]:.3f} (±{(max(tail) - min(tail)) / 2:.3f})")
    return " ".join(parts)


def literal_crossover_exponents(convention: Convention) -> str:
    """Local exponents of the first c_G = c_1 point along the crossover claim's sweeps (float64)."""
    parts = []
    for sweep in CLAIMS["linear-crossover"].sweeps:
        points = sweep.sizes(fast=True)[-2:]
        values = []
        for L, V in points:
            action = reduced_action("linear", L, V, convention)
            grid = np.geomspace(L**1.5 * V**0.5 * 1e-2, L**1.5 * V**0.5 * 1e3, 240)
            y, _ = local_minima(action, grid).global_minimum()
            values.append(literal_crossover(action, grid, y))
        if any(v is None for v in values):
            parts.append(f"{sweep.variable}: not in range")
            continue
        sizes = [p[0] if sweep.variable == "L" else p[1] for p in points]
        first, last = cast("list[float]", values)
        exponent = math.log(last / first) / math.log(sizes[1] / sizes[0])
        parts.append(f"{sweep.variable}^{exponent:.3f}")
    return " ".join(parts)


def convention_rows(conventions: dict[str, str] | None = None, *, dps: int = 30) -> list[dict]:
    """One row per (convention, claim): measured exponents, residual exponent, verdict."""
    rows = []
    for label, text in (conventions or STUDIED_CONVENTIONS).items():
        convention = Convention.parse(text)
        for claim in CLAIMS:
            row: dict[str, Any] = {"convention": label, "text": text or "(default)", "claim": claim}
            try:
                report = scaling_report(claim, convention, dps=dps, fast=True)
            except EmergenceError as error:
                row.update(exponents=f"n/a ({str(error).splitlines()[0][:60]})", holds=None, residual="")
            else:
                residual = ", ".join(f"{v}: {f['residual_exponent'][-1]:+.3f}" for v, f in report["fit"].items())
                row.update(exponents=_exponent_text(report), holds=report["holds"], residual=residual)
            if claim == "linear-crossover":
                try:
                    row["literal"] = literal_crossover_exponents(convention)
                except EmergenceError as error:
                    row["literal"] = f"n/a ({str(error).splitlines()[0][:40]})"
            rows.append(row)
    return rows


def markdown_table(rows: list[dict]) -> str:
    """The convention table as Markdown."""
    lines = [
        "| convention | claim | measured local exponent (± half-spread, last 3) | residual exponent of P/law | holds | literal c_G = c_1 exponent |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        holds = {True: "yes", False: "no", None: "n/a"}[row["holds"]]
        lines.append(f"| {row['convention']} (`{row['text']}`) | {row['claim']} | {row['exponents']} | "
                     f"{row['residual']} | {holds} | {row.get('literal', '')} |")
    return "\n".join(lines)
