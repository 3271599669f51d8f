r"""Is there a precursor before a first-order jump?  A criterion on a phase-diagram record that can fail.

"No precursor" (the paper's softmax claim) means the attention pattern does not change on the
way to the jump: no order parameter builds up continuously before :math:`P^\ast` (no
intermediate pooling state).  For each order parameter :math:`o \in \{c_1, c_G\}` of the
record's global minimum, with :math:`P_0` the first grid point and :math:`P_\pm` the grid
points on either side of the jump:

.. math:: \Delta_\mathrm{approach}(o) = \max_{P_0 \le P < P^\ast} |o(P) - o(P_0)|,\qquad
   \Delta_\mathrm{jump}(o) = |o(P_+) - o(P_-)|,

and the **precursor fraction** is the largest share of an order parameter's change that
happens before the jump, :math:`f = \max_o \Delta_\mathrm{approach}/(\Delta_\mathrm{approach} +
\Delta_\mathrm{jump})` (order parameters that move by less than ``1e-12`` are skipped).  The
claim holds when there is a jump and :math:`f \le` :data:`PRECURSOR_THRESHOLD`.  It fails on
linear attention of model T where its copy mode switches on by a jump (L/V of order 256 and
above): uniform pooling :math:`c_1` grows continuously from :math:`P_1` on, long before the
jump (``tests/test_copy_head_precursor.py``).

>>> record = {"P": [1, 2, 3, 4], "c1": [1, 1, 1, 0], "cG": [0, 0.001, 0.002, 1], "transitions": {"P_star": 3.5}}
>>> verdict = precursor_verdict(record)
>>> verdict["holds"], round(verdict["fraction"], 4)
(True, 0.002)
>>> precursor_verdict({**record, "cG": [0, 0.3, 0.6, 1]})["holds"]
False
"""

from __future__ import annotations

import math

PRECURSOR_THRESHOLD = 0.05
"""Largest share of an order parameter's change allowed before the jump for 'no precursor'."""

ORDER_PARAMETERS = ("c1", "cG")


def precursor_verdict(record: dict, threshold: float = PRECURSOR_THRESHOLD) -> dict:
    """``fraction`` (largest share of change before the jump), ``by_order_parameter``, ``holds`` and ``reason``
    for a phase-diagram record (keys ``P``, ``c1``, ``cG``, ``transitions.P_star``; ``None`` values skipped)."""
    P_star = record["transitions"].get("P_star")
    if P_star is None:
        return {"fraction": None, "by_order_parameter": {}, "holds": False, "threshold": threshold,
                "reason": "no first-order jump on the grid"}
    P = record["P"]
    below = [i for i, p in enumerate(P) if p < P_star]
    above = [i for i, p in enumerate(P) if p > P_star]
    if not below or not above:
        return {"fraction": None, "by_order_parameter": {}, "holds": False, "threshold": threshold,
                "reason": "the jump lies at the edge of the grid"}
    shares = {}
    for name in ORDER_PARAMETERS:
        values = record[name]
        if any(values[i] is None for i in (*below, above[0])):
            return {"fraction": None, "by_order_parameter": {}, "holds": False, "threshold": threshold,
                    "reason": f"{name} is missing on the grid"}
        start = values[below[0]]
        approach = max(abs(values[i] - start) for i in below)
        jump = abs(values[above[0]] - values[below[-1]])
        if approach + jump > 1e-12:
            shares[name] = approach / (approach + jump)
    fraction = max(shares.values()) if shares else math.nan
    holds = bool(shares) and fraction <= threshold
    reason = (f"largest share of change before the jump {fraction:.3g} "
              f"({'≤' if holds else '>'} {threshold}) in {max(shares, key=shares.__getitem__) if shares else '—'}")
    return {"fraction": fraction, "by_order_parameter": shares, "holds": holds, "threshold": threshold,
            "reason": reason}
