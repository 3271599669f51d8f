r"""Transitions read off measured order-parameter curves, and verdicts against the theory that can fail.

**Convergence.**  A grid point enters the analysis only when it converged:

* Adam: every seed's global MAP (the start kept for that seed) passed the convergence filter of
  :func:`~emergence.validation.copy_task.training.train_map`;
* SGLD: the chains from the uniform and the copy start mixed: for :math:`c_1` and :math:`c_G` the
  two per-start posterior means differ by at most :math:`\max(\delta, 4\,\mathrm{SE})`, with
  :math:`\delta` = :data:`SIGNIFICANT_CHANGE` and SE the standard error of the pooled mean.

Non-converged points are listed (``nonconverged_P``) and excluded from the transitions and the
comparison.

**Measured transitions** on the converged grid :math:`P_1 < P_2 < \dots` are grid *brackets*
:math:`[P_i, P_{i+1}]`, never a point value finer than the grid resolves, and are reported only
when the order parameter changes by at least :math:`\delta` = :data:`SIGNIFICANT_CHANGE`:

* softmax ``P_star``: the interval with the largest increase of :math:`a_G`, when that single
  increase is at least :math:`\delta` (a first-order jump; a drift of a few thousandths is none);
* linear ``P1``: the interval where :math:`c_1` first departs from zero by :math:`\delta`
  (:math:`c_1(P_i) < \delta \le c_1(P_{i+1})`).  The criterion does not depend on how far the grid
  reaches (an earlier one, "10 % of the largest :math:`c_1` on the grid", moved with the grid's end).
  Above a square-root onset :math:`c_1 = A\sqrt{P - P_1}` the point :math:`c_1 = \delta` lies
  :math:`(\delta/A)^2` above :math:`P_1` (0.2 sequences at L = 32, V = 8, where A ≈ 0.12), far
  inside any bracket;
* softmax ``onset``: the interval of steepest rise of :math:`a_G` in :math:`\ln P`, read like the linear
  ``crossover`` below (the same criteria).  For softmax attention :math:`c_1 = 1 - c_G`, so
  :math:`a_G = 1/L + (1 - 1/L)\,c_G` rises most steeply where :math:`c_G` does: the theory's onset
  (:func:`~emergence.numerics.copy_head.crossover.copy_onset`) is the same point;
* linear ``crossover``: the interval of steepest rise of :math:`c_G` in :math:`\ln P`,
  :math:`\max_i [c_G(P_{i+1}) - c_G(P_i)]/\ln(P_{i+1}/P_i)` (the copy-mode onset, as the theory
  defines it), when :math:`c_G` rises by at least :math:`\delta` across the grid
  (:math:`\max_{i<j} c_G(P_j) - c_G(P_i) \ge \delta`) and the steepest interval is not the grid's
  last (there the slope may still grow beyond the grid, as the theory's own onset refuses a maximum
  on its grid's edge; the entry then carries ``last_interval``, and :func:`next_bisection` extends the
  grid by one step).

Besides the bracket, :func:`onset_fit` fits the theory's onset law :math:`c_1^{1/\beta} = a(P - P_1)`
(:math:`\beta` the theory's critical exponent, 1/2 in the Landau expansion) to the converged points
just above the measured onset: a point value of :math:`P_1` that does not depend on the grid's
spacing, compared with the prediction like a bracket of width zero.

Each transition record says why it is absent when it is (``note``).

**Verdict kind** (:func:`verdict_kind`, reported as ``verdict_kind``): linear attention is judged on its
second-order point and crossover (``second_order_onset``); softmax attention on its first-order jump
(``first_order_jump``) unless the prediction's copy head switches on continuously (``transition_type``
``continuous`` with an ``onset``, as for correlated or skewed token processes): then on the onset
(``continuous_onset``).

**Agreement** with a predicted transition :math:`P_{th}` (factor :math:`F` = :data:`AGREEMENT_FACTOR`):
the measured bracket gives the ratio range :math:`[P_i/P_{th}, P_{i+1}/P_{th}]`, which is

* ``within``: entirely inside :math:`[1/F, F]`;  ``outside``: entirely outside it;
* ``unresolved``: straddling a bound (not shown to lie within it; bisection narrows the bracket);
* ``missing``: predicted inside the converged grid but not measured;
* ``unexpected``: measured but not predicted;
* ``beyond grid``: predicted outside the converged grid and not measured (untested);
* ``absent``: neither predicted nor measured (untested).

``passes`` holds when every point converged (a non-converged point is excluded from the transitions
but fails the verdict: missing data is a failure; so does a measurement without its per-point
convergence record), at least two points converged, and every transition of the attention is
``within``: an untested transition (``beyond grid``, ``absent``) fails like a wrong one.  For a linear
sweep the fitted :math:`P_1` (:func:`onset_fit`) must lie within the factor too.
For a softmax sweep against a continuous onset it needs, besides the measured onset within the factor
(the tolerance of the linear transitions),

* the grid of a jump verdict spanning :math:`[P_{\rm onset}/3, 3P_{\rm onset}]` (:func:`grid_coverage`),
  so that the steepest rise is read with room on both sides;
* for Adam, no point with two minima (:func:`hysteresis` with no window): a measured first-order jump
  with its metastable window does not pass a continuous prediction.  Without two starts (SGLD) a
  measured jump is not told from a steep continuous rise.

For a softmax sweep against a predicted :math:`P^*` it needs, besides,

* a grid of at least :data:`GRID_POINTS` points spanning :math:`[P^*/3, 3P^*]`
  (:data:`GRID_SPAN`; :func:`grid_coverage`), so that a jump anywhere within a factor 3 is seen;
* the landing of the jump (:func:`jump_landing`): the measured :math:`a_G` at the first converged
  point above the measured bracket within :data:`LANDING_TOLERANCE` of the theory's :math:`a_G` just
  above its :math:`P^*` (before and after are reported with the copy fraction :math:`\cos^2(A, S)`);
* for Adam, hysteresis inside the predicted spinodal window: some point inside it has two minima
  (a window outside the theory's grid leaves it untested, which fails).

The reasons for a failure are listed (``reasons``).  The RMS difference of the order parameters over the converged grid (theory
interpolated linearly in :math:`\ln P`) is reported alongside.  For softmax Adam sweeps, the
hysteresis test: each grid point is "two minima" (some seed has both starts converged to
different states), "one minimum" (every seed's starts converged to the same state) or
"undecided"; the measurement matches the predicted spinodal window when some point inside it has
two minima, no point inside it has one, and no point outside it has two.

**Bisection.**  After the grid, the softmax jump is narrowed by running the geometric midpoint of its
bracket (:func:`bisection_point`) and re-reading the bracket from all converged points; the measured
:math:`P^*` is that final bracket, quoted as the bracket (:func:`quote_bracket`), never as a point.
A linear transition is bisected the same way while its bracket straddles a bound of the factor
(:func:`next_bisection`): until the bracket decides, or until no whole number of sequences lies
inside it (the stated resolution: one sequence).
The jump is read off the global MAP (the start with the lower action), so it is the coexistence point
:math:`P^*`; the uniform start jumps later (at the upper spinodal) and the copy start falls earlier
(at the lower spinodal): those are the hysteresis.

>>> transitions = measured_transitions("softmax", [10, 20, 40, 80], {"aG": [0.01, 0.02, 0.3, 0.35]})
>>> transitions["P_star"]["bracket"]
[20, 40]
>>> measured_transitions("linear", [8, 16, 32], {"c1": [0, 0, 0], "cG": [1.0, 1.0, 1.0]})["crossover"]["bracket"] is None
True
>>> measured_transitions("linear", [8, 16, 32, 64], {"c1": [0, 0.01, 0.3, 0.5], "cG": [0, 0, 0, 0]})["P1"]["bracket"]
[16, 32]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

AGREEMENT_FACTOR = 2.0
GRID_POINTS = 8
"""Fewest grid points of a softmax sweep whose verdict can pass."""
GRID_SPAN = 3.0
"""A softmax sweep's grid must reach from P*/GRID_SPAN to GRID_SPAN·P* (the predicted P*)."""
LANDING_TOLERANCE = 0.1
"""Largest difference between the measured and the predicted :math:`a_G` just after the jump."""
SIGNIFICANT_CHANGE = 0.05
"""Smallest change of an order parameter read as a transition (and the largest disagreement of the
two SGLD starts read as mixing); the same size as the order-parameter difference that makes a start
metastable."""

