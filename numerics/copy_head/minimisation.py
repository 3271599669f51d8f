r"""Local and global minima of a reduced action at many values of ``P`` at once (float64).

Method (vectorised over the ``P`` grid and over starting points):

1. evaluate :math:`S(y; P)` on a tensor grid of starting points (``action.start_axes()``)
   for every ``P`` (one kernel call on an array of shape ``(points, len(P))``) and keep the
   grid's discrete local minima;
2. polish every candidate with saddle-free Newton steps
   :math:`\delta = -\sum_i v_i (v_i\cdot\nabla S)/\max(|\lambda_i|, \epsilon)` (eigenpairs of the
   Hessian) and Armijo backtracking, all candidates in one batch;
3. keep the candidates that converged to a point with a positive-definite Hessian;
4. continuation: polish every minimum found at ``P[i]`` again at ``P[i-1]`` and ``P[i+1]``
   (catches basins the start grid missed at a neighbouring ``P``), unless a minimum already
   found there lies within one start-grid cell of it (:func:`unrepresented`);
5. merge duplicates and take the lowest action per ``P`` as the global minimum.

A minimum is found when the start grid resolves its basin (a basin narrower than the grid
spacing can be missed: refine the grid with ``points``).  Minima on the edge of the action's
search box are not stationary points and are dropped.

The discrete minima of a grid of values (the first step):

>>> import numpy as np
>>> values = np.array([[3.0], [1.0], [2.0], [0.5], [4.0]])
>>> discrete_minima(values)[:, 0].tolist()
[False, True, False, True, False]

A toy action (:class:`TiltedDoubleWell`): :math:`S = (y^2 - 1)^2 + (P - 1)\,y` has minima near
:math:`y = \pm 1`, and the tilt picks the global one.

>>> minima = local_minima(TiltedDoubleWell(balance=1.0), np.array([0.5, 1.5]))
>>> minima.count().tolist()
[2, 2]
>>> np.round(minima.global_minimum()[0][0], 4).tolist()
[1.0575, -1.0575]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from emergence.base.errors import DivergenceError


@runtime_checkable
class Minimisable(Protocol):
    r"""What every solver of this package takes: a function :math:`S(y; P)` of ``k`` coordinates with its
    derivatives, as jax-md's minimisers take an energy function.

    - ``value(y, P)``: :math:`S`, shape ``y.shape[1:]`` for ``y`` of shape ``(k, ...)``, ``P`` broadcasting
      against ``y[0]``;
    - ``gradient(y, P)``: :math:`\partial_i S`, shape ``(k, ...)``;
    - ``hessian(y, P)``: :math:`\partial_i\partial_j S`, shape ``(k, k, ...)``;
    - ``bounds``: the search box, shape ``(k, 2)`` (minima on its edge are not stationary and are dropped);
    - ``start_axes(points)``: one axis of starting points per coordinate (their tensor grid seeds the search);
    - ``canonical(y)``: the representative of ``y`` under the function's symmetries (identity if none).

    Optional, read where present: ``gradient_and_hessian`` (one fused call, :func:`newton_terms`), ``unit``
    (natural size of the coordinates, :func:`newton_polish`) and the ``*_mp`` twins (:mod:`.precise`).
    :class:`~.reduced_action.ReducedAction` extends it with the order parameters of the copy head.
    """

    bounds: np.ndarray

    def value(self, y, P): ...

    def gradient(self, y, P): ...

    def hessian(self, y, P): ...

    def canonical(self, y): ...

    def start_axes(self, points: int = ...) -> tuple[np.ndarray, ...]: ...


@dataclass(frozen=True)
class TiltedDoubleWell:
    r"""The toy :class:`Minimisable` of this package's examples: :math:`S = (y^2 - 1)^2 + (P - P_0)\,y` on
    :math:`y \in [-2, 2]`, one coordinate, with :math:`P_0` = ``balance``.  Its minima near :math:`y = \pm 1`
    have equal action at :math:`P = P_0`, and each is born at a fold, :math:`P = P_0 \mp 8/(3\sqrt3)`."""

    balance: float = 2.0
    bounds = np.array([[-2.0, 2.0]])

    def canonical(self, y):
        return y

    def value(self, y, P):
        return (y[0] ** 2 - 1) ** 2 + (P - self.balance) * y[0]

    def gradient(self, y, P):
        return (4 * y[0] * (y[0] ** 2 - 1) + P - self.balance)[None]

    def hessian(self, y, P):
        return (12 * y[0] ** 2 - 4 + 0 * P)[None, None]

    def start_axes(self, points: int = 201):
        return (np.linspace(-2.0, 2.0, points),)


def discrete_minima(values: np.ndarray) -> np.ndarray:
    """Mask of the grid points below all their axis neighbours (outside the grid counts as +inf).

    ``values`` has shape ``(n_1, ..., n_k, n_P)``: a ``k``-dimensional grid for every ``P``.
    A point on the grid's edge qualifies, so that Newton can follow a minimum that lies
    between the edge row and the next one.
    """
    finite = np.where(np.isfinite(values), values, np.inf)
    mask = np.isfinite(values)
    for axis in range(values.ndim - 1):
        moved = np.moveaxis(finite, axis, 0)
        padded = np.concatenate([np.full_like(moved[:1], np.inf), moved, np.full_like(moved[:1], np.inf)])
        local = (moved < padded[:-2]) & (moved <= padded[2:])
        mask &= np.moveaxis(local, 0, axis)
    return mask


def _safe(function, *args):
    with np.errstate(all="ignore"):
        return function(*args)


def newton_terms(action: Minimisable, y, P, ctx=None) -> tuple:
    """``(gradient, hessian)`` of ``action`` at ``y``: one fused call where the action shares work
    between them (``gradient_and_hessian``), else its ``gradient`` and ``hessian``; with an mpmath
    context ``ctx``, the ``_mp`` methods."""
    suffix, arguments = ("", (y, P)) if ctx is None else ("_mp", (y, P, ctx))
    fused = getattr(action, f"gradient_and_hessian{suffix}", None)
    if fused is not None:
        return fused(*arguments)
    return getattr(action, f"gradient{suffix}")(*arguments), getattr(action, f"hessian{suffix}")(*arguments)


def symmetric_eigen(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.linalg.eigh`` of a stack of symmetric matrices ``(n, k, k)``; for ``k = 1`` without LAPACK
    (the eigenvalue is the entry and the eigenvector is 1: one-coordinate actions are the common case).

    >>> values, vectors = symmetric_eigen(np.array([[[2.0]], [[-3.0]]]))
    >>> values.tolist(), vectors.tolist()
    ([[2.0], [-3.0]], [[[1.0]], [[1.0]]])
    """
    if matrices.shape[-1] == 1:
        return matrices[:, :, 0].copy(), np.ones_like(matrices)
    return np.linalg.eigh(matrices)


