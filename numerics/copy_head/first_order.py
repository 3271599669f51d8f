r"""First-order transition: the coexistence point :math:`P^\ast` and the spinodals (float64).

:math:`P^\ast` is where the global minimum jumps from one branch of local minima to
another.  A jump is told from a steep continuous change by refining the grid interval
(:func:`jump_intervals`): a jump keeps its size in one sub-interval.  :math:`P^\ast` is then
the root of :math:`\Delta S(P) = S_2(P) - S_1(P)` of the two branches, each
followed by Newton from its grid solution, by Brent's method in :math:`\ln P`.

The spinodals bound the window where both minima exist.  At a spinodal a minimum merges
with the saddle between the two basins (a fold), where :math:`S' = S'' = 0`.  For a
one-coordinate action the fold is found as the root in :math:`\ln P` of
:math:`F(P) = S'(u_i(P); P)`, with :math:`u_i(P)` the inflection point
(:math:`S''(u_i) = 0`) between the merging minimum and the saddle: :math:`F` is smooth
through the fold and changes sign there, so Brent's method gives the fold to float64
precision (a count of minima on a grid would resolve it only to the grid spacing).
For several coordinates (the softmax action of a correlated token stream, :math:`(g_0, g_G)`)
the fold is where Newton continuation of the vanishing minimum stops finding it
(:func:`_branch_end`, bisection in :math:`\ln P`; Newton stops converging as the minimum flattens at the
fold, so the fold is known to about 0.3 %: two grids gave 1041.5 and 1038.7 for one upper spinodal).

A tilted double well :math:`S = (y^2-1)^2 + (P - 2)\,y` has :math:`P^\ast = 2` and spinodals
at :math:`P = 2 \mp 8/(3\sqrt3)`:

>>> import numpy as np
>>> from emergence.numerics.copy_head.minimisation import TiltedDoubleWell, local_minima
>>> well = TiltedDoubleWell(balance=2.0)
>>> P = np.linspace(0.0, 4.0, 81)[1:]
>>> minima = local_minima(well, P)
>>> round(coexistence_point(well, minima), 12)
2.0
>>> low, high = spinodals(well, minima)
>>> [round(x, 10) for x in (low, 2 - 8 / 27 ** 0.5, high, 2 + 8 / 27 ** 0.5)]
[0.4603992822, 0.4603992822, 3.5396007178, 3.5396007178]
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from emergence.numerics.copy_head.branches import action_difference, branch_birth
from emergence.numerics.copy_head.minimisation import LocalMinima, Minimisable, local_minima, newton_polish


def coexisting_branches(minima: LocalMinima) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Grid points with two or more minima: their indices and the lower/upper minima ``(k, n)``."""
    indices = np.flatnonzero(minima.count() >= 2)
    lower = np.stack([minima.at(int(i))[0][:, 0] for i in indices], axis=1) if len(indices) else None
    upper = np.stack([minima.at(int(i))[0][:, -1] for i in indices], axis=1) if len(indices) else None
    return indices, lower, upper