LINEAR_SPAN = AGREEMENT_FACTOR
r"""A default linear grid reaches from :math:`P_1/2` to :math:`2P_1` and from :math:`P_G/2` to :math:`2P_G`
(:func:`linear_grid`): a transition anywhere within the agreement factor lies inside it."""
LINEAR_POINTS = 5
"""Points of a default linear grid per transition (a spacing of 4^(1/4) = 1.41 in P)."""
FIT_POINTS = 3
"""Most points above the measured onset that :func:`onset_fit` uses."""
FIT_SHARE = 0.6
r""":func:`onset_fit` keeps points with :math:`c_1` below this share of its largest value (the onset
law holds near :math:`P_1`; far above it :math:`c_1` saturates)."""

TRANSITION_NAMES = {"softmax": ("P_star", "onset"), "linear": ("P1", "crossover")}
"""The transitions read off a measured sweep of each attention."""
VERDICT_TRANSITIONS = {"first_order_jump": ("P_star",), "continuous_onset": ("onset",),
                       "second_order_onset": ("P1", "crossover")}
"""The transitions each kind of verdict compares with the prediction."""

COVERAGE_THRESHOLD = 0.5
"""The two order parameters capture most of a trained attention pattern when the coverage (the share of the
attention matrix in span{J, S}) at the largest P is at least this."""


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def quote_bracket(bracket: Sequence[float] | None) -> str:
    """A measured transition as the grid resolves it: ``"256–512"`` (``"—"`` when absent).

    >>> quote_bracket([256, 512])
    '256–512'
    """
    return "—" if bracket is None else f"{_number(bracket[0])}–{_number(bracket[1])}"


def _bracket(P: Sequence[float], i: int, rise: float, note: str) -> dict:
    return {"bracket": [P[i], P[i + 1]], "rise": float(rise), "note": note}


def _absent(note: str) -> dict:
    return {"bracket": None, "rise": None, "note": note}


def _largest_rise(values: np.ndarray) -> float:
    r""":math:`\max_{i<j} (x_j - x_i)`, the largest increase anywhere along the grid (0 if none)."""
    return float(max((values[j] - values[:j].min() for j in range(1, len(values))), default=0.0))