def newton_polish(action: Minimisable, y, P, *, iterations: int = 200, tolerance: float = 1e-11):
    r"""Saddle-free Newton with backtracking from every column of ``y`` (shape ``(k, n)``).

    Returns ``(y, converged)``; ``P`` broadcasts against ``y[0]``.  A column has converged
    when its last full Newton step was below ``tolerance * (unit + |y|)`` (``action.unit``: natural size of the
    coordinates, 1 unless the action sets it), or when, close to a
    minimum (positive-definite Hessian, step below ``1e-6``), full steps stop shrinking at a
    size below ``1e-7``: the rounding floor of an ill-conditioned action.  Close to a minimum
    full steps are taken without line search (action differences are rounding noise there).
    A column where the action or its derivatives are not finite stops, not converged, and so does
    a column whose line search ended where it started (every later iteration would repeat it).
    """
    y = np.array(y, dtype=float)
    P = np.broadcast_to(np.asarray(P, dtype=float), y.shape[1:]).copy()
    low, high = action.bounds[:, 0:1], action.bounds[:, 1:2]
    unit = float(getattr(action, "unit", 1.0))  # natural size of the coordinates (L**(r/2) for matched linear)
    converged = np.zeros(y.shape[1], dtype=bool)
    done = np.zeros(y.shape[1], dtype=bool)
    previous = np.full(y.shape[1], np.inf)
    for _ in range(iterations):
        active = ~done
        if not active.any():
            break
        ya, Pa = y[:, active], P[active]
        gradient, hessian = _safe(newton_terms, action, ya, Pa)
        gradient, hessian = np.array(gradient, dtype=float), np.moveaxis(hessian, -1, 0).astype(float)
        bad = ~(np.isfinite(gradient).all(0) & np.isfinite(hessian).all((1, 2)))
        gradient[:, bad], hessian[bad] = 0.0, np.eye(y.shape[0])
        eigenvalues, eigenvectors = symmetric_eigen(hessian)
        floor = 1e-12 * np.maximum(np.abs(eigenvalues).max(axis=1, keepdims=True), 1e-300)
        along = np.einsum("nki,kn->ni", eigenvectors, gradient) / np.maximum(np.abs(eigenvalues), floor)
        step = -np.einsum("nki,ni->kn", eigenvectors, along)
        slope = np.einsum("kn,kn->n", gradient, step)
        size = np.abs(step).max(axis=0) / (unit + np.abs(ya).max(axis=0))
        quadratic = (eigenvalues[:, 0] > 0) & (size <= 1e-6)
        S0 = None if quadratic.all() else _safe(action.value, ya, Pa)  # only the line search needs it
        if S0 is not None:
            bad |= ~np.isfinite(S0)  # such a column stays where it is and stops, not converged
        scale = np.ones(step.shape[1])
        accepted = quadratic | bad
        trial = np.where(quadratic & ~bad, np.clip(ya + step, low, high), ya)
        for _halving in range(60):
            if accepted.all():
                break
            candidate = np.clip(ya + scale * step, low, high)
            S1 = _safe(action.value, candidate, Pa)
            assert S0 is not None  # the line search runs only when some column is not quadratic
            take = ~accepted & np.isfinite(S1) & (S1 <= S0 + 1e-4 * scale * slope + 1e-13 * np.abs(S0))
            trial = np.where(take, candidate, trial)
            accepted |= take
            scale = np.where(accepted, scale, 0.5 * scale)
        y[:, active] = np.where(accepted, trial, ya)
        stalled = quadratic & (size >= 0.5 * previous[active]) & (size <= 1e-7)
        finished = (size <= tolerance) | ~accepted | stalled | bad
        position = np.flatnonzero(active)
        converged[position[finished]] = (((size <= tolerance) | stalled | (size <= 1e-6)) & ~bad)[finished]
        # a column that did not move would repeat this iteration exactly until the iterations run out
        # (only ``stalled`` reads the previous size), so it stops now, not converged, as it would then
        repeats = ~finished & (y[:, active] == ya).all(axis=0) & ~(quadratic & (size <= 1e-7))
        done[position[finished | repeats]] = True
        previous[position] = size
    return y, converged


