"""The theory side of a copy-head validation: the predicted phase diagram.

The single entry point :func:`predicted_phase_diagram` returns the dictionary of
``emergence phase-diagram`` (keys ``attention, L, V, convention, P, c1, cG, loss,
transitions{P1, crossover, P_star, spinodals}``).  It needs the copy-head theory's
numerics (``numerics.copy_head``); until that is importable it raises a one-line
:class:`~theory.errors.EmergenceError`.

The lead wires it to the theory: ``numerics.copy_head.phase_diagram(attention=, L=, V=,
convention=, P=)`` must return that dictionary for the given convention.
"""

from __future__ import annotations

import importlib
from typing import Sequence

from theory.errors import EmergenceError

PHASE_DIAGRAM_KEYS = ("attention", "L", "V", "convention", "P", "c1", "cG", "loss", "transitions")


def predicted_phase_diagram(attention: str, L: int, V: int, convention, P_grid: Sequence[float]) -> dict:
    """The theory's global-minimum order parameters, loss and transitions on ``P_grid``."""
    try:
        copy_head = importlib.import_module("numerics.copy_head")
    except ImportError:
        raise EmergenceError("copy-head theory not available yet") from None
    diagram = copy_head.phase_diagram(attention=attention, L=L, V=V, convention=convention, P=list(P_grid))
    missing = [key for key in PHASE_DIAGRAM_KEYS if key not in diagram]
    if missing:
        raise EmergenceError(f"the copy-head phase diagram lacks keys {', '.join(missing)}")
    return diagram