def _jump(P, aG: np.ndarray) -> dict:
    rises = np.diff(aG)
    i = int(np.argmax(rises))
    if rises[i] < SIGNIFICANT_CHANGE:
        return _absent(f"a_G never jumps by {SIGNIFICANT_CHANGE:g} between neighbouring points "
                       f"(largest step {rises[i]:.2g})")
    return _bracket(P, i, rises[i], f"a_G jumps by {rises[i]:.2g} between P = {P[i]:g} and {P[i + 1]:g}")


def _second_order_point(P, c1: np.ndarray) -> dict:
    above = np.nonzero(c1 >= SIGNIFICANT_CHANGE)[0]
    if len(above) == 0:
        return _absent(f"c1 stays below {SIGNIFICANT_CHANGE:g} on the grid (largest {c1.max():.2g})")
    first = int(above[0])
    if first == 0:
        return _absent(f"c1 is already {c1[0]:.2g} (at least {SIGNIFICANT_CHANGE:g}) at the smallest P: the "
                       "transition lies below the grid")
    rise = float(c1[first] - c1[:first].min())
    return _bracket(P, first - 1, rise, f"c1 departs from zero (reaches {SIGNIFICANT_CHANGE:g}) between "
                                        f"P = {P[first - 1]:g} and {P[first]:g}")


def _onset(P, values: np.ndarray, name: str = "c_G") -> dict:
    """The copy onset: steepest rise in ln P of the order parameter ``name`` (``values`` on ``P``)."""
    rise = _largest_rise(values)
    if rise < SIGNIFICANT_CHANGE:
        return _absent(f"{name} rises by only {rise:.2g} across the grid (needs {SIGNIFICANT_CHANGE:g}; "
                       f"{name} between {values.min():.2g} and {values.max():.2g}): no copy onset inside the grid")
    i = int(np.argmax(np.diff(values) / np.diff(np.log(np.asarray(P, dtype=float)))))
    if i == len(P) - 2 and len(P) > 2:
        return _absent(f"{name} rises by {rise:.2g} but most steeply on the grid's last interval (P = {P[i]:g} to "
                       f"{P[i + 1]:g}): the copy onset may lie beyond the grid") | {"last_interval": [P[i], P[i + 1]]}
    return _bracket(P, i, rise, f"{name} rises by {rise:.2g} across the grid, steepest in ln P between "
                                f"P = {P[i]:g} and {P[i + 1]:g}")


def onset_fit(P: Sequence[float], c1: Sequence[float], bracket: Sequence[float] | None, beta: float | None) -> dict:
    r"""The onset law :math:`c_1 = [a(P - P_1)]^{\beta}` fitted above the measured onset: a point :math:`P_1`.

    With :math:`y = c_1^{1/\beta}` the law is the line :math:`y = a(P - P_1)`; least squares on the
    converged points from the top of the measured ``bracket`` up to the largest :math:`c_1` (the rising
    branch: far above the onset the copy mode takes over and :math:`c_1` falls again), at most
    :data:`FIT_POINTS` of them and only those with :math:`c_1` below :data:`FIT_SHARE` of its largest
    value (at least the first two), give
    :math:`P_1 = \bar P - \bar y/a`.  ``P1`` is None, with a ``note``, without a bracket, without
    :math:`\beta`, with fewer than two points or a slope that is not positive.

    >>> fit = onset_fit([50, 100, 110, 140], [0, 0, 0.5 * 10 ** 0.5, 0.5 * 40 ** 0.5], [100, 110], 0.5)
    >>> round(fit["P1"], 9), fit["points"]
    (100.0, [110, 140])
    """
    if bracket is None or beta is None:
        return {"P1": None, "points": [], "beta": beta,
                "note": "no measured onset to fit" if bracket is None else "the theory gives no critical exponent"}
    P, c1 = np.asarray(P, dtype=float), np.asarray(c1, dtype=float)
    above = np.nonzero((P >= bracket[1]) & (np.arange(len(P)) <= np.argmax(c1)))[0]  # the rising branch
    small = [int(i) for i in above if c1[i] < FIT_SHARE * c1.max()]
    chosen = (small if len(small) >= 2 else [int(i) for i in above[:2]])[:FIT_POINTS]
    if len(chosen) < 2:
        return {"P1": None, "points": [float(P[i]) for i in chosen], "beta": beta,
                "note": "the fit needs two converged points above the onset"}
    x, y = P[chosen], np.clip(c1[chosen], 0.0, None) ** (1.0 / beta)
    slope = float(np.polyfit(x, y, 1)[0])
    if slope <= 0:
        return {"P1": None, "points": x.tolist(), "beta": beta,
                "note": f"c1^(1/beta) does not rise above the onset (slope {slope:.2g})"}
    P1 = float(x.mean() - y.mean() / slope)
    return {"P1": P1, "points": [int(p) if float(p).is_integer() else float(p) for p in x], "beta": beta,
            "note": f"c1^(1/{beta:.3g}) linear in P on P = {', '.join(f'{p:g}' for p in x)}: P1 = {P1:.4g}"}


