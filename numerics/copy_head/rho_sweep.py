r"""The copy transition against the persistence :math:`\rho`, with a measured process placed on the same axis.

:func:`persistence_sweep` runs :func:`~.token_process.copy_transition` at each :math:`\rho` (``markov:rho=R``):
the coexistence point :math:`P^*` and the spinodals where the jump is first order, the onset where it is
continuous.  A measured process (a corpus) is placed at its **effective persistence** (:func:`effective_persistence`)

.. math:: \rho_{\rm eff} = \frac{\operatorname{tr}J_1 - \sum_u\pi_u^2}{1 - \sum_u\pi_u^2},

the :math:`\rho` of a persistence chain with the same unigram and the same probability that a token repeats the
previous one (such a chain repeats with probability :math:`\rho + (1-\rho)\sum_u\pi_u^2`).  It is a coordinate for
the figure, not a claim that the corpus is such a chain: the corpus's own transition is computed from all its
lag joints.  :func:`adam_point` reads one measured transition's bracket (the jump, the onset, or the linear
:math:`P_1` and crossover) and its verdict from a ``validate copy-head`` record.

>>> joints = np.stack([np.eye(2) / 2, np.array([[0.4, 0.1], [0.1, 0.4]])])   # rho = 0.6 on V = 2
>>> round(effective_persistence(joints), 12)
0.6
"""

from __future__ import annotations

import numpy as np

from emergence.numerics.copy_head.token_process import TokenProcess, copy_transition

SUMMARY_KEYS = ("type", "P_star", "spinodals", "onset", "P1", "crossover")


def effective_persistence(joints: np.ndarray) -> float:
    r""":math:`\rho_{\rm eff}` of lag joints ``(K + 1, V, V)`` (K >= 1): the repeat probability above chance."""
    chance = float(np.sum(np.diag(joints[0]) ** 2))
    return (float(np.trace(joints[1])) - chance) / (1.0 - chance)


def summary(transition: dict) -> dict:
    """The keys of a :func:`~.token_process.copy_transition` record that the sweep keeps."""
    return {key: transition[key] for key in SUMMARY_KEYS if key in transition}


def persistence_sweep(attention: str, L: int, V: int, rhos, P, convention=None) -> list[dict]:
    """One summary per :math:`\\rho` in ``rhos`` (``rho`` added) of the transition on the grid ``P``."""
    return [{"rho": float(rho)} | summary(copy_transition(attention, L, V, TokenProcess("markov", float(rho)), P, convention))
            for rho in rhos]


def measured_point(attention: str, L: int, V: int, process: TokenProcess, P, convention=None) -> dict:
    """A measured process's transition summary, its :math:`\\rho_{\\rm eff}` and its statistics' record."""
    transition = copy_transition(attention, L, V, process, P, convention)
    return {"tokens": process.label(), "rho_eff": effective_persistence(process.joints(L, V))} | summary(transition) | {
        "token_statistics": process.statistics_record(L, V)}


def adam_point(record: dict, rho_eff: dict[str, float], name: str, verdict: dict) -> dict:
    """One measured transition ``name`` of a ``validate copy-head`` record (its JSON) and its ``verdict`` (the
    validation's ``agreement`` of that record): the process, its :math:`\\rho` (the parameter, or ``rho_eff[label]``
    for a measured process), ``kind`` = ``name`` (``"P_star"``: a first-order jump; ``"onset"``: a continuous
    softmax rise; ``"P1"``, ``"crossover"``: the linear second-order point and copy crossover), the measured grid
    bracket and rise (``measured[name]``), the predicted value (``None`` where the theory has none), the sizes
    and attention, the transition's verdict ``status`` (``"within"`` when its bracket lies within the validation's
    factor) and whether the whole record ``passes``."""
    tokens = record.get("settings", {}).get("tokens", "iid")
    process = TokenProcess.parse(tokens) if not tokens.startswith("corpus:") else None
    rho = process.parameter if process is not None and process.kind == "markov" else rho_eff.get(tokens, 0.0)
    measured = (record.get("measured") or {}).get(name) or {}
    predicted = ((record.get("predicted") or {}).get("transitions") or {}).get(name)
    status = ((verdict.get("transitions") or {}).get(name) or {}).get("status")
    return {"tokens": tokens, "rho": rho, "kind": name, "bracket": measured.get("bracket"), "rise": measured.get("rise"),
            "predicted": predicted, "L": record.get("L"), "V": record.get("V"), "attention": record.get("attention"),
            "status": status, "passes": bool(verdict.get("passes"))}
