r"""Continuation along a branch of local minima of a reduced action (float64).

A *branch* is a local minimum followed in :math:`P`: Newton (:func:`~.minimisation.newton_polish`) from a
known point of the branch lands on the branch's point at a nearby :math:`P`, as long as the branch exists
there.  The transition modules use three steps of it:

- :func:`branch_point`: the branch's point at :math:`P` from a known point (warm start);
- :func:`action_difference`: :math:`\Delta S(P) = S_2(P) - S_1(P)` of two branches, whose root in
  :math:`\ln P` is a coexistence point (:mod:`.first_order`);
- :func:`branch_birth`: where a branch ends (a fold, :math:`S' = S'' = 0`), by bisection in
  :math:`\ln P`.

On the tilted double well :math:`S = (y^2-1)^2 + (P - 2)\,y` the two minima have equal action at
:math:`P = 2`, and the minimum near :math:`y = -1` is born at the fold :math:`P = 2 - 8/(3\sqrt3)`:

>>> from emergence.numerics.copy_head.minimisation import TiltedDoubleWell
>>> well = TiltedDoubleWell(balance=2.0)
>>> round(float(branch_point(well, [-0.9], 2.0)[0]), 12), round(action_difference(well, [-0.9], [0.9], 2.0), 12)
(-1.0, 0.0)
>>> birth = branch_birth(well, branch_point(well, [-0.9], 2.0), 0.1, 2.0)
>>> abs(birth / (2 - 8 / 27 ** 0.5) - 1) < 1e-5
True
"""

from __future__ import annotations

import numpy as np

from emergence.numerics.copy_head.minimisation import Minimisable, newton_polish


def branch_point(action: Minimisable, y_start, P: float) -> np.ndarray:
    """The local minimum at ``P`` reached by Newton from ``y_start`` (shape ``(k,)``)."""
    y, _ = newton_polish(action, np.asarray(y_start, dtype=float)[:, None], np.array([P]))
    return action.canonical(y)[:, 0]


def action_difference(action: Minimisable, lower_start, upper_start, P: float) -> float:
    r""":math:`S_2 - S_1` at ``P`` of the branches followed from ``lower_start`` (1) and ``upper_start`` (2)."""
    starts = np.stack([np.asarray(lower_start, dtype=float), np.asarray(upper_start, dtype=float)], axis=1)
    lower, upper = action.canonical(newton_polish(action, starts, np.array([P, P]))[0]).T
    if np.abs(upper - lower).max() < 1e-6 * (1 + np.abs(upper).max()):
        raise ValueError("the two branches merged")
    values = action.value(np.stack([lower, upper], axis=1), np.array([P, P]))
    return float(values[1] - values[0])


def branch_birth(action: Minimisable, y_after, P_before: float, P_after: float, *, steps: int = 45) -> float:
    r"""Where the branch through ``y_after`` (a minimum at ``P_after``) ends towards ``P_before``, by bisection in :math:`\ln P`.

    The branch exists at ``P`` when Newton from its last known point stays on it (moves less
    than a tenth of the branch's distance to where it lands when it has vanished).  Accurate
    to about ``1e-6`` relative: the minimum flattens at the fold.
    """
    outside, _ = newton_polish(action, y_after[:, None], np.array([P_before]))
    scale = 0.1 * np.abs(action.canonical(outside)[:, 0] - y_after).max()
    low, high, known = np.log(P_before), np.log(P_after), y_after
    for _ in range(steps):
        middle = 0.5 * (low + high)
        y, converged = newton_polish(action, known[:, None], np.array([np.exp(middle)]))
        y = action.canonical(y)[:, 0]
        if converged[0] and np.abs(y - known).max() < scale:
            high, known = middle, y
        else:
            low = middle
    return float(np.exp(high))