def measured_transitions(attention: str, P: Sequence[float], curves: dict) -> dict:
    """Each transition of ``attention`` (:data:`TRANSITION_NAMES`) as ``{"bracket": [P_i, P_i+1] | None, "rise",
    "note"}`` (see module docstring).

    ``P`` must be increasing; ``curves`` holds ``aG`` (softmax) or ``c1`` and ``cG`` (linear) on it.
    """
    names = TRANSITION_NAMES[attention]
    if len(P) < 2:
        return {name: _absent(f"{len(P)} converged grid point(s): a transition needs at least 2") for name in names}
    if attention == "softmax":
        aG = np.asarray(curves["aG"], dtype=float)
        return {"P_star": _jump(P, aG), "onset": _onset(P, aG, "a_G")}
    return {
        "P1": _second_order_point(P, np.asarray(curves["c1"], dtype=float)),
        "crossover": _onset(P, np.asarray(curves["cG"], dtype=float)),
    }


def point_converged(optimizer: str, result: dict) -> bool:
    """Whether one sweep point's summary converged (Adam: every seed's kept start; SGLD: the starts mixed)."""
    if optimizer == "adam":
        return all(entry[entry["global_start"]]["converged"] for entry in result["per_seed"])
    return all(
        abs(result[f"{key}_uniform_mean"] - result[f"{key}_copy_mean"])
        <= max(SIGNIFICANT_CHANGE, 4 * result.get(f"{key}_sem", 0.0))
        for key in ("c1", "cG")
    )


def measured_curves(attention: str, optimizer: str, P: Sequence[float], results: Sequence[dict]) -> dict:
    """The ``measured`` record of a sweep from its per-point summaries (:func:`~emergence.validation.copy_task.experiment.run_copy_point`).

    Keys: ``P``; ``c1, cG, aG, coverage, loss`` each as ``*_mean`` and ``*_std``; ``converged`` per
    point and ``nonconverged_P``; for Adam the converged, all-converged, metastable and bistable
    fractions and ``aG``/``cG`` per start; and the transitions of :func:`measured_transitions` read
    off the converged points.
    """
    measured: dict = {"P": list(P)}
    for key, name in (("c1", "c1"), ("cG", "cG"), ("aG", "aG"), ("coverage", "coverage"),
                      ("copy_fraction", "copy_fraction"), ("test_loss", "loss")):
        measured[f"{name}_mean"] = [r[f"{key}_mean"] for r in results]
        measured[f"{name}_std"] = [r[f"{key}_std"] for r in results]
    if optimizer == "adam":
        for fraction in ("converged", "all_converged", "metastable", "bistable"):
            measured[f"{fraction}_fraction"] = [r[f"{fraction}_fraction"] for r in results]
        for start in ("uniform", "copy"):
            measured[f"aG_{start}_mean"] = [r[f"aG_{start}_mean"] for r in results]
            for key in ("cG", "copy_fraction"):
                measured[f"{key}_{start}_mean"] = [r[f"{key}_{start}_mean"] for r in results]
    measured["converged"] = [bool(point_converged(optimizer, r)) for r in results]
    measured["convergence_criterion"] = (
        "every seed's kept Adam start passed the gradient and flatness filter" if optimizer == "adam" else
        f"SGLD chains from both starts agree on c1 and c_G within max({SIGNIFICANT_CHANGE:g}, 4 standard errors)"
    )
    measured["nonconverged_P"] = [p for p, ok in zip(P, measured["converged"]) if not ok]
    kept = [i for i, ok in enumerate(measured["converged"]) if ok]
    measured.update(measured_transitions(
        attention, [P[i] for i in kept],
        {key: [measured[f"{key}_mean"][i] for i in kept] for key in ("c1", "cG", "aG")},
    ))
    return measured


def hysteresis(measured: dict, window: Sequence[float] | None) -> dict:
    """Two minima inside the predicted metastable ``window``, one outside? (see the module docstring).

    ``inside``: some point inside the window has two minima (hysteresis where predicted); ``matches``:
    besides, no point inside it has one minimum and no point outside it has two.  ``window`` None: the
    theory predicts no metastable window (a continuous onset), every point lies outside it, and
    ``matches`` holds when no point has two minima.
    """
    low, high = (np.inf, -np.inf) if window is None else window
    points = []
    for P, bistable, settled in zip(measured["P"], measured["bistable_fraction"], measured["all_converged_fraction"]):
        state = "two minima" if bistable > 0 else "one minimum" if settled == 1 else "undecided"
        points.append({"P": P, "inside_window": bool(low <= P <= high), "state": state})
    inside = [p["state"] for p in points if p["inside_window"]]
    outside = [p["state"] for p in points if not p["inside_window"]]
    bistable = [p["P"] for p in points if p["state"] == "two minima"]
    expected_inside = window is not None and "two minima" in inside and "one minimum" not in inside
    return {
        "window": None if window is None else [low, high],
        "measured_two_minima": [min(bistable), max(bistable)] if bistable else None,
        "two_minima_P": bistable,
        "points": points,
        "inside": "two minima" in inside,
        "matches": bool((window is None or expected_inside) and "two minima" not in outside),
    }


def bisection_point(bracket: Sequence[float] | None) -> int | None:
    """The next ``P`` inside a measured bracket: its geometric midpoint, rounded to whole sequences.

    ``None`` when there is no bracket or no whole number lies strictly inside it.

    >>> bisection_point([818, 1120]), bisection_point([10, 11]), bisection_point(None)
    (957, None, None)
    """
    if bracket is None:
        return None
    low, high = bracket
    middle = int(round(float(np.sqrt(low * high))))
    return middle if low < middle < high else None


