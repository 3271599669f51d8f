r"""Transitions read off measured order-parameter curves, and the agreement with the theory.

Measured transition points on a grid :math:`P_1 < P_2 < \dots` (geometric midpoints of the
grid interval where the named change happens):

* softmax ``P_star``: the interval with the largest increase of :math:`a_G`, when that increase
  is at least :data:`SIGNIFICANT_CHANGE` (a drift of a few thousandths is no jump);
* linear ``P1``: the first interval where :math:`c_1` rises above ``threshold`` (0.1) of its
  largest value, when that value is at least :data:`SIGNIFICANT_CHANGE`;
* linear ``crossover``: the interval of steepest rise of :math:`c_G` (the copy-mode onset).

Agreement: for each transition both sides give, the ratio measured/predicted and whether
it lies within a factor of 2; plus the RMS difference of the order parameters over the
grid (theory interpolated linearly in :math:`\ln P`).  For softmax Adam sweeps, the
hysteresis test: each grid point is "two minima" (some seed has both starts converged to
different states), "one minimum" (every seed's starts converged to the same state) or
"undecided"; the measurement matches the predicted spinodal window when some point inside
it has two minima, no point inside it has one, and no point outside it has two.

>>> transitions = measured_transitions("softmax", [10, 20, 40, 80], {"aG": [0.01, 0.02, 0.3, 0.35]})
>>> round(transitions["P_star"], 3)
28.284
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

AGREEMENT_FACTOR = 2.0
SIGNIFICANT_CHANGE = 0.05
"""Smallest jump of :math:`a_G` (softmax) or largest :math:`c_1` (linear) read as a transition; the
same size as the order-parameter difference that makes a start metastable."""


def _midpoint(P: Sequence[float], i: int) -> float:
    return float(math.sqrt(P[i] * P[i + 1]))


def measured_transitions(attention: str, P: Sequence[float], curves: dict, threshold: float = 0.1) -> dict:
    """``{"P_star": ...}`` for softmax, ``{"P1": ..., "crossover": ...}`` for linear (None if absent)."""
    if len(P) < 2:
        return {"P_star": None} if attention == "softmax" else {"P1": None, "crossover": None}
    if attention == "softmax":
        rises = np.diff(np.asarray(curves["aG"], dtype=float))
        return {"P_star": _midpoint(P, int(np.argmax(rises))) if rises.max() >= SIGNIFICANT_CHANGE else None}
    c1 = np.asarray(curves["c1"], dtype=float)
    cG = np.asarray(curves["cG"], dtype=float)
    above = np.nonzero(c1 > threshold * max(c1.max(), 1e-12))[0]
    P1 = _midpoint(P, int(above[0]) - 1) if above.size and above[0] > 0 and c1.max() >= SIGNIFICANT_CHANGE else None
    rises = np.diff(cG)
    crossover = _midpoint(P, int(np.argmax(rises))) if rises.max() > 0 else None
    return {"P1": P1, "crossover": crossover}


def measured_curves(attention: str, optimizer: str, P: Sequence[float], results: Sequence[dict]) -> dict:
    """The ``measured`` record of a sweep from its per-point summaries (:func:`~emergence.validation.copy_task.experiment.run_copy_point`).

    Keys: ``P``; ``c1, cG, aG, coverage, loss`` each as ``*_mean`` and ``*_std``; for Adam the
    converged, all-converged, metastable and bistable fractions and ``aG``/``cG`` per start;
    and the transitions of :func:`measured_transitions`.
    """
    measured: dict = {"P": list(P)}
    for key, name in (("c1", "c1"), ("cG", "cG"), ("aG", "aG"), ("coverage", "coverage"), ("test_loss", "loss")):
        measured[f"{name}_mean"] = [r[f"{key}_mean"] for r in results]
        measured[f"{name}_std"] = [r[f"{key}_std"] for r in results]
    if optimizer == "adam":
        for fraction in ("converged", "all_converged", "metastable", "bistable"):
            measured[f"{fraction}_fraction"] = [r[f"{fraction}_fraction"] for r in results]
        for start in ("uniform", "copy"):
            measured[f"aG_{start}_mean"] = [r[f"aG_{start}_mean"] for r in results]
            measured[f"cG_{start}_mean"] = [r[f"cG_{start}_mean"] for r in results]
    measured.update(measured_transitions(
        attention, measured["P"], {"c1": measured["c1_mean"], "cG": measured["cG_mean"], "aG": measured["aG_mean"]}
    ))
    return measured


def hysteresis(measured: dict, window: Sequence[float]) -> dict:
    """Two minima inside the predicted metastable ``window``, one outside? (see the module docstring)."""
    low, high = window
    points = []
    for P, bistable, settled in zip(measured["P"], measured["bistable_fraction"], measured["all_converged_fraction"]):
        state = "two minima" if bistable > 0 else "one minimum" if settled == 1 else "undecided"
        points.append({"P": P, "inside_window": bool(low <= P <= high), "state": state})
    inside = [p["state"] for p in points if p["inside_window"]]
    outside = [p["state"] for p in points if not p["inside_window"]]
    bistable = [p["P"] for p in points if p["state"] == "two minima"]
    return {
        "window": [low, high],
        "measured_two_minima": [min(bistable), max(bistable)] if bistable else None,
        "points": points,
        "matches": bool("two minima" in inside and "one minimum" not in inside and "two minima" not in outside),
    }


def agreement(attention: str, measured: dict, predicted: dict | None) -> dict:
    """The stated metric: transition ratios (within a factor 2?) and order-parameter RMS."""
    metric = (
        "ratio measured/predicted for each transition (passes when within a factor of "
        f"{AGREEMENT_FACTOR:g}); RMS of measured minus predicted order parameters over the P grid"
    )
    if predicted is None:
        return {"metric": metric, "available": False}
    names = ("P_star",) if attention == "softmax" else ("P1", "crossover")
    ratios, within = {}, {}
    for name in names:
        m, p = measured.get(name), predicted["transitions"].get(name)
        if m is None or p is None:
            ratios[name], within[name] = None, None
            continue
        ratios[name] = m / p
        within[name] = bool(1 / AGREEMENT_FACTOR <= m / p <= AGREEMENT_FACTOR)
    log_grid = np.log(np.asarray(predicted["P"], dtype=float))
    rms = {}
    for key in ("c1", "cG"):
        theory = np.interp(np.log(np.asarray(measured["P"], dtype=float)), log_grid, np.asarray(predicted[key], dtype=float))
        rms[key] = float(np.sqrt(np.mean((np.asarray(measured[f"{key}_mean"]) - theory) ** 2)))
    result = {
        "metric": metric,
        "available": True,
        "ratios": ratios,
        "within_factor": within,
        "order_parameter_rms": rms,
        "passes": bool(all(v for v in within.values() if v is not None) and any(v is not None for v in within.values())),
    }
    window = predicted["transitions"].get("spinodals")
    if attention == "softmax" and window and "bistable_fraction" in measured:
        result["hysteresis"] = hysteresis(measured, window)
    return result
