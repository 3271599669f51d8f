"""Headline numbers of the copy-head solvers at the reference point L = 256, V = 16 (model T).

Each number is recomputed from the generated kernels by the float64 solvers (the same
routines as ``emergence phase-diagram``); ``emergence check`` compares them with
``validation/golden_baseline.json``.  Reconstruction, not the paper's values.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from emergence.validation.golden import HeadlineNumber

L_REFERENCE, V_REFERENCE = 256, 16


@lru_cache(maxsize=None)
def reference_transitions(attention: str) -> dict:
    """Transitions of the model-T phase diagram at the reference point."""
    from emergence.numerics.copy_head.phase_diagram import phase_diagram
    from emergence.numerics.copy_head.reduced_action import reduced_action

    grid = np.geomspace(10.0, 1e7, 400) if attention == "linear" else np.geomspace(1e3, 1e6, 400)
    return phase_diagram(reduced_action(attention, L_REFERENCE, V_REFERENCE), grid).transitions


def headline_numbers() -> list[HeadlineNumber]:
    where = f"model T, L={L_REFERENCE}, V={V_REFERENCE}"
    return [
        HeadlineNumber("copy_head.solver.linear.P1",
                       f"linear P1, root of the smallest Hessian eigenvalue at the symmetric point ({where})",
                       lambda: reference_transitions("linear")["P1"], 1e-9),
        HeadlineNumber("copy_head.solver.linear.crossover_onset", f"linear copy onset, steepest rise of cG ({where})",
                       lambda: reference_transitions("linear")["crossover"], 1e-6),
        HeadlineNumber("copy_head.solver.linear.crossover_literal", f"linear cG = c1 point ({where})",
                       lambda: reference_transitions("linear")["crossover_literal"], 1e-9),
        HeadlineNumber("copy_head.solver.softmax.P_star", f"softmax coexistence point P* ({where})",
                       lambda: reference_transitions("softmax")["P_star"], 1e-9),
        HeadlineNumber("copy_head.solver.softmax.spinodal_low", f"softmax lower spinodal ({where})",
                       lambda: reference_transitions("softmax")["spinodals"][0], 1e-8),
        HeadlineNumber("copy_head.solver.softmax.spinodal_high", f"softmax upper spinodal ({where})",
                       lambda: reference_transitions("softmax")["spinodals"][1], 1e-8),
    ]