def grid_around(P_star: float, points: int = GRID_POINTS) -> list[int]:
    r"""``points`` whole numbers of sequences, log-spaced from :math:`\lfloor P^*/3 \rfloor` to :math:`\lceil 3P^* \rceil`.

    >>> grid_around(957.1)
    [319, 437, 598, 818, 1120, 1533, 2098, 2872]
    """
    low, high = int(np.floor(P_star / GRID_SPAN)), int(np.ceil(P_star * GRID_SPAN))
    return sorted({int(round(P)) for P in np.geomspace(low, high, points)})


def linear_grid(P1: float, crossover: float, points: int = LINEAR_POINTS) -> list[int]:
    r"""Whole numbers of sequences, ``points`` log-spaced over :math:`[P_1/2, 2P_1]` and as many over
    :math:`[P_G/2, 2P_G]` (:data:`LINEAR_SPAN`), around the predicted second-order point and crossover.

    >>> linear_grid(102.8, 605.7)
    [51, 73, 103, 145, 206, 303, 428, 606, 857, 1211]
    """
    spans = [np.geomspace(P / LINEAR_SPAN, P * LINEAR_SPAN, points) for P in (P1, crossover)]
    return sorted({max(1, int(round(P))) for P in np.concatenate(spans)})


def next_bisection(attention: str, measured: dict, predicted: dict | None, grid: Sequence[float]) -> int | None:
    """The next point to run: inside a measured bracket (:func:`bisection_point`) or one grid step beyond the
    grid (:func:`extension_point`); None when none is needed.

    Softmax judged on its jump (:func:`verdict_kind`): inside the jump's bracket, always (narrowing
    :math:`P^*`).  Linear, and softmax judged on a continuous onset: inside the first transition whose
    bracket straddles a bound of the agreement factor (``unresolved`` against ``predicted``), so the sweep
    stops bisecting once each bracket decides, or when no whole number is left inside the bracket (the
    resolution of one sequence); and beyond the grid where a transition's steepest rise lies on the grid's
    last interval (``last_interval``: the onset may lie further up) while that interval still starts within
    the agreement factor of the prediction (above it the transition is outside the factor whatever lies beyond).
    """
    kind = verdict_kind(attention, predicted)
    if kind == "first_order_jump":
        candidates = [bisection_point((measured.get("P_star") or {}).get("bracket"))]
    elif predicted is None:
        return None
    else:
        candidates = [_next_point(measured.get(name) or {}, predicted["transitions"].get(name), grid)
                      for name in VERDICT_TRANSITIONS[kind]]
    for P in candidates:
        if P is not None and P not in grid:
            return P
    return None


def _next_point(entry: dict, predicted: float | None, grid: Sequence[float]) -> int | None:
    """The point that decides one measured transition ``entry`` against ``predicted``, or None."""
    status = compare_transition(entry.get("bracket"), predicted, grid)["status"]
    if status == "unresolved":
        return bisection_point(entry.get("bracket"))
    edge = entry.get("last_interval")
    if status == "missing" and edge is not None and edge[0] <= AGREEMENT_FACTOR * predicted:
        return extension_point(edge)
    return None


def extension_point(interval: Sequence[float]) -> int:
    """One geometric grid step beyond the grid's last ``interval`` [a, b]: :math:`b^2/a`, in whole sequences.

    >>> extension_point([725, 1026])
    1452
    """
    low, high = interval
    return int(round(high * high / low))


def grid_coverage(grid: Sequence[float], predicted: float, name: str = "P*") -> dict:
    r"""Whether a grid has :data:`GRID_POINTS` points spanning :math:`[P^*/3, 3P^*]` (``spans``), and why not.

    ``name``: the predicted transition in the reason (``P*``, or ``onset`` for a continuous softmax onset).

    >>> grid_coverage([319, 437, 598, 818, 1120, 1533, 2098, 2872], 957.1)["spans"]
    True
    >>> grid_coverage([128, 256, 512], 957.1)["reason"]
    'the grid has 3 points in [128, 512] (needs 8 spanning [319, 2.87e+03] around the predicted P* = 957)'
    """
    low, high = predicted / GRID_SPAN, predicted * GRID_SPAN
    points = len(grid)
    # a whole number of sequences within half a sequence of the bound counts as reaching it
    spans = points >= GRID_POINTS and min(grid) <= low + 0.5 and max(grid) >= high - 0.5
    reason = (f"the grid has {points} points in [{_number(min(grid))}, {_number(max(grid))}] (needs {GRID_POINTS} "
              f"spanning [{_number(low)}, {_number(high)}] around the predicted {name} = {_number(predicted)})")
    return {"points": points, "span": [low, high], "spans": bool(spans), "reason": None if spans else reason}


def _across(predicted: dict, P_star: float) -> dict:
    """The theory's a_G and copy fraction at its last grid point below ``P_star`` and its first above it."""
    P = np.asarray(predicted["P"], dtype=float)
    below, above = np.nonzero(P < P_star)[0], np.nonzero(P > P_star)[0]
    sides = {}
    for side, index in (("before", below[-1] if len(below) else None), ("after", above[0] if len(above) else None)):
        sides[side] = {"P": None if index is None else float(P[index])}
        for key in ("aG", "copy_fraction"):
            values = predicted.get(key)
            sides[side][key] = None if index is None or not values else values[index]
    return sides


