r"""The sampled posterior's :math:`P^*(L)`: one umbrella validation per context length, its P grid moved until
it brackets the sampled sign change of :math:`\Delta F(P)`, beside the saddle's and the posterior theory's.

For each L of the study, :func:`~emergence.validation.copy_task.posterior_methods.run_posterior_validation`
(softmax, umbrella + MBAR) runs on the default grid around the posterior theory's :math:`P^*`.  Where no
converged pair of neighbouring points brackets :math:`\Delta F = 0`, the grid is extended by
:data:`EXTENSION_POINTS` points on the side the sign says (every converged :math:`\Delta F > 0`: the jump lies
above, so larger P; every one :math:`< 0`: smaller P), geometric with the grid's own last ratio, at most
``extensions`` times; points already measured are reused (the sweep store is keyed by configuration).  Each row
gives

.. math::

    P^*_{\rm sampled} \pm \sigma,\quad P^*_{\rm saddle},\quad P^*_{\rm theory},\quad
    \frac{P^*_{\rm sampled}}{P^*_{\rm saddle}},\quad \frac{P^*_{\rm theory}}{P^*_{\rm sampled}},\quad
    \frac{P^*}{L\ln^2 L}\ \text{(each)},

and ``reason`` where the sampled :math:`P^*` is missing (no converged bracket after the extensions).  The
study decides nothing: it measures.  Its summary states the spread of :math:`P^*/(L\ln^2 L)` over the sizes
with a sampled value, and the sampled/saddle ratio against L.
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable, Sequence

import numpy as np

from emergence.validation.copy_task.posterior_methods import run_posterior_validation

EXTENSION_POINTS = 2
"""Points added on the missing side of the grid per extension."""
DEFAULT_EXTENSIONS = 2
"""Extensions of one size's grid before its row says that no converged bracket was found."""


def missing_side(measured: dict[str, Any]) -> str | None:
    """``"above"`` where every converged :math:`\\Delta F` is positive (the jump lies at larger P), ``"below"``
    where every one is negative, ``None`` where the converged points change sign or none converged.

    >>> missing_side({"delta_F": [3.0, 1.0], "converged": [True, True]})
    'above'
    >>> missing_side({"delta_F": [3.0, -1.0], "converged": [True, True]}) is None
    True
    """
    values = [delta for delta, ok in zip(measured["delta_F"], measured["converged"]) if ok and delta is not None]
    if not values:
        return None
    if all(delta > 0 for delta in values):
        return "above"
    if all(delta < 0 for delta in values):
        return "below"
    return None


def extended_grid(grid: Sequence[int], side: str, points: int = EXTENSION_POINTS) -> list[int]:
    """``grid`` with ``points`` more on ``side``, geometric with the ratio of the grid's outer pair on that side.

    >>> extended_grid([100, 150, 225], "above")
    [100, 150, 225, 338, 506]
    >>> extended_grid([100, 150, 225], "below")
    [44, 67, 100, 150, 225]
    """
    grid = sorted(int(P) for P in grid)
    if side == "above":
        ratio = grid[-1] / grid[-2]
        added = [grid[-1] * ratio ** k for k in range(1, points + 1)]
    else:
        ratio = grid[1] / grid[0]
        added = [grid[0] / ratio ** k for k in range(1, points + 1)]
    return sorted({*grid, *(int(round(P)) for P in added)})


def law_ratio(P_star: float | None, L: int) -> float | None:
    r""":math:`P^*/(L\ln^2 L)`, the saddle law's scale (``None`` for a missing :math:`P^*`)."""
    return None if P_star is None else P_star / (L * math.log(L) ** 2)


def study_row(L: int, report: dict[str, Any], extensions: int) -> dict[str, Any]:
    """One size's row from its validation report (``measured``, ``saddle``, ``predicted``)."""
    sampled = report["measured"]["P_star"]
    saddle, theory = report["saddle"]["P_star"], report["predicted"]["P_star"]
    value = None if sampled is None else sampled["value"]
    row = {"L": L, "P": report["measured"]["P"], "converged": report["measured"]["converged"],
           "sampled": sampled, "saddle": saddle, "theory": theory, "extensions": extensions,
           "sampled_over_saddle": None if value is None or not saddle else value / saddle,
           "theory_over_sampled": None if value is None or not theory else theory / value,
           "law_ratio": {"sampled": law_ratio(value, L), "saddle": law_ratio(saddle, L), "theory": law_ratio(theory, L)}}
    if value is None:
        row["reason"] = (f"no converged pair of points brackets Delta F = 0 on P = {report['measured']['P']} "
                         f"after {extensions} extension(s)")
    return row


def study_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    r"""Across the rows with a sampled :math:`P^*`: :math:`P^*/(L\ln^2 L)` (min, max, relative spread) and the
    sampled/saddle ratio against L; ``sizes_measured`` counts them."""
    measured = [row for row in rows if row["sampled"] is not None]
    ratios = [row["law_ratio"]["sampled"] for row in measured]
    summary: dict[str, Any] = {"sizes_measured": len(measured), "sizes": len(rows)}
    if ratios:
        summary["law_ratio_sampled"] = {"min": min(ratios), "max": max(ratios),
                                        "relative_spread": (max(ratios) - min(ratios)) / float(np.mean(ratios))}
        summary["sampled_over_saddle"] = {row["L"]: row["sampled_over_saddle"] for row in measured}
    return summary


def run_posterior_study(sizes: Sequence[int], V: int, convention, settings: dict[str, Any], *, out: str,
                        executor=None, seed: int = 0, theory_draws: int | None = None, progress: bool = True,
                        extensions: int = DEFAULT_EXTENSIONS,
                        validate: Callable[..., dict[str, Any]] | None = None) -> dict[str, Any]:
    """The study over ``sizes`` (each L's validation in ``out/L{L}``, resumable): ``{"rows", "summary"}``.

    ``validate``: :func:`run_posterior_validation` where ``None`` (a test passes a stand-in with its signature).
    """
    validate = validate or run_posterior_validation
    rows = []
    for L in sizes:
        common = {"out": os.path.join(out, f"L{L}"), "executor": executor, "seed": seed,
                  "theory_draws": theory_draws, "progress": progress}
        report = validate("softmax", L, V, None, "umbrella", convention, settings, **common)
        done = 0
        while done < extensions and (side := missing_side(report["measured"])) is not None:
            grid = extended_grid(report["measured"]["P"], side)
            report = validate("softmax", L, V, grid, "umbrella", convention, settings, **common,
                              theory_P_star=report["predicted"]["P_star"])  # scanned once per L
            done += 1
        rows.append(study_row(L, report, done))
    return {"rows": rows, "summary": study_summary(rows)}
