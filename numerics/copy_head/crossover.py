r"""The copy crossover of linear attention, defined two ways (float64).

- **Onset** (:func:`copy_onset`): the :math:`P` of steepest rise of the copy order parameter
  on a logarithmic axis, :math:`\max_P \, \mathrm{d}c_G/\mathrm{d}\ln P`, along the global
  minimum.  This is where the copy mode switches on; it is the definition under which the
  crossover scale is a property of the copy mode alone.
- **Literal** (:func:`literal_crossover`): the first :math:`P` with :math:`c_G = c_1`.  It
  also depends on how far uniform pooling has grown by then, so it need not scale like the
  onset (see ``docs/copy_head_scaling.md``).

Both are refined from a bracket on the diagram's grid: the onset by bounded Brent
maximisation of a central difference (step ``1e-4`` in :math:`\ln P`) of the warm-started
minimum, the literal point by Brent's root finder.  Both return ``None`` when the point is
not inside the grid (the onset also when the maximum slope sits on the grid's edge).

A toy action with minimum :math:`c_G = \tanh(\ln P)`, :math:`c_1 = 1`: the onset is at
:math:`P = 1` and :math:`c_G = c_1` is never reached.

>>> import numpy as np
>>> class Toy:
...     bounds = np.array([[-3.0, 3.0], [-3.0, 3.0]])
...     def canonical(self, y): return y
...     def value(self, y, P): return (y[0] - 1) ** 2 + (y[1] - np.tanh(np.log(P))) ** 2
...     def gradient(self, y, P): return np.stack([2 * (y[0] - 1), 2 * (y[1] - np.tanh(np.log(P)))])
...     def hessian(self, y, P):
...         two, zero = 2 + 0 * y[0] * P, 0 * y[0] * P
...         return np.array([[two, zero], [zero, two]])
...     def order_parameters(self, y): return y[0], y[1]
>>> P = np.geomspace(0.1, 10, 41)
>>> y = np.stack([np.ones(41), np.tanh(np.log(P))])
>>> round(copy_onset(Toy(), P, y), 6)
1.0
>>> literal_crossover(Toy(), P, y) is None
True
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from emergence.numerics.copy_head.branches import branch_point
from emergence.numerics.copy_head.reduced_action import ReducedAction

LOG_STEP = 1e-4
"""Step in :math:`\\ln P` of the central difference of :math:`c_G`."""


def copy_slope(action: ReducedAction, y_start, log_P: float, step: float = LOG_STEP) -> float:
    r""":math:`\mathrm{d}c_G/\mathrm{d}\ln P` by a central difference along the branch through ``y_start``."""
    y = np.stack([branch_point(action, y_start, np.exp(log_P + s)) for s in (-step, step)], axis=1)
    cG = action.order_parameters(y)[1]
    return float((cG[1] - cG[0]) / (2 * step))


def copy_onset(action: ReducedAction, P: np.ndarray, y: np.ndarray) -> float | None:
    r"""The :math:`P` of steepest rise of :math:`c_G` in :math:`\ln P`, from the global minima ``y`` on grid ``P``."""
    log_P = np.log(P)
    cG = action.order_parameters(y)[1]
    slope = np.diff(cG) / np.diff(log_P)
    i = int(np.argmax(slope))
    if i == 0 or i == len(slope) - 1 or slope[i] <= 0:
        return None
    result = minimize_scalar(
        lambda x: -copy_slope(action, y[:, i], x),
        bounds=(log_P[i - 1], log_P[i + 2]), method="bounded", options={"xatol": 1e-9},
    )
    return float(np.exp(result.x))


def literal_crossover(action: ReducedAction, P: np.ndarray, y: np.ndarray, jump: float | None = None) -> float | None:
    r"""The first :math:`P` on grid ``P`` where :math:`c_G - c_1` changes sign, refined by Brent.

    The sign change is followed along the local minimum through the grid point before it.  When
    that branch does not change sign inside the bracket, the global minimum crossed
    :math:`c_G = c_1` by a jump: the point is the first-order ``jump`` if it lies in the bracket,
    else ``None``.
    """
    c1, cG = action.order_parameters(y)
    difference = cG - c1
    negligible = 1e-9 * np.max(np.abs(np.concatenate([c1, cG])))
    crossings = np.flatnonzero((difference[:-1] < -negligible) & (difference[1:] > negligible))
    if len(crossings) == 0:
        return None
    i = crossings[0]

    def gap(log_P):
        c1_here, cG_here = action.order_parameters(branch_point(action, y[:, i], np.exp(log_P))[:, None])
        return float(cG_here[0] - c1_here[0])

    low, high = np.log(P[i]), np.log(P[i + 1])
    if not gap(low) < 0 < gap(high):
        return jump if jump is not None and P[i] <= jump <= P[i + 1] else None
    return float(np.exp(brentq(gap, low, high, xtol=1e-13)))