def jump_landing(measured: dict, predicted: dict, bracket: Sequence[float]) -> dict:
    r"""Where the jump lands: :math:`a_G` and :math:`\cos^2(A, S)` before and after it, measured and predicted.

    Measured: the global MAP at the two converged points that bracket the measured jump.  Predicted:
    the theory's global minimum at its grid points just below and just above its own :math:`P^*` (the
    two minima the theory jumps between), so a measured jump a little off the predicted one is
    compared with the state it lands on, not with the other branch.  ``within`` when the two
    :math:`a_G` after the jump differ by at most :data:`LANDING_TOLERANCE`.
    """
    index = {P: i for i, (P, ok) in enumerate(zip(measured["P"], measured["converged"])) if ok}
    record: dict = {"measured": {}, "predicted": _across(predicted, predicted["transitions"]["P_star"])}
    for side, P in (("before", bracket[0]), ("after", bracket[1])):
        record["measured"][side] = {"P": P}
        for key in ("aG", "copy_fraction"):
            series = measured.get(f"{key}_mean")
            record["measured"][side][key] = None if series is None else series[index[P]]
    found, theory = record["measured"], record["predicted"]
    difference = (None if found["after"]["aG"] is None or theory["after"]["aG"] is None
                  else found["after"]["aG"] - theory["after"]["aG"])
    record["aG_difference_after"] = difference
    record["within"] = bool(difference is not None and abs(difference) <= LANDING_TOLERANCE)

    def words(key: str, name: str) -> str:
        return (f"{name} {_number(found['before'][key])} → {_number(found['after'][key])} measured, "
                f"{_number(theory['before'][key])} → {_number(theory['after'][key])} predicted")

    record["summary"] = (words("aG", "a_G") + "; " + words("copy_fraction", "cos²(A, S)")
                         + f" (measured between P = {_number(bracket[0])} and {_number(bracket[1])}, predicted "
                         f"across P* = {_number(predicted['transitions']['P_star'])})")
    return record


def compare_transition(bracket: Sequence[float] | None, predicted: float | None, grid: Sequence[float]) -> dict:
    """One transition's verdict: ``status`` (see module docstring), ``ratio`` range, ``reason`` and ``summary``.

    >>> compare_transition([256, 512], 342.0, [8, 1024])["summary"]
    'predicted 342, measured 256–512, ratio 0.749–1.5: within a factor 2'
    >>> compare_transition([128, 256], 342.0, [8, 1024])["status"]
    'unresolved'
    >>> compare_transition(None, 342.0, [8, 1024])["status"]
    'missing'
    >>> compare_transition([16, 32], None, [8, 1024])["status"]
    'unexpected'
    """
    ratio = None if bracket is None or predicted is None else [bracket[0] / predicted, bracket[1] / predicted]
    if bracket is None and predicted is None:
        status, reason = "absent", "neither predicted nor measured on the grid (untested)"
    elif bracket is None:
        inside = bool(grid) and grid[0] <= predicted <= grid[-1]
        status = "missing" if inside else "beyond grid"
        reason = ("predicted inside the converged grid but not measured" if inside
                  else "predicted outside the converged grid (untested)")
    elif predicted is None:
        status, reason = "unexpected", "measured but the theory predicts none on this grid"
    elif 1 / AGREEMENT_FACTOR <= ratio[0] and ratio[1] <= AGREEMENT_FACTOR:
        status, reason = "within", f"within a factor {AGREEMENT_FACTOR:g}"
    elif ratio[1] < 1 / AGREEMENT_FACTOR or ratio[0] > AGREEMENT_FACTOR:
        status, reason = "outside", f"outside a factor {AGREEMENT_FACTOR:g}"
    else:
        status, reason = "unresolved", (f"straddles a factor {AGREEMENT_FACTOR:g}: not shown to lie within it "
                                        "(bisection narrows the bracket)")
    quoted_ratio = "—" if ratio is None else f"{_number(ratio[0])}–{_number(ratio[1])}"
    quoted_prediction = "none" if predicted is None else _number(predicted)
    return {
        "status": status,
        "predicted": predicted,
        "bracket": None if bracket is None else list(bracket),
        "ratio": ratio,
        "reason": reason,
        "summary": f"predicted {quoted_prediction}, measured {quote_bracket(bracket)}, ratio {quoted_ratio}: {reason}",
    }


def verdict_kind(attention: str, predicted: dict | None) -> str:
    """Which verdict judges a sweep (module docstring): ``second_order_onset`` (linear), ``continuous_onset``
    (softmax whose prediction switches on continuously, with an onset) or ``first_order_jump`` (other softmax).

    >>> verdict_kind("softmax", {"transition_type": "continuous", "transitions": {"P_star": None, "onset": 680.5}})
    'continuous_onset'
    >>> verdict_kind("softmax", {"transition_type": "first order", "transitions": {"P_star": 292.0, "onset": None}})
    'first_order_jump'
    """
    if attention == "linear":
        return "second_order_onset"
    continuous = (predicted is not None and predicted.get("transition_type") == "continuous"
                  and predicted["transitions"].get("onset") is not None)
    return "continuous_onset" if continuous else "first_order_jump"


