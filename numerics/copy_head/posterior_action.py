r"""The posterior theory's free energy as a :class:`~.minimisation.Minimisable`, for the solver core.

:math:`F(y; P)` of :class:`~.posterior.PosteriorTheory` (Gaussian trials) in the coordinates
:math:`y = (g, \ln t_u, \ln t_v)`:

.. math::
    F(y; P) = \underbrace{\frac{(L-1)g^2}{2s} + n_uI(t_u) + n_vI(t_v)}_{\text{prior and entropy}}
    + S_{\rm data}(q_{\rm eff}(y), m_{\rm eff}(y), L, L; P).

Only :math:`S_{\rm data}` depends on :math:`P`, and it depends on :math:`y` only through the row averages, so
each column of :math:`y` costs one row-average evaluation however many :math:`P` it is paired with
(remembered per column).  Derivatives are central differences of step ``step`` in every coordinate
(:math:`\partial_i F \approx [F(y + he_i) - F(y - he_i)]/2h`, the Hessian from the same stencil and the
four-point cross differences): the row averages are smooth (quadrature, or Monte Carlo on fixed draws), and
the minima the core keeps are where these vanish, to the stencil's :math:`O(h^2)` and the averages'
rounding over :math:`h^2`.

:func:`posterior_coexistence` runs the core (:func:`~.minimisation.local_minima`,
:func:`~.first_order.coexistence_point`) on it: the P* of :meth:`.PosteriorTheory.transition` by the
solver that the saddle uses.
"""

from __future__ import annotations

import numpy as np

from emergence.numerics.copy_head.first_order import coexistence_point
from emergence.numerics.copy_head.minimisation import local_minima
from emergence.numerics.copy_head.posterior import PosteriorTheory, data_action, effective_invariants, entropy_rate


class PosteriorAction:
    """:math:`F(y; P)` of ``theory`` with central-difference derivatives; see the module docstring.

    ``bounds`` are :meth:`.PosteriorTheory.minimise`'s box; ``start_axes`` seed the uniform mode
    (g near 0) to the copy mode (g up to :math:`\\ln L + 6`) at prior-like and squeezed variances.
    """

    def __init__(self, theory: PosteriorTheory, step: float = 1e-4):
        self.theory, self.step = theory, step
        self.bounds = np.array([[-5.0, 40.0], [-6.0, 3.0], [-6.0, 3.0]])
        self._parts: dict[tuple[float, float, float], tuple[float, float, float]] = {}

    def canonical(self, y):
        return y

    def start_axes(self, points: int = 9) -> tuple[np.ndarray, ...]:
        return (np.linspace(-1.0, np.log(self.theory.L) + 6.0, points), np.array([-1.0, 0.0]), np.array([-0.5, 0.0]))

    def _column(self, column) -> tuple[float, float, float]:
        """(prior and entropy, q_eff, m_eff) at one ``y`` column, remembered."""
        key = (float(column[0]), float(column[1]), float(column[2]))
        if key not in self._parts:
            theory = self.theory
            g, t_u, t_v = key[0], np.exp(key[1]), np.exp(key[2])
            averages = theory.row_averages(g, t_u, t_v)
            q_eff, m_eff = effective_invariants(averages["square"], averages["target"], theory.L, theory.V)
            prior = ((theory.L - 1) * g**2 / (2 * theory.s) + theory.token_directions * entropy_rate(t_u)
                     + theory.position_directions * entropy_rate(t_v))
            self._parts[key] = (float(prior), float(q_eff), float(m_eff))
        return self._parts[key]

    def value(self, y, P):
        """:math:`F`, shape ``broadcast(y.shape[1:], P.shape)`` for ``y`` of shape ``(3, ...)``."""
        y = np.asarray(y, dtype=float)
        shape = np.broadcast_shapes(y.shape[1:], np.shape(P))
        columns = np.stack([np.broadcast_to(coordinate, shape).ravel() for coordinate in y])  # (3, n)
        P_flat = np.broadcast_to(np.asarray(P, dtype=float), shape).ravel()
        if columns.shape[1] == 0:
            return np.zeros(shape)
        parts = np.array([self._column(column) for column in columns.T])  # (n, 3)
        theory = self.theory
        data = data_action(parts[:, 1], parts[:, 2], theory.L, theory.L, P_flat, theory.V, theory.lam, theory.beta,
                           theory.L)
        return (parts[:, 0] + data).reshape(shape)

    def _shift(self, y, i: int, amount: float):
        moved = np.array(y, dtype=float)
        moved[i] = moved[i] + amount
        return moved

    def gradient(self, y, P):
        """Central differences, shape ``(3, ...)``."""
        h = self.step
        return np.stack([(self.value(self._shift(y, i, h), P) - self.value(self._shift(y, i, -h), P)) / (2 * h)
                         for i in range(3)])

    def hessian(self, y, P):
        """Central second differences, shape ``(3, 3, ...)`` (symmetric by construction)."""
        h = self.step
        centre = self.value(y, P)
        rows: list[list[np.ndarray]] = [[centre] * 3 for _ in range(3)]
        for i in range(3):
            rows[i][i] = (self.value(self._shift(y, i, h), P) - 2 * centre + self.value(self._shift(y, i, -h), P)) / h**2
            for j in range(i):
                corners = [self.value(self._shift(self._shift(y, i, a * h), j, b * h), P) * a * b
                           for a in (1, -1) for b in (1, -1)]
                rows[i][j] = rows[j][i] = sum(corners) / (4 * h * h)
        return np.stack([np.stack(row) for row in rows])


def posterior_coexistence(theory: PosteriorTheory, P_grid) -> float | None:
    """The posterior P* (equal free energy of the two modes) by the solver core on ``P_grid`` (``None``: no jump)."""
    action = PosteriorAction(theory)
    return coexistence_point(action, local_minima(action, np.asarray(P_grid, dtype=float)))
