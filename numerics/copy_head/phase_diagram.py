r"""The copy-head phase diagram: global-minimum order parameters, action, loss and transitions versus P.

:func:`phase_diagram` minimises the reduced action on a grid of ``P`` (all points in one
vectorised pass, :mod:`.minimisation`) and locates the transitions on it:

- ``P1``: the second-order point (:mod:`.second_order`), where the symmetric state loses
  stability; with ``critical_exponent`` :math:`\beta` of :math:`c_1 \propto (P-P_1)^\beta`;
- ``crossover`` (linear attention): the copy-mode onset, steepest rise of :math:`c_G` in
  :math:`\ln P` (:mod:`.crossover`); where the copy mode switches on by a jump of the
  global minimum (model T at :math:`L/V \gtrsim 256`), the jump ``P_star`` itself;
  ``None`` for softmax attention, whose copy transition is ``P_star``;
- ``crossover_literal``: the first :math:`c_G = c_1` point.  For softmax attention rows sum to
  one, so :math:`c_1 = 1 - c_G` and the point is :math:`c_G = 1/2`, i.e. where the mean
  attention on the previous token reaches :math:`a_G = (L+1)/(2L) \approx 1/2`.  It is a
  statement about the strength of the head, not a transition: with readout variance
  :math:`\lambda = 1` the jump at ``P_star`` lands on a weak head and this point comes much
  later (at L = 256, V = 16: ``P_star`` = 5.3e3 on a_G = 0.11, ``crossover_literal`` = 4.19e5);
  when the jump lands above a_G = 1/2 it is reached by the jump itself (then it equals
  ``P_star``), as on the default model (:math:`\lambda = 1/L`: 16605.1 at L = 256, V = 16);
- ``P_star`` and ``spinodals``: the coexistence point and the metastable window
  (:mod:`.first_order`).

:func:`softmax_copy_transition` says how the softmax copy head switches on along a diagram: by a jump
(``first order``, at ``P_star``) or by a continuous rise (``continuous``, at its ``onset``, the steepest rise of
:math:`c_G` in :math:`\ln P`, :func:`~.crossover.copy_onset`), as it does for correlated or skewed token
processes.

A transition that does not occur inside the grid is ``None``, and the record's
``missing_transitions`` says why (:func:`missing_reasons`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from emergence.numerics.copy_head.crossover import copy_onset, literal_crossover
from emergence.numerics.copy_head.first_order import coexistence_point, spinodals
from emergence.numerics.copy_head.minimisation import LocalMinima, local_minima
from emergence.numerics.copy_head.second_order import critical_exponent, second_order_point
from emergence.base.errors import EmergenceError


@dataclass(frozen=True)
class GlobalMinimumCurves:
    """Global-minimum curves on the grid ``P`` and the transitions found on it."""

    attention: str
    L: float
    V: float
    P: np.ndarray
    c1: np.ndarray
    cG: np.ndarray
    loss: np.ndarray
    action: np.ndarray
    minima_count: np.ndarray
    minima: LocalMinima
    transitions: dict = field(default_factory=dict)
    why: dict = field(default_factory=dict)
    """Specific reasons for transitions that could not be located (they override the generic ones)."""

    def as_record(self, convention) -> dict:
        """The JSON record: ``attention, L, V, convention, P, c1, cG, loss, transitions``
        (non-finite values as ``None``)."""
        return {
            "attention": self.attention,
            "L": int(self.L),
            "V": int(self.V),
            "convention": convention.as_dict(),
            "P": _finite(self.P),
            "c1": _finite(self.c1),
            "cG": _finite(self.cG),
            "aG": _finite(attention_on_previous(self.c1, self.cG, self.L)),
            "copy_fraction": _finite(copy_fraction(self.c1, self.cG, self.L)),
            "loss": _finite(self.loss),
            "transitions": self.transitions,
            "missing_transitions": {**missing_reasons(self.attention, self.transitions, self.P),
                                    **{k: v for k, v in self.why.items() if self.transitions.get(k) is None}},
        }


def attention_on_previous(c1, cG, L):
    r""":math:`a_G = \operatorname{tr}(A^TS)/L = (c_1 + Lc_G)/L` for :math:`A = c_1J/L + c_GS` (cyclic shift)."""
    return (np.asarray(c1, dtype=float) + L * np.asarray(cG, dtype=float)) / L


def copy_fraction(c1, cG, L):
    r"""cos^2(A, S): the fraction of :math:`\|A\|_F^2` along the copy pattern, for :math:`A = c_1J/L + c_GS`.

    :math:`\langle A, S\rangle = c_1 + Lc_G`, :math:`\|A\|^2 = c_1^2 + 2c_1c_G + Lc_G^2`,
    :math:`\|S\|^2 = L`; ``nan`` at A = 0.

    >>> float(copy_fraction(0.0, 1.0, 8)), float(copy_fraction(1.0, 0.0, 8))
    (1.0, 0.125)
    """
    c1, cG = np.asarray(c1, dtype=float), np.asarray(cG, dtype=float)
    with np.errstate(all="ignore"):
        return (c1 + L * cG) ** 2 / (L * (c1**2 + 2 * c1 * cG + L * cG**2))


def missing_reasons(attention: str, transitions: dict, P) -> dict[str, str]:
    """Why each ``None`` transition is missing (one line each)."""
    grid = f"on the grid P in [{float(np.min(P)):.6g}, {float(np.max(P)):.6g}]"
    reasons = {
        "P1": f"the symmetric state does not lose stability {grid}",
        "critical_exponent": "no second-order point P1 inside the grid",
        "crossover": ("softmax attention has no crossover: its copy transition is P_star" if attention == "softmax"
                      else f"no rise of the copy order parameter c_G inside the grid {grid}"),
        "crossover_literal": f"c_G does not reach c_1 {grid}",
        "P_star": f"the global minimum does not jump {grid}",
        "spinodals": ("spinodals are located for one order parameter (softmax attention) only" if attention == "linear"
                      else f"no metastable window {grid}"),
    }
    return {name: reason for name, reason in reasons.items() if transitions.get(name) is None}


def _finite(values) -> list:
    return [float(v) if np.isfinite(v) else None for v in np.asarray(values, dtype=float)]


def check_grid(P_min: float, P_max: float, points: int) -> np.ndarray:
    """A logarithmic grid of ``points`` values of ``P``; :class:`EmergenceError` if invalid."""
    if not (np.isfinite(P_min) and np.isfinite(P_max) and 0 < P_min < P_max):
        raise EmergenceError(f"need 0 < P-min < P-max, got {P_min} and {P_max}")
    if points < 8:
        raise EmergenceError(f"need at least 8 grid points, got {points}")
    return np.geomspace(P_min, P_max, int(points))


def _crossover(action, P, y, P_star):
    """The copy onset: steepest rise of c_G, or the jump itself where the copy mode switches on discontinuously.

    Softmax attention has no crossover (its copy transition is the first-order ``P_star``).
    """
    if action.attention == "softmax":
        return None
    return P_star if P_star is not None else copy_onset(action, P, y)


def _guarded(name: str, why: dict, locate):
    """``locate()``, or ``None`` with the reason in ``why[name]`` where a root finder fails on this grid
    (a ``ValueError``: no sign change, merged branches, no fold to follow)."""
    try:
        return locate()
    except ValueError as error:
        why[name] = f"not located on this grid: {error}"
        return None


def transitions_of(action, minima: LocalMinima, y: np.ndarray, why: dict | None = None) -> dict:
    """Every transition of :func:`phase_diagram` from the minima on the grid (reasons for failures in ``why``)."""
    why = why if why is not None else {}
    P = minima.P
    P1 = second_order_point(action, P[0], P[-1])
    P_star = _guarded("P_star", why, lambda: coexistence_point(action, minima))
    one_parameter = len(action.bounds) == 1 or action.attention == "softmax"
    window = _guarded("spinodals", why, lambda: spinodals(action, minima)) if one_parameter else None
    exponent = None
    if P1 is not None and P1 * 1.001 < P[-1]:
        fit = critical_exponent(action, P1)
        exponent = {"beta": fit["beta"], "spread": fit["spread"]}
    return {
        "P1": P1,
        "critical_exponent": exponent,
        "crossover": _guarded("crossover", why, lambda: _crossover(action, P, y, P_star)),
        "crossover_literal": _guarded("crossover_literal", why, lambda: literal_crossover(action, P, y, P_star)),
        "P_star": P_star,
        "spinodals": None if window is None else list(window),
    }


def softmax_copy_transition(action, curves: GlobalMinimumCurves) -> dict:
    r"""How the softmax copy head switches on along ``curves`` (the :func:`phase_diagram` of ``action``).

    ``{"type": "first order", "onset": None}`` where the global minimum jumps (``P_star``);
    ``{"type": "continuous", "onset": P}`` where it does not and the steepest rise of :math:`c_G` in
    :math:`\ln P` (:func:`~.crossover.copy_onset`) lies inside the grid; ``{"type": None, "onset": None}``
    where neither is on the grid.
    """
    if curves.transitions.get("P_star") is not None:
        return {"type": "first order", "onset": None}
    onset = copy_onset(action, curves.P, curves.minima.global_minimum()[0])
    return {"type": None if onset is None else "continuous", "onset": onset}


def phase_diagram(action, P) -> GlobalMinimumCurves:
    """Minimise ``action`` on the grid ``P`` and locate its transitions."""
    P = np.asarray(P, dtype=float)
    minima = local_minima(action, P)
    y, S = minima.global_minimum()
    c1, cG = action.order_parameters(y)
    with np.errstate(all="ignore"):
        loss = np.asarray(action.test_loss(y, P), dtype=float)
    why: dict = {}
    transitions = transitions_of(action, minima, y, why)
    return GlobalMinimumCurves(
        action.attention, action.L, action.V, P, c1, cG, loss, S, minima.count(), minima, transitions, why,
    )
