r"""The sizes of a scaling claim as a resumable sweep on an executor (``emergence scaling --executor``).

Each size is one sweep point, ``{"experiment": "scaling", "claim", "L", "V", "dps", "convention"}``;
:func:`transition_point` measures its transition
(:func:`emergence.numerics.copy_head.scaling.measure_transition`) and returns it as a decimal
string with ten digits beyond ``dps``, so the value read back from the point's file is the one
computed (every point is written atomically: a rerun resumes, a killed worker costs only its
points).  :func:`executor_transitions` plugs a sweep into
:func:`~emergence.numerics.copy_head.scaling.scaling_report`.

>>> from emergence.base.sweeps import InProcessExecutor
>>> import tempfile
>>> from emergence.numerics.copy_head.scaling_claims import CLAIMS
>>> measure = executor_transitions(InProcessExecutor(), tempfile.mkdtemp(), progress=False)
>>> [round(float(P)) for P in measure(CLAIMS["linear-second-order"], [(4096, 4)], None, 20)]
[26]
"""

from __future__ import annotations

from typing import Any

import mpmath

from emergence.numerics.copy_head.reduced_action import default_convention
from emergence.numerics.copy_head.scaling import measure_transition
from emergence.numerics.copy_head.scaling_claims import CLAIMS
from emergence.theory.copy_head.conventions import Convention
from emergence.base.sweeps import run_sweep


def point_config(claim_name: str, L: int, V: int, dps: int, convention) -> dict[str, Any]:
    """The JSON-able configuration of one size (its hash keys the result file)."""
    return {"experiment": "scaling", "claim": claim_name, "L": int(L), "V": int(V), "dps": int(dps),
            "convention": convention.as_dict()}


def transition_point(config: dict[str, Any]) -> dict[str, str]:
    """``{"transition": decimal string}`` of one size (what a sweep executor runs)."""
    value = measure_transition(CLAIMS[config["claim"]], config["L"], config["V"], Convention(**config["convention"]),
                               config["dps"])
    return {"transition": mpmath.nstr(value, config["dps"] + 10, strip_zeros=False)}


def executor_transitions(executor, out, progress: bool = True):
    """A ``transitions`` argument of :func:`~emergence.numerics.copy_head.scaling.scaling_report` that runs
    every size as a point of a resumable sweep on ``executor``, stored in the folder ``out``."""

    def transitions(claim, sizes, convention, dps, kernels=None):
        if kernels is not None:
            raise ValueError("a sweep executor runs the generated kernels only")
        convention = convention if convention is not None else default_convention()
        configs = [point_config(claim.name, L, V, dps, convention) for L, V in sizes]
        results = run_sweep(transition_point, configs, out, executor=executor, progress=progress,
                            description=f"scaling {claim.name}")
        return [result["transition"] for result in results]

    return transitions
