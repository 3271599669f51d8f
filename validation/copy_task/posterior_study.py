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

from emergence.validation.copy_task.posterior_free_energy import measured_P_star
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


def _spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "max": max(values), "relative_spread": (max(values) - min(values)) / float(np.mean(values))}


def local_exponents(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    r"""Between consecutive sizes with a sampled :math:`P^*`: its local exponent
    :math:`\ln(P^*_2/P^*_1)/\ln(L_2/L_1)` (from the readings) and, where the rows hold their grid brackets, the
    ``range`` the brackets allow (the grids' resolution: the lower end of the larger size's bracket over the upper
    end of the smaller's, and the reverse), beside the local exponents of :math:`L\ln^2 L` (the saddle law's form)
    and :math:`L\ln L` over the same pair.  A law :math:`P^* \propto L\ln L` reads the ``L_ln_L`` column exactly:

    >>> rows = [{"L": L, "sampled": {"value": 3.0 * L * math.log(L)}} for L in (12, 24)]
    >>> [round(pair[key], 4) for pair in local_exponents(rows) for key in ("sampled", "L_ln_L", "L_ln2_L")]
    [1.355, 1.355, 1.7099]
    >>> rows[0]["sampled"]["bracket"], rows[1]["sampled"]["bracket"] = [80, 100], [200, 260]
    >>> [round(end, 3) for end in local_exponents(rows)[0]["range"]]
    [1.0, 1.7]
    """
    measured = [row for row in rows if row["sampled"] is not None]
    exponents = []
    for low, high in zip(measured, measured[1:]):
        span = math.log(high["L"] / low["L"])

        def exponent(law: Callable[[int], float]) -> float:
            return math.log(law(high["L"]) / law(low["L"])) / span

        pair = {"L": [low["L"], high["L"]], "sampled": math.log(high["sampled"]["value"] / low["sampled"]["value"]) / span}
        if "bracket" in low["sampled"] and "bracket" in high["sampled"]:
            (low_P, high_P), (low_Q, high_Q) = low["sampled"]["bracket"], high["sampled"]["bracket"]
            pair["range"] = [math.log(low_Q / high_P) / span, math.log(high_Q / low_P) / span]
        pair.update(L_ln2_L=exponent(lambda L: L * math.log(L) ** 2), L_ln_L=exponent(lambda L: L * math.log(L)))
        exponents.append(pair)
    return exponents


def study_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    r"""Across the rows with a sampled :math:`P^*`: :math:`P^*/(L\ln^2 L)` and :math:`P^*/(L\ln L)` (min, max,
    relative spread), the local exponents (:func:`local_exponents`) and the sampled/saddle ratio against L;
    ``sizes_measured`` counts them."""
    measured = [row for row in rows if row["sampled"] is not None]
    ratios = [row["law_ratio"]["sampled"] for row in measured]
    summary: dict[str, Any] = {"sizes_measured": len(measured), "sizes": len(rows)}
    if ratios:
        summary["law_ratio_sampled"] = _spread(ratios)
        summary["L_ln_L_ratio_sampled"] = _spread([row["sampled"]["value"] / (row["L"] * math.log(row["L"]))
                                                   for row in measured])
        summary["local_exponents"] = local_exponents(rows)
        summary["sampled_over_saddle"] = {row["L"]: row["sampled_over_saddle"] for row in measured}
    return summary


GRID_KEY = "P"
"""The key of a size's own settings (``per_size``) that holds its starting P grid; every other key is a sampler
setting."""


def size_settings(L: int, settings: dict[str, Any], per_size: dict[int, dict[str, Any]] | None
                  ) -> tuple[dict[str, Any], list[int] | None]:
    """The sampler settings and the starting grid of size ``L``: ``settings`` with ``per_size[L]``'s sampler fields
    in their place, and ``per_size[L]["P"]`` (``None``: the default grid around the posterior theory's P*).

    >>> size_settings(16, {"kappa": 200.0, "draws": 400}, {16: {"kappa": 800.0, "P": [520, 570]}})
    ({'kappa': 800.0, 'draws': 400}, [520, 570])
    >>> size_settings(8, {"kappa": 200.0}, {16: {"kappa": 800.0}})
    ({'kappa': 200.0}, None)
    """
    own = dict((per_size or {}).get(L, {}))
    grid = own.pop(GRID_KEY, None)
    return {**settings, **own}, None if grid is None else sorted(int(P) for P in grid)


def run_posterior_study(sizes: Sequence[int], V: int, convention, settings: dict[str, Any], *, out: str,
                        executor=None, seed: int = 0, theory_draws: int | None = None, progress: bool = True,
                        extensions: int = DEFAULT_EXTENSIONS, per_size: dict[int, dict[str, Any]] | None = None,
                        validate: Callable[..., dict[str, Any]] | None = None) -> dict[str, Any]:
    """The study over ``sizes`` (each L's validation in ``out/L{L}``, resumable): ``{"rows", "summary"}``.

    ``per_size``: for some L, sampler settings that replace those of ``settings`` at that L and optionally its
    starting grid ``"P"`` (:func:`size_settings`).  ``validate``: :func:`run_posterior_validation` where ``None``
    (a test passes a stand-in with its signature).
    """
    validate = validate or run_posterior_validation
    rows = []
    for L in sizes:
        common = {"out": os.path.join(out, f"L{L}"), "executor": executor, "seed": seed,
                  "theory_draws": theory_draws, "progress": progress}
        chosen, grid = size_settings(L, settings, per_size)
        report = validate("softmax", L, V, grid, "umbrella", convention, chosen, **common)
        done = 0
        while done < extensions and (side := missing_side(report["measured"])) is not None:
            grid = extended_grid(report["measured"]["P"], side)
            report = validate("softmax", L, V, grid, "umbrella", convention, chosen, **common,
                              theory_P_star=report["predicted"]["P_star"])  # scanned once per L
            done += 1
        rows.append(study_row(L, report, done))
    return {"rows": rows, "summary": study_summary(rows)}


SOURCE_KEYS = ("command", "created", "commit", "seed", "config", "versions")
"""What a row built from saved records keeps of each record's provenance (``commit``: ``None`` where the record
does not say it)."""


def merged_points(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    r"""The points of several validation records of one size, by P: a later record's point replaces one that is
    missing or did not converge, never a converged one.  Each point: ``P``, ``delta_F``, ``delta_F_error``,
    ``converged`` and ``source`` (the index of its record).

    >>> first = {"measured": {"P": [10, 20], "delta_F": [1.0, -2.0], "delta_F_error": [0.1, 0.1],
    ...                       "converged": [True, False]}}
    >>> again = {"measured": {"P": [10, 20], "delta_F": [1.5, -2.5], "delta_F_error": [0.1, 0.1],
    ...                       "converged": [True, True]}}
    >>> [(point["delta_F"], point["source"]) for point in merged_points([first, again])]
    [(1.0, 0), (-2.5, 1)]
    """
    points: dict[int, dict[str, Any]] = {}
    for source, record in enumerate(records):
        measured = record["measured"]
        for i, P in enumerate(measured["P"]):
            if P not in points or not points[P]["converged"]:
                points[P] = {"P": int(P), "delta_F": measured["delta_F"][i], "delta_F_error": measured["delta_F_error"][i],
                             "converged": bool(measured["converged"][i]), "source": source}
    return [points[P] for P in sorted(points)]


def _shared_value(L: int, records: Sequence[dict[str, Any]], part: str) -> float | None:
    """``record[part]["P_star"]``, the same in every record of size ``L`` (to 1e-9 relative), else ``ValueError``."""
    values = [record[part]["P_star"] for record in records]
    first = values[0]
    if any((value is None) != (first is None) or (first is not None and not math.isclose(value, first, rel_tol=1e-9))
           for value in values):
        raise ValueError(f"the records of L = {L} disagree on {part} P*: {values}")
    return first


def record_source(record: dict[str, Any]) -> dict[str, Any]:
    """The provenance a study row keeps of one record (:data:`SOURCE_KEYS`)."""
    return {key: record["provenance"].get(key) for key in SOURCE_KEYS}


def rows_from_records(records: Sequence[dict[str, Any]], theory: dict[int, dict[str, Any]] | None = None
                      ) -> dict[str, Any]:
    r"""The study (``{"rows", "summary"}``, :func:`study_row`, :func:`study_summary`) from saved umbrella validation
    records (each with ``measured``, ``saddle``, ``predicted`` and ``provenance``, whose ``config`` names ``L``)
    instead of new sampling.  Records of one L are merged point by point in the order given
    (:func:`merged_points`), and the sampled :math:`P^*` is measured again on the merged converged points
    (:func:`~emergence.validation.copy_task.posterior_free_energy.measured_P_star`).  Each row adds ``points``
    (the merged points) and ``sources`` (:func:`record_source`, in the order of the points' ``source``); its
    ``extensions`` is 0 (none were run).  Records of one L that disagree on the saddle's or the theory's
    :math:`P^*` are a ``ValueError``.  ``theory``: where given, ``{L: {"P_star", "trial", "source"}}``, the theory's
    :math:`P^*` computed again (another trial than the records'), which replaces the records' in the row's ``theory``,
    ``theory_over_sampled`` and ``law_ratio``; the row says so in ``theory_trial`` and ``theory_source``.
    """
    by_size: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        by_size.setdefault(int(record["provenance"]["config"]["L"]), []).append(record)
    rows = []
    for L in sorted(by_size):
        points = merged_points(by_size[L])
        P, converged = [point["P"] for point in points], [point["converged"] for point in points]
        measured = {"P": P, "converged": converged,
                    "P_star": measured_P_star(P, [point["delta_F"] for point in points],
                                              [point["delta_F_error"] for point in points], converged)}
        recorded = _shared_value(L, by_size[L], "predicted")
        report = {"measured": measured, "saddle": {"P_star": _shared_value(L, by_size[L], "saddle")},
                  "predicted": {"P_star": recorded if theory is None else theory[L]["P_star"]}}
        again = {} if theory is None else {"theory_trial": theory[L]["trial"], "theory_source": theory[L]["source"],
                                           "theory_recorded": recorded}
        rows.append(study_row(L, report, 0) | again | {"points": points,
                                                       "sources": [record_source(r) for r in by_size[L]]})
    return {"rows": rows, "summary": study_summary(rows)}
