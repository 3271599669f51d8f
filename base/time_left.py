r"""The time left of a sweep, from the measured times of its finished points and of the running point's steps.

A run of :math:`N` points (those left when it started) with estimated costs :math:`c_j` (any unit; all 1
without an estimate) finishes its :math:`k`-th point at :math:`t_k` seconds, after the points of
cumulative count :math:`k` and cost :math:`C_k = \sum_{j \le k} c_j`.  The measured times are fitted by

.. math::  t_k \approx a\,k + b\,C_k, \qquad a, b \ge 0,

least squares over the finished points: :math:`a` is a fixed time per point (a GPU waiting on kernel
launches), :math:`b` a time per unit of estimated cost (a CPU doing the arithmetic the cost counts).
With :math:`R` points of cost :math:`C_R` left, the time left is

.. math::  a\,R + b\,C_R - (t_\mathrm{now} - t_k),

the running points' time since the last finish subtracted.  A fit with one of :math:`a, b` at zero is
used where both together would be negative or cannot be told apart (one finished point, equal costs);
of those, the fit with the smaller residual, :math:`a` alone on a tie (the measured rate of finished
points: the point count, not the cost estimate, is what the one measurement supports).

Where the running point reports its steps (``done`` of ``total``, :meth:`TimeLeft.steps`), its time left is
:math:`s\,(\mathrm{total} - \mathrm{done})`, :math:`s` the measured seconds per step since its first report,
and each other point left takes :math:`a + b\,\bar c` (:math:`\bar c` the mean cost left), or, before any
point has finished, :math:`s\,\mathrm{total}`, the running point's measured pace.

Without a finished point or a measured step rate the time left is ``None``: "unknown".  So is an
estimate the running points have already outlasted.

Costs in seconds (``cost_in_seconds``: each part's wall time measured on a reference machine, as the
demo's steps, :func:`emergence.demo.expected_step_seconds`) give an estimate from the start: the
seconds left are :math:`r\,C_R - (t_\mathrm{now} - t_k)` with the rate of this machine against the
reference,

.. math::  r = \frac{t_k + w\,C}{C_k + w\,C},

the measured time of the finished parts over their expected time, the expectation itself counted as the
fraction :math:`w` = :data:`PRIOR_WEIGHT` of the whole run (total cost :math:`C`) measured at rate 1: one
short first part (whose time varies most with start-up and load) moves the estimate little, the long ones
set it.

>>> now = [0.0]
>>> left = TimeLeft(points=4, cost=4.0, clock=lambda: now[0])
>>> left.text()
'time left unknown'
>>> now[0] = 20.0; left.finished(1, 1.0)
>>> left.seconds(), left.text()
(60.0, 'about 60 s left')
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

PRIOR_WEIGHT = 0.02
"""With costs in seconds: the weight of the reference measurement, as a fraction of the whole run (module docstring).

Chosen on the demo runs of 2026-12-05 (`docs/notes/measurements.md`): a machine 2-3x faster than the reference
(a full demo at load 3.5) needs a small weight (0.5 said 2.9x the time left after the first three steps, 0.02
says 1.9x), a first step slowed by a passing load peak a larger one (a quick demo whose first step ran 2.6x
the rate of the others: 0.02 says 2.4x, 0.5 1.5x); the weight only damps the first, short steps."""


class TimeLeft:
    """Seconds left of ``points`` points of total estimated cost ``cost`` (see the module docstring)."""

    def __init__(self, points: float, cost: float | None = None, clock: Callable[[], float] = time.monotonic,
                 cost_in_seconds: bool = False):
        self.points, self.cost, self.clock = points, points if cost is None else cost, clock
        self.cost_in_seconds = cost_in_seconds
        self.started = clock()
        self.finishes: list[tuple[float, float, float]] = []  # (count, cost, seconds) after each finish, cumulative
        self.step_reports: list[tuple[float, float]] = []  # (done, seconds) of the running point
        self.step_total = 0.0

    def finished(self, count: float = 1, cost: float | None = None) -> None:
        """``count`` more points finished, of estimated cost ``cost`` (default ``count``); the running point's steps end."""
        last_count, last_cost = self.finishes[-1][:2] if self.finishes else (0.0, 0.0)
        self.finishes.append((last_count + count, last_cost + (count if cost is None else cost),
                              self.clock() - self.started))
        self.step_reports = []

    def steps(self, done: float, total: float) -> None:
        """The running point has done ``done`` of its ``total`` steps."""
        self.step_total = total
        self.step_reports.append((done, self.clock() - self.started))

    def _fit(self) -> tuple[float, float]:
        """(a, b) of the module docstring, from the finished points."""
        counts, costs, times = (np.array(column, dtype=float) for column in zip(*self.finishes))
        design = np.column_stack([counts, costs])
        candidates = []
        if np.linalg.matrix_rank(design) == 2:
            both = np.linalg.lstsq(design, times, rcond=None)[0]
            if (both >= 0).all():
                candidates.append(both)
        for column in (0, 1):  # a alone, then b alone
            alone = np.zeros(2)
            alone[column] = times @ design[:, column] / (design[:, column] @ design[:, column])
            candidates.append(alone)
        residuals = [float(np.sum((design @ c - times) ** 2)) for c in candidates]
        a, b = candidates[int(np.argmin(residuals))]
        return float(a), float(b)

    def _step_seconds(self) -> float | None:
        """Measured seconds per step of the running point, ``None`` before two reports a step apart."""
        if len(self.step_reports) < 2 or self.step_reports[-1][0] <= self.step_reports[0][0]:
            return None
        (first_done, first_time), (done, now) = self.step_reports[0], self.step_reports[-1]
        return (now - first_time) / (done - first_done)

    def seconds(self) -> float | None:
        """Seconds left, ``None`` where nothing measured supports an estimate."""
        count, cost, last = self.finishes[-1] if self.finishes else (0.0, 0.0, 0.0)
        points_left, cost_left = self.points - count, self.cost - cost
        if points_left <= 0:
            return 0.0
        if self.cost_in_seconds:
            return self._scaled_seconds(cost, cost_left, last)
        fit = self._fit() if self.finishes else None
        per_step = self._step_seconds()
        if per_step is not None:
            running = per_step * (self.step_total - self.step_reports[-1][0])
            each_other = per_step * self.step_total if fit is None else fit[0] + fit[1] * cost_left / points_left
            return running + (points_left - 1) * each_other
        if fit is None:
            return None
        left = fit[0] * points_left + fit[1] * cost_left - (self.clock() - self.started - last)
        return left if left >= 0 else None

    def _scaled_seconds(self, cost_done: float, cost_left: float, last: float) -> float | None:
        """Seconds left when the costs are reference seconds: the rate r of the module docstring times the cost left."""
        prior = PRIOR_WEIGHT * self.cost
        rate = (last + prior) / (cost_done + prior) if cost_done + prior > 0 else 1.0
        left = rate * cost_left - (self.clock() - self.started - last)
        return left if left >= 0 else None

    def text(self) -> str:
        """``about N s left`` or ``time left unknown``."""
        seconds = self.seconds()
        return "time left unknown" if seconds is None else f"about {seconds:.0f} s left"