@dataclass(frozen=True)
class LocalMinima:
    """Every local minimum found at every ``P``.

    ``y``: shape ``(k, M)``, ``action``: ``(M,)``, ``index``: ``(M,)`` position in ``P``.
    """

    P: np.ndarray
    y: np.ndarray
    action: np.ndarray
    index: np.ndarray

    def count(self) -> np.ndarray:
        """Number of distinct local minima at each ``P``."""
        return np.bincount(self.index, minlength=len(self.P))

    def global_minimum(self) -> tuple[np.ndarray, np.ndarray]:
        """``(y, S)`` of the lowest minimum at each ``P``: shapes ``(k, n)`` and ``(n,)``."""
        if len(self.index) == 0:
            raise DivergenceError(f"no local minimum found at P = {self.P[0]:.6g}")
        order = np.lexsort((self.action, self.index))
        first = order[np.r_[True, self.index[order][1:] != self.index[order][:-1]]]
        if len(first) != len(self.P):
            missing = sorted(set(range(len(self.P))) - set(self.index[first].tolist()))
            raise DivergenceError(f"no local minimum found at P = {self.P[missing[0]]:.6g}")
        return self.y[:, first], self.action[first]

    def at(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """``(y, S)`` of the minima at ``P[i]``, sorted by the first coordinate."""
        chosen = np.flatnonzero(self.index == i)
        chosen = chosen[np.argsort(self.y[-1, chosen])]
        return self.y[:, chosen], self.action[chosen]


def _merge_duplicates(y, S, index, tolerance):
    """Drop every minimum within ``tolerance`` (relative, max norm) of its predecessor at the same ``P`` in sorted order."""
    order = np.lexsort((*y[::-1], index))
    y, S, index = y[:, order], S[order], index[order]
    gap = np.abs(y[:, 1:] - y[:, :-1]).max(axis=0, initial=0.0)
    duplicate = (index[1:] == index[:-1]) & (gap <= tolerance * (1 + np.abs(y[:, 1:]).max(axis=0, initial=0.0)))
    keep = np.concatenate([[True], ~duplicate]) if len(S) else np.ones(0, dtype=bool)
    return y[:, keep], S[keep], index[keep]


def _smallest_curvature(action: Minimisable, y, P):
    """Smallest Hessian eigenvalue and its eigenvector (shape ``(k, n)``) at each column of ``y``."""
    hessian = np.moveaxis(_safe(action.hessian, y, P), -1, 0)
    finite = np.isfinite(hessian).all(axis=(1, 2))
    hessian[~finite] = 0.0
    eigenvalues, eigenvectors = symmetric_eigen(hessian)
    return np.where(finite, eigenvalues[:, 0], -np.inf), eigenvectors[:, :, 0].T


def _leave_saddles(action: Minimisable, y, converged, P, P_index):
    """Restart the candidates that stopped on a saddle a small step down its unstable direction."""
    curvature, direction = _smallest_curvature(action, y, P[P_index])
    saddle = converged & np.isfinite(curvature) & (curvature < 0)
    if not saddle.any():
        return y, converged, P_index
    width = (action.bounds[:, 1] - action.bounds[:, 0])[:, None]
    nudge = 1e-3 * width * direction[:, saddle]
    starts = np.concatenate([y[:, saddle] + nudge, y[:, saddle] - nudge], axis=1)
    index = np.concatenate([P_index[saddle], P_index[saddle]])
    restarted, ok = newton_polish(action, starts, P[index])
    return (np.concatenate([y[:, ~saddle], restarted], axis=1),
            np.concatenate([converged[~saddle], ok]), np.concatenate([P_index[~saddle], index]))


def _polished_minima(action: Minimisable, starts, P, P_index):
    """Polish ``starts`` at ``P[P_index]``; keep converged interior points with a positive Hessian."""
    y, converged = newton_polish(action, starts, P[P_index])
    y, converged, P_index = _leave_saddles(action, y, converged, P, P_index)
    y = action.canonical(y)
    inside = np.all((y > action.bounds[:, :1] + 1e-9) & (y < action.bounds[:, 1:] - 1e-9), axis=0)
    keep = converged & inside & (_smallest_curvature(action, y, P[P_index])[0] >= 0)
    return y[:, keep], P_index[keep]


def unrepresented(seeds, seed_index, found, found_index, cell) -> np.ndarray:
    """Mask of the ``seeds`` (shape ``(k, n)``, at grid positions ``seed_index``) farther than one
    start-grid ``cell`` (per coordinate) from every minimum ``found`` at the same position.

    A seed within a cell of a minimum already found there lies in that minimum's basin to the
    start grid's resolution, so continuation need not polish it again.

    >>> unrepresented(np.array([[0.0, 1.0, 0.0]]), np.array([0, 0, 1]), np.array([[0.01]]), np.array([0]),
    ...               np.array([0.1])).tolist()
    [False, True, True]
    """
    if seeds.shape[1] == 0 or found.shape[1] == 0:
        return np.ones(seeds.shape[1], dtype=bool)
    order = np.argsort(found_index, kind="stable")
    found, found_index = found[:, order], found_index[order]
    per_point = np.bincount(found_index, minlength=int(max(found_index.max(), seed_index.max())) + 1)
    first = np.concatenate([[0], np.cumsum(per_point)[:-1]])
    slot = np.arange(len(found_index)) - first[found_index]
    table = np.full((len(per_point), per_point.max(), found.shape[0]), np.inf)
    table[found_index, slot] = found.T
    gap = np.abs(table[seed_index] - seeds.T[:, None, :]) / cell
    return ~(gap.max(axis=2) <= 1.0).any(axis=1)


def local_minima(action: Minimisable, P, *, points: int | None = None) -> LocalMinima:
    """All local minima of ``action`` at each value of ``P`` (see the module docstring).

    Raises :class:`DivergenceError` when the action is not finite anywhere on the grid.
    """
    P = np.atleast_1d(np.asarray(P, dtype=float))
    if not np.all(np.isfinite(P)) or np.any(P <= 0):
        raise DivergenceError("P must be positive and finite")
    axes = action.start_axes() if points is None else action.start_axes(points)
    starts = np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")])
    values = _safe(action.value, starts[:, :, None], P[None, :])
    if not np.isfinite(values).any(axis=0).all():
        raise DivergenceError("the reduced action is not finite anywhere on the start grid")
    grid_shape = tuple(len(axis) for axis in axes)
    candidates = discrete_minima(values.reshape(*grid_shape, len(P))).reshape(starts.shape[1], len(P))
    start_index, P_index = np.nonzero(candidates)
    y, P_index = _polished_minima(action, starts[:, start_index], P, P_index)
    neighbours = np.concatenate([P_index - 1, P_index + 1])
    seeds = np.concatenate([y, y], axis=1)
    cell = np.array([(axis.max() - axis.min()) / max(len(axis) - 1, 1) for axis in axes])
    new = (neighbours >= 0) & (neighbours < len(P))
    new[new] = unrepresented(seeds[:, new], neighbours[new], y, P_index, cell)
    y_seeded, P_seeded = _polished_minima(action, seeds[:, new], P, neighbours[new])
    y = np.concatenate([y, y_seeded], axis=1)
    P_index = np.concatenate([P_index, P_seeded])
    S = _safe(action.value, y, P[P_index])
    y, S, P_index = _merge_duplicates(y, S, P_index, 1e-6)
    return LocalMinima(P, y, S, P_index)


def global_minimum(action: Minimisable, P, *, points: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(y, S)`` of the global minimum at each ``P``; shapes ``(k, len(P))`` and ``(len(P),)``."""
    return local_minima(action, P, points=points).global_minimum()
