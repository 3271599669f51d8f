r"""First-order transition: the coexistence point :math:`P^\ast` and the spinodals (float64).

Where two local minima coexist, call the one with the smaller copy coordinate the *lower*
branch and the other the *upper* branch.  :math:`P^\ast` is the root of
:math:`\Delta S(P) = S_\mathrm{upper}(P) - S_\mathrm{lower}(P)`: bracketed where
:math:`\Delta S` changes sign between neighbouring grid points that both carry two minima,
then refined by Brent's method in :math:`\ln P`, each branch followed by Newton from its
neighbouring grid solution.

The spinodals bound the window where both minima exist.  At a spinodal a minimum merges
with the saddle between the two basins (a fold), where :math:`S' = S'' = 0`.  For a
one-coordinate action the fold is found as the root in :math:`\ln P` of
:math:`F(P) = S'(u_i(P); P)`, with :math:`u_i(P)` the inflection point
(:math:`S''(u_i) = 0`) between the merging minimum and the saddle: :math:`F` is smooth
through the fold and changes sign there, so Brent's method gives the fold to float64
precision (a count of minima on a grid would resolve it only to the grid spacing).
Multi-coordinate spinodals are not implemented (the linear actions have none).

A tilted double well :math:`S = (y^2-1)^2 + (P - 2)\,y` has :math:`P^\ast = 2` and spinodals
at :math:`P = 2 \mp 8/(3\sqrt3)`:

>>> import numpy as np
>>> from numerics.copy_head.minimisation import local_minima
>>> class DoubleWell:
...     bounds = np.array([[-2.0, 2.0]])
...     def canonical(self, y): return y
...     def value(self, y, P): return (y[0] ** 2 - 1) ** 2 + (P - 2) * y[0]
...     def gradient(self, y, P): return (4 * y[0] * (y[0] ** 2 - 1) + P - 2)[None]
...     def hessian(self, y, P): return (12 * y[0] ** 2 - 4 + 0 * P)[None, None]
...     def start_axes(self, points=201): return (np.linspace(-2, 2, points),)
>>> P = np.linspace(0.0, 4.0, 81)[1:]
>>> minima = local_minima(DoubleWell(), P)
>>> round(coexistence_point(DoubleWell(), minima), 12)
2.0
>>> low, high = spinodals(DoubleWell(), minima)
>>> [round(x, 10) for x in (low, 2 - 8 / 27 ** 0.5, high, 2 + 8 / 27 ** 0.5)]
[0.4603992822, 0.4603992822, 3.5396007178, 3.5396007178]
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from numerics.copy_head.crossover import branch_point
from numerics.copy_head.minimisation import LocalMinima


def coexisting_branches(minima: LocalMinima) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid points with two or more minima: their indices and the lower/upper minima ``(k, n)``."""
    indices = np.flatnonzero(minima.count() >= 2)
    lower = np.stack([minima.at(i)[0][:, 0] for i in indices], axis=1) if len(indices) else None
    upper = np.stack([minima.at(i)[0][:, -1] for i in indices], axis=1) if len(indices) else None
    return indices, lower, upper


def action_difference(action, lower_start, upper_start, P: float) -> float:
    r""":math:`S_\mathrm{upper} - S_\mathrm{lower}` at ``P``, each branch followed from its start."""
    lower = branch_point(action, lower_start, P)
    upper = branch_point(action, upper_start, P)
    if np.abs(upper - lower).max() < 1e-6 * (1 + np.abs(upper).max()):
        raise ValueError("the two branches merged")
    values = action.value(np.stack([lower, upper], axis=1), np.array([P, P]))
    return float(values[1] - values[0])


def coexistence_point(action, minima: LocalMinima) -> float | None:
    r"""The first :math:`P^\ast` on the grid where the global minimum changes branch (``None``: no such point)."""
    indices, lower, upper = coexisting_branches(minima)
    if len(indices) < 2:
        return None
    P = minima.P[indices]
    difference = action.value(upper, P) - action.value(lower, P)
    for j in np.flatnonzero(np.sign(difference[:-1]) != np.sign(difference[1:])):
        if indices[j + 1] != indices[j] + 1:
            continue

        def gap(log_P, j=j):
            return action_difference(action, lower[:, j], upper[:, j], np.exp(log_P))

        return float(np.exp(brentq(gap, np.log(P[j]), np.log(P[j + 1]), xtol=1e-14)))
    return None


def _inflection(action, P: float, reference: float, width: float) -> float:
    r"""The root of :math:`S''(u; P)` nearest to ``reference`` within ``reference +- width``."""
    grid = np.linspace(reference - width, reference + width, 401)
    curvature = action.hessian(grid[None], np.full(grid.shape, P))[0, 0]
    changes = np.flatnonzero(np.sign(curvature[:-1]) != np.sign(curvature[1:]))
    if len(changes) == 0:
        raise ValueError("no inflection point near the fold")
    j = changes[np.argmin(np.abs(grid[changes] - reference))]

    def second(u):
        return float(action.hessian(np.array([[u]]), np.array([P]))[0, 0, 0])

    return brentq(second, grid[j], grid[j + 1], xtol=1e-14)


def _saddle(action, P: float, lower: float, upper: float) -> float:
    """The maximum of ``S`` between two neighbouring one-coordinate minima."""

    def slope(u):
        return float(action.gradient(np.array([[u]]), np.array([P]))[0, 0])

    margin = 1e-6 * (upper - lower)
    return brentq(slope, lower + margin, upper - margin, xtol=1e-14)


def fold_point(action, P_inside: float, P_outside: float, vanishing: float, saddle: float) -> float:
    r"""The :math:`P` between ``P_inside`` and ``P_outside`` where the minimum ``vanishing`` meets the saddle."""
    reference, width = 0.5 * (vanishing + saddle), 2.0 * abs(vanishing - saddle)

    def fold_function(log_P):
        P = np.exp(log_P)
        u = _inflection(action, P, reference, width)
        return float(action.gradient(np.array([[u]]), np.array([P]))[0, 0])

    return float(np.exp(brentq(fold_function, np.log(P_inside), np.log(P_outside), xtol=1e-14)))


def spinodals(action, minima: LocalMinima) -> tuple[float, float] | None:
    r"""``(low, high)``: where the upper minimum appears and where the lower one disappears.

    Taken at the edges of the first run of grid points with two minima; one-coordinate
    actions only.  ``None`` when no such run lies strictly inside the grid.
    """
    if len(action.bounds) != 1:
        raise NotImplementedError("spinodals are implemented for one-coordinate actions")
    indices, lower, upper = coexisting_branches(minima)
    if len(indices) == 0:
        return None
    first = indices[0]
    last = first + np.flatnonzero(np.diff(np.r_[indices, -1]) != 1)[0]
    if first == 0 or last == len(minima.P) - 1:
        return None
    return tuple(_edge_fold(action, minima, inside, outside, lower[0, j], upper[0, j])
                 for inside, outside, j in ((first, first - 1, 0), (last, last + 1, last - first)))


def _edge_fold(action, minima, inside, outside, lower, upper):
    """The fold between grid points ``inside`` (two minima) and ``outside`` (the survivor only)."""
    survivor = minima.at(outside)[0][0]
    vanishing = lower if np.min(np.abs(survivor - upper)) < np.min(np.abs(survivor - lower)) else upper
    saddle = _saddle(action, minima.P[inside], lower, upper)
    return fold_point(action, minima.P[inside], minima.P[outside], vanishing, saddle)
    return low, high
