r"""The posterior theory's free energy as a :class:`~.minimisation.Minimisable`, and its modes and P* by the solver core.

:math:`F(y; P)` of :class:`~.posterior.PosteriorTheory` in its variational coordinates ``y`` (Gaussian trials:
:math:`y = (g, \ln t_u, \ln t_v)`; the row trial: :math:`(m, \ln t_u, \ln t_v, \ln v, \kappa_M, \kappa_Q)`):

.. math::
    F(y; P) = \underbrace{\frac{(L-1)g^2}{2s} + n_uI(t_u) + n_vI(t_v)}_{\text{prior and entropy (the KL)}}
    + S_{\rm data}(q_{\rm eff}(y), m_{\rm eff}(y), L, L; P).

Only :math:`S_{\rm data}` depends on :math:`P`, and it depends on :math:`y` only through the row averages, so
each column of :math:`y` costs one row-average evaluation however many :math:`P` it is paired with
(remembered per column; the theory's :meth:`~.posterior.PosteriorTheory.action_parts`).  Derivatives are central
differences of step ``step`` (:math:`h`) in every coordinate, all from one stencil of :math:`1 + k(k+1)` points
evaluated in one call (:meth:`PosteriorAction.gradient_and_hessian`, what the core's Newton reads):

.. math::
    \partial_i F \approx \frac{F_{+i} - F_{-i}}{2h},\qquad
    \partial_i^2 F \approx \frac{F_{+i} - 2F_0 + F_{-i}}{h^2},\qquad
    \partial_i\partial_j F \approx \frac{F_{+i+j} - F_{+i} - F_{+j} + 2F_0 - F_{-i} - F_{-j} + F_{-i-j}}{2h^2},

with :math:`F_{\pm i} = F(y \pm he_i)`, :math:`F_{\pm i\pm j} = F(y \pm h(e_i + e_j))` (both signs alike): two corners per
pair instead of four (13 points for the three Gaussian-trial coordinates, not 19; both are :math:`O(h^2)`).  The row
averages are smooth (quadrature, or Monte Carlo on fixed draws), and the minima the core keeps are where these vanish,
to the stencil's :math:`O(h^2)` and the averages' rounding over :math:`h^2`.

:func:`posterior_transition` runs the core on it (:func:`~.minimisation.local_minima` on the scan, continued
between neighbouring P; :func:`~.first_order.coexistence_point`: the jump refined, the branches followed by
Newton, the copy branch's birth by :func:`~.branches.branch_birth`, Brent on their free-energy gap): the
posterior theory's modes and P* by the solver that the saddle uses.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from emergence.base.errors import DivergenceError

from emergence.numerics.copy_head.first_order import coexistence_point
from emergence.numerics.copy_head.minimisation import LocalMinima, local_minima
from emergence.numerics.copy_head.posterior import DISTINCT_MODES, PosteriorMode, PosteriorTheory


class PosteriorAction:
    """:math:`F(y; P)` of ``theory`` with central-difference derivatives; see the module docstring.

    ``bounds`` and ``start_axes`` are the theory's (:attr:`.PosteriorTheory.bounds`, its :meth:`minimise`'s box;
    :meth:`.PosteriorTheory.start_axes`, the uniform to the copy mode).
    """

    def __init__(self, theory: PosteriorTheory, step: float = 1e-4):
        self.theory, self.step = theory, step
        self.bounds = np.asarray(theory.bounds, dtype=float)
        self._parts: dict[tuple[float, ...], tuple[float, float, float]] = {}

    def canonical(self, y):
        return y

    def start_axes(self, points: int = 9) -> tuple[np.ndarray, ...]:
        return self.theory.start_axes(points)

    def _column(self, column) -> tuple[float, float, float]:
        """(P-independent part, q_eff, m_eff) at one ``y`` column, remembered."""
        key = tuple(float(x) for x in column)
        if key not in self._parts:
            self._parts[key] = self.theory.action_parts(np.array(key))
        return self._parts[key]

    def value(self, y, P):
        """:math:`F`, shape ``broadcast(y.shape[1:], P.shape)`` for ``y`` of shape ``(k, ...)``."""
        y = np.asarray(y, dtype=float)
        shape = np.broadcast_shapes(y.shape[1:], np.shape(P))
        columns = np.stack([np.broadcast_to(coordinate, shape).ravel() for coordinate in y])  # (k, n)
        P_flat = np.broadcast_to(np.asarray(P, dtype=float), shape).ravel()
        if columns.shape[1] == 0:
            return np.zeros(shape)
        parts = np.array([self._column(column) for column in columns.T])  # (n, 3)
        return (parts[:, 0] + self.theory.data_term(parts[:, 1], parts[:, 2], P_flat)).reshape(shape)

    def _stencil(self, y, P, cross: bool) -> tuple[np.ndarray, ...]:
        r"""``(F_0, F_{+i}, F_{-i}, F_{+i+j}, F_{-i-j})`` at ``y`` (shape ``(k, ...)``): shapes ``(...)``, ``(k, ...)``
        twice and ``(k, k, ...)`` twice (``i > j`` filled, only with ``cross``), all points in one :meth:`value` call."""
        k, h = len(self.bounds), self.step
        unit = np.eye(k)
        pairs = [(i, j) for i in range(k) for j in range(i)] if cross else []
        diagonal = np.array([unit[i] + unit[j] for i, j in pairs]).reshape(-1, k)
        offsets = h * np.concatenate([np.zeros((1, k)), unit, -unit, diagonal, -diagonal])  # (m, k)
        y = np.asarray(y, dtype=float)
        points = y[:, None] + offsets.T.reshape(k, len(offsets), *([1] * (y.ndim - 1)))  # (k, m, ...)
        values = self.value(points, P)  # (m, ...)
        plus_plus, minus_minus = (np.zeros((k, k, *values.shape[1:])) for _ in range(2))
        for n, (i, j) in enumerate(pairs):
            plus_plus[i, j], minus_minus[i, j] = values[1 + 2 * k + n], values[1 + 2 * k + len(pairs) + n]
        return values[0], values[1:1 + k], values[1 + k:1 + 2 * k], plus_plus, minus_minus

    def gradient(self, y, P):
        """Central differences, shape ``(k, ...)``."""
        _, plus, minus, _, _ = self._stencil(y, P, cross=False)
        return (plus - minus) / (2 * self.step)

    def hessian(self, y, P):
        """Central second differences, shape ``(k, k, ...)`` (symmetric by construction)."""
        return self.gradient_and_hessian(y, P)[1]

    def gradient_and_hessian(self, y, P):
        """:meth:`gradient` and :meth:`hessian` from one stencil (see the module docstring)."""
        h, k = self.step, len(self.bounds)
        centre, plus, minus, plus_plus, minus_minus = self._stencil(y, P, cross=True)
        hessian = np.zeros((k, k, *centre.shape))
        for i in range(k):
            hessian[i, i] = (plus[i] - 2 * centre + minus[i]) / h**2
            for j in range(i):
                hessian[i, j] = hessian[j, i] = (plus_plus[i, j] - plus[i] - plus[j] + 2 * centre - minus[i] - minus[j]
                                                 + minus_minus[i, j]) / (2 * h * h)
        return (plus - minus) / (2 * h), hessian


def _modes_at(theory: PosteriorTheory, P: float, minima: LocalMinima, i: int) -> dict[str, PosteriorMode]:
    """``uniform`` and ``copy``: the minima of lowest and highest :math:`a_G` at grid point ``i`` (one and the same
    where only one minimum was found there)."""
    found = [theory.mode_at(P, "uniform", column) for column in minima.at(i)[0].T]
    if not found:
        raise DivergenceError(f"no minimum of the posterior free energy found at P = {P:.6g}")
    copy = max(found, key=lambda mode: mode.aG)
    return {"uniform": min(found, key=lambda mode: mode.aG), "copy": dataclasses.replace(copy, start="copy")}


def posterior_transition(theory: PosteriorTheory, P_grid) -> dict:
    r"""Modes on ``P_grid``, the global posterior curve and :math:`P^*` (equal free energy of the two modes), by the core.

    :func:`~.minimisation.local_minima` finds every minimum at every grid point (start grid, Newton, continuation
    from the neighbouring points, so metastable minima are kept); ``modes[i]`` holds the one of lowest
    :math:`a_G` (``uniform``) and of highest (``copy``), the same one where only one exists.  ``P_star``:
    :func:`~.first_order.coexistence_point`, the root of :math:`F_{\rm copy} - F_{\rm uniform}` between the branches
    across the global minimum's jump (from the copy branch's birth where it is born inside the interval, the
    birth itself when it is born below the uniform one); ``None`` without a jump on the grid.  ``distinct``:
    the two modes' :math:`a_G` differ by more than :data:`~.posterior.DISTINCT_MODES`; ``difference``:
    :math:`F_{\rm copy} - F_{\rm uniform}`.
    """
    P_grid = np.asarray(P_grid, dtype=float)
    action = PosteriorAction(theory)
    minima = local_minima(action, P_grid)
    modes = [_modes_at(theory, float(P), minima, i) for i, P in enumerate(P_grid)]
    distinct = np.array([abs(m["copy"].aG - m["uniform"].aG) > DISTINCT_MODES for m in modes])
    difference = np.array([m["copy"].free_energy - m["uniform"].free_energy for m in modes])
    best = [m["copy"] if m["copy"].free_energy < m["uniform"].free_energy else m["uniform"] for m in modes]
    return {"modes": modes, "global": best, "P_star": coexistence_point(action, minima), "distinct": distinct,
            "difference": difference}


def posterior_coexistence(theory: PosteriorTheory, P_grid) -> float | None:
    """The posterior P* (equal free energy of the two modes) by the solver core on ``P_grid`` (``None``: no jump)."""
    action = PosteriorAction(theory)
    return coexistence_point(action, local_minima(action, np.asarray(P_grid, dtype=float)))