def agreement(attention: str, measured: dict, predicted: dict | None) -> dict:
    """The stated metric and the verdict: its ``verdict_kind``, per-transition status, ratio ranges, ``passes`` and
    its ``reasons``."""
    metric = (
        "grid bracket of each measured transition over the predicted value (passes when every bracket lies within "
        f"a factor {AGREEMENT_FACTOR:g}, none is missing, unexpected, unresolved or untested, and at least two "
        "points converged; linear besides: the P1 fitted to the onset law within the factor; softmax with a "
        "continuous prediction: the steepest rise of a_G against the predicted onset, and no point with two minima); "
        "RMS of measured minus predicted order parameters over the converged grid"
    )
    kept, reasons = _converged_points(measured)
    grid = [measured["P"][i] for i in kept]
    if predicted is None:
        return {"metric": metric, "available": False, "verdict_kind": None, "converged_points": len(kept),
                "passes": False, "reasons": reasons + ["no theory prediction for this convention"]}
    kind = verdict_kind(attention, predicted)
    statuses = {name: compare_transition((measured.get(name) or _absent("not measured"))["bracket"],
                                         predicted["transitions"].get(name), grid)
                for name in VERDICT_TRANSITIONS[kind]}
    failures = [f"{name} {v['summary']}" for name, v in statuses.items() if v["status"] != "within"]
    extra, checked = _KIND_CHECKS[kind](measured, predicted, kept, grid)
    failures += checked
    if measured.get("nonconverged_P"):
        failures.append("non-converged points fail the verdict (missing data)")
    enough = len(kept) >= 2
    if not enough:
        failures.append(f"only {len(kept)} of {len(measured['P'])} points converged (need 2)")
    return {
        "metric": metric,
        "available": True,
        "verdict_kind": kind,
        "transitions": statuses,
        "ratios": {name: v["ratio"] for name, v in statuses.items()},
        "within_factor": {name: v["status"] == "within" for name, v in statuses.items()},
        "order_parameter_rms": _order_parameter_rms(measured, predicted, kept, grid),
        "converged_points": len(kept),
        "passes": bool(enough and not failures),
        "reasons": reasons + failures,
        **extra,
    }


def record_agreement(record: dict, where: str = "") -> dict:
    """:func:`agreement` of a stored ``validate copy-head`` record (its JSON: ``attention``, ``measured``,
    ``predicted``), judged again with today's verdict; a one-line
    :class:`~emergence.base.errors.InvalidArgumentError` (parameter ``adam``, the message starting with ``where``)
    when it holds nothing to judge."""
    from emergence.base.errors import InvalidArgumentError

    try:
        return agreement(record["attention"], record["measured"], record["predicted"])
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        raise InvalidArgumentError("adam", f"{where}a validate copy-head record without a measurement and prediction "
                                           "to judge") from None


def _converged_points(measured: dict) -> tuple[list[int], list[str]]:
    """Indices of the converged points and the reasons that qualify them: a measurement without a convergence
    record counts no point as converged (missing data), and non-converged points are named."""
    reasons = []
    converged = measured.get("converged")
    if converged is None:
        reasons.append("the measurement has no per-point convergence record (missing data: no point counts as "
                       "converged)")
        converged = [False] * len(measured["P"])
    if measured.get("nonconverged_P"):
        reasons.append(f"{len(measured['nonconverged_P'])} of {len(measured['P'])} points did not converge "
                       f"(P = {', '.join(f'{p:g}' for p in measured['nonconverged_P'])}; excluded)")
    return [i for i, ok in enumerate(converged) if ok], reasons


def _order_parameter_rms(measured: dict, predicted: dict, kept: list[int], grid: list) -> dict:
    """RMS of measured minus predicted c1 and cG over the converged points (theory interpolated in ln P)."""
    if not kept:
        return {}
    log_grid = np.log(np.asarray(predicted["P"], dtype=float))
    rms = {}
    for key in ("c1", "cG"):
        theory = np.interp(np.log(np.asarray(grid, dtype=float)), log_grid, np.asarray(predicted[key], dtype=float))
        values = np.asarray([measured[f"{key}_mean"][i] for i in kept], dtype=float)
        rms[key] = float(np.sqrt(np.mean((values - theory) ** 2)))
    return rms


def _onset_agreement(measured: dict, predicted: dict, kept: list[int], grid: list) -> tuple[dict, list[str]]:
    """Linear attention: P1 fitted to the onset law (:func:`onset_fit`) within the factor of the prediction.

    Returns the report's ``P1_fit`` entry (none without converged points) and the failures."""
    if not kept:
        return {}, []
    beta = (predicted["transitions"].get("critical_exponent") or {}).get("beta")
    fit = onset_fit(grid, [measured["c1_mean"][i] for i in kept], (measured.get("P1") or {}).get("bracket"), beta)
    fitted = compare_transition(None if fit["P1"] is None else [fit["P1"], fit["P1"]],
                                predicted["transitions"].get("P1"), grid)
    extra = {"P1_fit": fit | {"status": fitted["status"], "ratio": None if fitted["ratio"] is None
                              else fitted["ratio"][0]}}
    if fit["P1"] is None:
        return extra, [f"P1 fit: {fit['note']}"]
    if fitted["status"] != "within":
        return extra, [f"P1 fitted to the onset law {fit['P1']:.4g}, predicted "
                       f"{_number(predicted['transitions'].get('P1'))}: {fitted['reason']}"]
    return extra, []


