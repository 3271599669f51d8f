r"""The theory side of a copy-head validation: the predicted phase diagram.

:func:`predicted_phase_diagram` minimises the engine's reduced action (the reconstruction of
:mod:`emergence.theory.copy_head`, through the generated kernels) on the given grid of ``P`` at the
run's own convention, and returns the record of ``emergence phase-diagram`` (keys
``attention, L, V, convention, P, c1, cG, loss, transitions{P1, crossover, P_star,
spinodals, ...}``).  A softmax record says besides how the copy head switches on (``transition_type``:
``first order``, ``continuous`` or ``None`` when neither lies on the grid; :func:`~emergence.numerics.copy_head.
phase_diagram.softmax_copy_transition`) and, where it is continuous, its ``onset`` under ``transitions``: the
steepest rise of :math:`c_G` in :math:`\ln P`, which the verdict compares with the measured onset.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from emergence.numerics.copy_head.phase_diagram import phase_diagram, softmax_copy_transition
from emergence.numerics.copy_head.reduced_action import reduced_action
from emergence.numerics.copy_head.token_process import TokenProcess, token_process_action


def predicted_phase_diagram(attention: str, L: int, V: int, convention, P_grid: Sequence[float],
                            tokens: str = "iid") -> dict:
    """The theory's global-minimum order parameters, loss and transitions on ``P_grid`` for the token process
    ``tokens`` (``iid``, ``markov:rho=R``, ``zipf:alpha=A``, ``corpus:PATH``; the record names a non-i.i.d. process
    under ``tokens`` and its statistics' lag range and provenance under ``token_statistics``)."""
    process = TokenProcess.parse(tokens)
    action = (reduced_action(attention, L, V, convention) if process.kind == "iid"
              else token_process_action(attention, L, V, process, convention))
    diagram = phase_diagram(action, np.asarray(P_grid, dtype=float))
    record = diagram.as_record(convention)
    if attention == "softmax":
        record = _with_copy_onset(record, softmax_copy_transition(action, diagram))
    if process.kind == "iid":
        return record
    return record | {"tokens": process.label(), "token_statistics": process.statistics_record(L, V)}


def _with_copy_onset(record: dict, transition: dict) -> dict:
    """``record`` with the softmax ``transition_type`` and ``transitions["onset"]`` (and why it is missing)."""
    missing = dict(record["missing_transitions"])
    if transition["onset"] is None:
        missing["onset"] = ("the copy head switches on by a jump (P_star)" if transition["type"] == "first order"
                            else "c_G has no steepest rise in ln P inside the grid")
    return record | {"transition_type": transition["type"],
                     "transitions": {**record["transitions"], "onset": transition["onset"]},
                     "missing_transitions": missing}


SADDLE_POINTS = 200


def predicted_saddle(attention: str, L: int, V: int, convention, P_low: float, P_high: float) -> dict:
    """The saddle (MAP) record beside a posterior measurement: :func:`predicted_phase_diagram` on
    ``SADDLE_POINTS`` geometric points of ``[P_low, P_high]`` (one if they are equal), labelled as the MAP
    with the bulk dropped."""
    points = SADDLE_POINTS if P_high > P_low else 1
    record = predicted_phase_diagram(attention, L, V, convention, np.geomspace(P_low, P_high, points))
    return record | {"label": "saddle (MAP; bulk dropped)", "P_star": record["transitions"].get("P_star")}
