r"""The second-order point :math:`P_1` and the critical exponent of the order parameter.

At the symmetric point :math:`y_0` (linear attention: :math:`c_1 = c_G = 0`, fixed by the
:math:`G \to -G` symmetry of the action) the smallest eigenvalue :math:`\kappa(P)` of the
Hessian :math:`\partial^2 S/\partial y^2` is positive while the symmetric state is stable;
:math:`P_1` is the root of :math:`\kappa(P) = 0` (the Landau coefficient of the soft mode
changes sign).  The root is bracketed on a logarithmic scan and refined by Brent's method in
:math:`\ln P`.  The method fails (returns ``None``) when :math:`\kappa` does not change sign
on the scanned range, and it says nothing about whether the transition is continuous: that
is read off the solution, by :func:`critical_exponent`.

Above :math:`P_1` the order parameter grows as :math:`c_1 \propto (P - P_1)^{\beta}`;
:func:`critical_exponent` fits :math:`\beta` by least squares in log-log coordinates on
:math:`P = P_1(1+\epsilon)`, :math:`\epsilon` log-spaced, and reports the local slopes.

A toy Landau action :math:`S = \tfrac12 (1 - P)\,y^2 + \tfrac14 y^4` has :math:`P_1 = 1` and
:math:`y_\ast = (P-1)^{1/2}`:

>>> import numpy as np
>>> class Landau:
...     symmetric_point = np.zeros(1)
...     bounds = np.array([[-3.0, 3.0]])
...     def canonical(self, y): return np.abs(y)
...     def value(self, y, P): return 0.5 * (1 - P) * y[0] ** 2 + 0.25 * y[0] ** 4
...     def gradient(self, y, P): return ((1 - P) * y[0] + y[0] ** 3)[None]
...     def hessian(self, y, P): return (1 - P + 3 * y[0] ** 2)[None, None]
...     def order_parameters(self, y): return y[0], 0 * y[0]
...     def start_axes(self, points=61): return (np.linspace(-3, 3, points),)
>>> round(second_order_point(Landau(), 0.1, 10.0), 12)
1.0
>>> round(critical_exponent(Landau(), 1.0)["beta"], 6)
0.5
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from emergence.numerics.copy_head.minimisation import global_minimum
from emergence.numerics.copy_head.reduced_action import ReducedAction


def symmetric_curvature(action: ReducedAction, P) -> np.ndarray:
    """Smallest Hessian eigenvalue at the symmetric point, for each ``P``."""
    P = np.atleast_1d(np.asarray(P, dtype=float))
    symmetric = action.symmetric_point
    if symmetric is None:
        raise ValueError("the action has no symmetric point")
    point = np.broadcast_to(symmetric[:, None], (len(symmetric), len(P)))
    hessian = np.moveaxis(action.hessian(point, P), -1, 0)
    return np.linalg.eigvalsh(hessian)[:, 0]


def second_order_point(action: ReducedAction, P_low: float, P_high: float, *, scan: int = 200) -> float | None:
    r"""The first :math:`P_1 \in [P_{low}, P_{high}]` where the symmetric point loses stability."""
    if getattr(action, "symmetric_point", None) is None:
        return None
    grid = np.geomspace(P_low, P_high, scan)
    curvature = symmetric_curvature(action, grid)
    crossings = np.flatnonzero((curvature[:-1] > 0) & (curvature[1:] <= 0))
    if len(crossings) == 0:
        return None
    i = crossings[0]

    def kappa(log_P):
        return symmetric_curvature(action, np.exp(log_P))[0]

    return float(np.exp(brentq(kappa, np.log(grid[i]), np.log(grid[i + 1]), xtol=1e-14, rtol=1e-15)))


def critical_exponent(action: ReducedAction, P1: float, *, epsilons=None) -> dict:
    r"""Fit :math:`c_1 \propto (P - P_1)^\beta` from the global minimum just above :math:`P_1`.

    Returns ``beta`` (least-squares slope), ``local_exponents`` (slopes between neighbouring
    points), ``spread`` (their max - min), ``epsilons`` and the order parameter ``c1``.
    """
    epsilons = np.geomspace(1e-6, 1e-3, 7) if epsilons is None else np.asarray(epsilons, dtype=float)
    y, _ = global_minimum(action, P1 * (1 + epsilons))
    c1 = np.abs(action.order_parameters(y)[0])
    x, z = np.log(epsilons), np.log(c1)
    beta = float(np.polyfit(x, z, 1)[0])
    local = np.diff(z) / np.diff(x)
    return {
        "beta": beta,
        "local_exponents": local.tolist(),
        "spread": float(local.max() - local.min()),
        "epsilons": epsilons.tolist(),
        "c1": c1.tolist(),
    }