def jump_intervals(action: Minimisable, minima: LocalMinima, *, candidates: int = 3, levels: int = 2, points: int = 17):
    """Grid intervals where the global minimum jumps: ``[(P_low, P_high, y_low, y_high), ...]`` in ``P`` order.

    The ``candidates`` intervals with the largest change of the global minimum are refined
    ``levels`` times with ``points`` values each; a continuous change spreads over the
    sub-intervals, a jump keeps at least half of its size in one of them.  The interval's
    end points keep their minima (recomputing them could pick the other branch where the two
    are degenerate to rounding and hide the jump).
    """
    y, _ = minima.global_minimum()
    P = minima.P
    gaps = np.abs(np.diff(y, axis=1)).max(axis=0)
    intervals = [(P[i], P[i + 1], y[:, i], y[:, i + 1], gaps[i]) for i in np.argsort(-gaps)[:candidates]
                 if gaps[i] > 1e-8 * (1 + np.abs(y).max())]
    for _ in range(levels):
        if not intervals:
            break
        # every interval's sub-grid in one vectorised minimisation
        subs = [np.geomspace(low, high, points) for low, high, *_ in intervals]
        y_inner, _ = local_minima(action, np.concatenate([sub[1:-1] for sub in subs])).global_minimum()
        refined = []
        for n, (sub, (_, _, y_low, y_high, size)) in enumerate(zip(subs, intervals)):
            inner = y_inner[:, n * (points - 2):(n + 1) * (points - 2)]
            y_sub = np.concatenate([y_low[:, None], inner, y_high[:, None]], axis=1)
            sub_gaps = np.abs(np.diff(y_sub, axis=1)).max(axis=0)
            j = int(np.argmax(sub_gaps))
            if sub_gaps[j] >= 0.5 * size:
                refined.append((sub[j], sub[j + 1], y_sub[:, j], y_sub[:, j + 1], sub_gaps[j]))
        intervals = refined
    found = [(float(low), float(high), y_low, y_high) for low, high, y_low, y_high, _ in intervals]
    return sorted(found, key=lambda item: item[0])


def coexistence_point(action: Minimisable, minima: LocalMinima) -> float | None:
    r"""The first :math:`P^\ast` where the global minimum changes branch (``None``: it never does).

    The branches through the global minima on either side of the jump are followed in
    :math:`P`; :math:`P^\ast` is the root of their action difference.  When the new branch
    does not exist on the near side of the jump, the bracket starts at its birth (located by
    :func:`~.branches.branch_birth`), and where the old branch dies inside the interval it ends at its
    death; without a sign change in between, the birth (new branch lower there) or the
    death is returned.
    """
    for P_low, P_high, before, after in jump_intervals(action, minima):

        def gap(log_P, before=before, after=after):
            return action_difference(action, before, after, np.exp(log_P))

        start, end = P_low, P_high
        try:
            low = gap(np.log(start))
        except ValueError:
            start = branch_birth(action, after, P_low, P_high)
            low = gap(np.log(start))
        try:
            high = gap(np.log(end))
        except ValueError:
            end = branch_birth(action, before, P_high, P_low)
            high = gap(np.log(end))
        if np.sign(low) != np.sign(high):
            return float(np.exp(brentq(gap, np.log(start), np.log(end), xtol=1e-14)))
        return float(start if low < 0 else end)
    return None


class FoldNotFound(ValueError):
    """The fold of a metastable branch cannot be followed on this grid (no inflection point of the
    action near it); the spinodal is then not located, and the phase diagram says so."""


def _inflection(action: Minimisable, P: float, reference: float, width: float) -> float:
    r"""The root of :math:`S''(u; P)` nearest to ``reference`` within ``reference +- width``.

    Raises :class:`FoldNotFound` when :math:`S''` has no sign change there (or is not finite).
    """
    grid = np.linspace(reference - width, reference + width, 401)
    with np.errstate(all="ignore"):
        curvature = action.hessian(grid[None], np.full(grid.shape, P))[0, 0]
    finite = np.isfinite(curvature)
    changes = np.flatnonzero((np.sign(curvature[:-1]) != np.sign(curvature[1:])) & finite[:-1] & finite[1:])
    if len(changes) == 0:
        raise FoldNotFound(f"no inflection point of the action within u = {reference:.6g} +- {width:.3g} "
                           f"at P = {P:.6g}")
    j = changes[np.argmin(np.abs(grid[changes] - reference))]

    def second(u):
        return float(action.hessian(np.array([[u]]), np.array([P]))[0, 0, 0])

    return brentq(second, grid[j], grid[j + 1], xtol=1e-14)


