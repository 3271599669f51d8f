"""Benchmark: softmax phase diagram on a 400-point P grid, generated kernels + vectorised solver vs SciPy per point.

Engine: :func:`emergence.numerics.copy_head.minimisation.global_minimum` on the generated kernels (one
vectorised multi-start Newton pass over the whole grid).  Alternative: what a notebook would
do with the same SymPy action, ``sympy.lambdify`` of the action and its derivative, then
``scipy.optimize.minimize`` (L-BFGS-B) at every P from a uniform and a copy start, keeping
the lower minimum.  Both give the global minimum at every P; the record says how far apart.
Both sides run on one core (element-wise NumPy; SciPy point by point).
"""

from __future__ import annotations

import numpy as np

from emergence.benchmarks.hardware_limits import sides
from emergence.benchmarks.harness import compare
from emergence.benchmarks.kernel_work import KERNEL_WORK, counted_kernel_operations

L, V = 256, 16


def _engine(P):
    from emergence.numerics.copy_head.minimisation import global_minimum
    from emergence.numerics.copy_head.reduced_action import reduced_action

    action = reduced_action("softmax", L, V)
    return lambda: action.attention_on_previous(global_minimum(action, P)[0][0])


def _alternative(P):
    import sympy as sp
    from scipy.optimize import minimize

    from emergence.numerics.copy_head.reduced_action import generated_kernels, model_scales
    from emergence.theory.copy_head.conventions import DEFAULT_CONVENTION
    from emergence.theory.copy_head.softmax import softmax_reduced_action

    expression = softmax_reduced_action()
    symbols = {s.name: s for s in expression.free_symbols}
    sG, lam, beta = model_scales(generated_kernels(), "softmax", L, V, DEFAULT_CONVENTION)
    fixed = expression.subs({symbols["L"]: L, symbols["V"]: V, symbols["sG"]: sG,
                             symbols["lam"]: lam, symbols["beta"]: beta})
    a, p = symbols["aG"], symbols["P"]
    value = sp.lambdify((a, p), fixed, "numpy")
    slope = sp.lambdify((a, p), sp.diff(fixed, a), "numpy")
    bounds = [(1e-9, 1 - 1e-9)]

    def solve():
        result = np.empty(len(P))
        for i, P_i in enumerate(P):
            best = None
            for start in (1.0 / L, 0.5):
                found = minimize(lambda x: value(x[0], P_i), [start], jac=lambda x: [slope(x[0], P_i)],
                                 method="L-BFGS-B", bounds=bounds)
                if best is None or found.fun < best.fun:
                    best = found
            result[i] = best.x[0]
        return result

    return solve


def run(quick: bool = False) -> list[dict]:
    """One record: engine vs SciPy-per-point on the softmax phase diagram (L=256, V=16, 400 P).

    ``quick`` changes nothing here: the row takes about 3 s, and at 100 points the engine's fixed
    cost per call held the ratio at 9-13x on a quiet machine (35x at 400)."""
    points = 400
    P = np.geomspace(1e3, 1e5, points)
    engine, alternative = _engine(P), _alternative(P)
    agreement = float(np.max(np.abs(engine() - alternative())))
    record = compare("copy-head softmax phase diagram", f"L={L} V={V} {points} P",
                     engine, alternative, repeats=3, max_abs_difference_aG=agreement,
                     **sides("cpu", 1, "cpu", 1))
    return [record | {"engine_flops": counted_kernel_operations(engine), "engine_dtype": "float64",
                      "work_counted": KERNEL_WORK}]