def _jump_agreement(measured: dict, predicted: dict, kept: list[int], grid: list) -> tuple[dict, list[str]]:
    """Softmax attention: the grid spans the predicted P*, the jump lands where predicted, and (two starts)
    a point inside the predicted spinodal window has two minima.  Returns the report's ``grid``, ``landing``
    and ``hysteresis`` entries and the failures (none without a predicted P*)."""
    predicted_P_star = predicted["transitions"].get("P_star")
    if predicted_P_star is None:
        return {}, []
    failures = []
    extra: dict = {"grid": grid_coverage(measured["P"], predicted_P_star)}
    if not extra["grid"]["spans"]:
        failures.append(extra["grid"]["reason"])
    bracket = (measured.get("P_star") or {}).get("bracket")
    if bracket is not None and "converged" in measured:
        extra["landing"] = jump_landing(measured, predicted, bracket)
        if not extra["landing"]["within"]:
            failures.append(f"the jump lands off the prediction: {extra['landing']['summary']} "
                            f"(needs a_G after it within {LANDING_TOLERANCE:g})")
    window = predicted["transitions"].get("spinodals")
    if "bistable_fraction" in measured and window is None:  # Adam: the two starts test the hysteresis
        failures.append("the predicted spinodal window does not lie inside the theory's grid: hysteresis untested")
    elif "bistable_fraction" in measured:
        extra["hysteresis"] = hysteresis(measured, window)
        if not extra["hysteresis"]["inside"]:
            failures.append(f"no point inside the predicted spinodal window [{_number(window[0])}, "
                            f"{_number(window[1])}] has two minima (no hysteresis where predicted)")
    return extra, failures


def _continuous_agreement(measured: dict, predicted: dict, kept: list[int], grid: list) -> tuple[dict, list[str]]:
    """Softmax attention whose prediction switches on continuously: the grid spans the predicted onset as a jump's
    grid spans P* (:func:`grid_coverage`), and (two starts) no point has two minima: a measured first-order jump
    with its metastable window fails a continuous prediction.  Returns the report's ``grid`` and ``hysteresis``
    entries and the failures."""
    onset = predicted["transitions"]["onset"]
    failures = []
    extra: dict = {"grid": grid_coverage(measured["P"], onset, "onset")}
    if not extra["grid"]["spans"]:
        failures.append(extra["grid"]["reason"])
    if "bistable_fraction" in measured:  # Adam: the two starts test for a first-order jump
        extra["hysteresis"] = hysteresis(measured, None)
        two = extra["hysteresis"]["two_minima_P"]
        if two:
            failures.append(f"two minima (hysteresis) at P = {', '.join(f'{p:g}' for p in two)}: a first-order "
                            f"signature where the theory predicts a continuous onset at {_number(onset)}")
    return extra, failures


_KIND_CHECKS = {"second_order_onset": _onset_agreement, "first_order_jump": _jump_agreement,
                "continuous_onset": _continuous_agreement}
"""The checks each kind of verdict adds to the transitions' brackets."""

VERDICT_WORDS = {
    "first_order_jump": "first-order jump (the bracket of the largest step of a_G against the predicted P*, its "
                        "landing and the hysteresis)",
    "continuous_onset": "continuous onset (the bracket of the steepest rise of a_G in ln P against the predicted "
                        "onset; no point may have two minima)",
    "second_order_onset": "second-order point and copy crossover (the brackets of P1 and of the crossover, and P1 "
                          "fitted to the onset law)",
}


def verdict_lines(attention: str, measured: dict, agreement_record: dict) -> list[str]:
    """The console summary of a validation: each transition predicted and measured, the ratio, ``passes`` and why."""
    lines = []
    if measured.get("nonconverged_P"):
        lines.append(f"non-converged points: {len(measured['nonconverged_P'])} of {len(measured['P'])} "
                     f"(P = {', '.join(f'{p:g}' for p in measured['nonconverged_P'])}), excluded from the transitions "
                     f"and the comparison (converged: {measured.get('convergence_criterion', '')})")
    kind = agreement_record.get("verdict_kind")
    if kind:
        lines.append(f"verdict kind: {kind}, {VERDICT_WORDS[kind]}")
    statuses = agreement_record.get("transitions", {})
    for name in VERDICT_TRANSITIONS[kind] if kind else TRANSITION_NAMES[attention]:
        record = measured.get(name) or _absent("not measured")
        if name in statuses:
            lines.append(f"{name}: {statuses[name]['summary']} [{record['note']}]")
        else:
            lines.append(f"{name}: measured {quote_bracket(record['bracket'])} [{record['note']}]")
    if agreement_record.get("P1_fit"):
        fit = agreement_record["P1_fit"]
        lines.append(f"P1 fit: {fit['note']}" + (f", ratio {_number(fit['ratio'])} to the prediction: {fit['status']}"
                                                  if fit["ratio"] is not None else ""))
    if agreement_record.get("landing"):
        lines.append(f"landing: {agreement_record['landing']['summary']}")
    if (measured.get("bisection") or {}).get("added_P"):
        lines.append(f"bisection points: {', '.join(f'{p:g}' for p in measured['bisection']['added_P'])}")
    window = agreement_record.get("hysteresis")
    if window:
        two = window["measured_two_minima"]
        expected = ("no metastable window (a continuous onset)" if window["window"] is None
                    else f"the predicted spinodal window {quote_bracket(window['window'])}")
        lines.append(f"hysteresis: two minima measured {quote_bracket(two) if two else 'nowhere'} "
                     f"(end points of the grid points with two minima) against {expected}")
    reasons = agreement_record.get("reasons", [])
    lines.append(f"passes: {str(agreement_record.get('passes', False)).lower()}"
                 + (f" ({'; '.join(reasons)})" if reasons else ""))
    return lines