def _saddle(action: Minimisable, P: float, lower: float, upper: float) -> float:
    """The maximum of ``S`` between two neighbouring one-coordinate minima."""

    def slope(u):
        return float(action.gradient(np.array([[u]]), np.array([P]))[0, 0])

    margin = 1e-6 * (upper - lower)
    return brentq(slope, lower + margin, upper - margin, xtol=1e-14)


def fold_point(action: Minimisable, P_inside: float, P_outside: float, vanishing: float, saddle: float) -> float:
    r"""The :math:`P` between ``P_inside`` and ``P_outside`` where the minimum ``vanishing`` meets the saddle."""
    reference, width = 0.5 * (vanishing + saddle), 2.0 * abs(vanishing - saddle)

    def fold_function(log_P):
        P = np.exp(log_P)
        u = _inflection(action, P, reference, width)
        return float(action.gradient(np.array([[u]]), np.array([P]))[0, 0])

    return float(np.exp(brentq(fold_function, np.log(P_inside), np.log(P_outside), xtol=1e-14)))


def spinodals(action: Minimisable, minima: LocalMinima) -> tuple[float, float] | None:
    r"""``(low, high)``: where the upper minimum appears and where the lower one disappears.

    Taken at the edges of the first run of grid points with two minima (the fold by
    :func:`_edge_fold`, or for several coordinates :func:`_branch_end`).  ``None`` when no such run
    lies strictly inside the grid.
    """
    indices, lower, upper = coexisting_branches(minima)
    if len(indices) == 0:
        return None
    assert lower is not None and upper is not None  # some grid point has two minima
    first = indices[0]
    last = first + np.flatnonzero(np.diff(np.r_[indices, -1]) != 1)[0]
    if first == 0 or last == len(minima.P) - 1:
        return None
    if len(action.bounds) != 1:
        return (_branch_end(action, minima, first, first - 1), _branch_end(action, minima, last, last + 1))
    return (_edge_fold(action, minima, first, first - 1, lower[0, 0], upper[0, 0]),
            _edge_fold(action, minima, last, last + 1, lower[0, last - first], upper[0, last - first]))


def _branch_end(action: Minimisable, minima, inside, outside, *, steps: int = 45) -> float:
    r"""Where the minimum at grid point ``inside`` that is farthest from the survivor at ``outside`` ends (any number
    of coordinates), by bisection in :math:`\ln P`: the branch exists where Newton from its last known point
    converges closer to that point than to the survivor (a fold moves the branch fast, so a fixed distance
    would stop short of it)."""
    survivor = action.canonical(minima.at(outside)[0][:, :1])[:, 0]
    candidates = minima.at(inside)[0]
    known = candidates[:, np.argmax(np.abs(candidates - survivor[:, None]).max(axis=0))]
    low, high = np.log(minima.P[outside]), np.log(minima.P[inside])
    for _ in range(steps):
        middle = 0.5 * (low + high)
        y, converged = newton_polish(action, known[:, None], np.array([np.exp(middle)]))
        y = action.canonical(y)[:, 0]
        if converged[0] and np.abs(y - known).max() < np.abs(y - survivor).max():
            high, known = middle, y
        else:
            low = middle
    return float(np.exp(high))


def _edge_fold(action: Minimisable, minima, inside, outside, lower, upper):
    """The fold between grid points ``inside`` (two minima) and ``outside`` (the survivor only).

    When the vanishing minimum has no saddle beside it at ``inside`` (the grid point sits on
    the fold itself), or the fold cannot be followed between the two grid points (no
    inflection near it on a coarse grid), that grid point is returned: the fold is then known
    to the grid's resolution only.
    """
    survivor = minima.at(outside)[0][0]
    vanishing = lower if np.min(np.abs(survivor - upper)) < np.min(np.abs(survivor - lower)) else upper
    try:
        saddle = _saddle(action, minima.P[inside], lower, upper)
        return fold_point(action, minima.P[inside], minima.P[outside], vanishing, saddle)
    except ValueError:
        return float(minima.P[inside])
