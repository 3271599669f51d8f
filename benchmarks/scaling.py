"""Benchmark: time to certify ``softmax-first-order`` up to L = 16384 at 50 digits.

Engine: :func:`emergence.numerics.copy_head.scaling.scaling_report` (float64 location on a vectorised
grid, then mpmath refinement from a tight bracket).  Alternative: the straightforward
high-precision route, ``sympy.lambdify(..., "mpmath")`` of the SymPy action and its
derivatives, Newton in ``a_G`` from the uniform point 1/L and from sqrt(ln L / L) (the copy weight's scale), ``mpmath.findroot`` (secant) on
the action difference started from P* known to 3 digits (as read off a diagram; computed
outside the timing), without the certification of the global minimum, the fit and the
derived-form comparison; fewer sizes in quick mode.  ``workdps`` keeps precision local.
Both sides run on one core (mpmath and element-wise NumPy).
"""

from __future__ import annotations

from functools import partial

from emergence.benchmarks.hardware_limits import sides
from emergence.benchmarks.harness import compare
from emergence.benchmarks.kernel_work import KERNEL_WORK, counted_kernel_operations


def _engine(quick):
    from emergence.numerics.copy_head.scaling import measure_transitions, scaling_report

    # every size solved in the timed call: the report's cache of transitions would make a repeat free
    afresh = partial(measure_transitions, remembered=False)
    return lambda: scaling_report("softmax-first-order", dps=50, fast=quick, transitions=afresh)


def _alternative(quick):
    import sympy as sp

    from emergence.numerics.copy_head.reduced_action import generated_kernels, model_scales
    from emergence.numerics.copy_head.scaling import CLAIMS, measure_transition
    from emergence.theory.copy_head.conventions import DEFAULT_CONVENTION
    from emergence.theory.copy_head.softmax import softmax_reduced_action

    claim = CLAIMS["softmax-first-order"]
    expression = softmax_reduced_action()
    names = ("aG", "P", "L", "V", "sG", "lam", "beta")
    symbols = {s.name: s for s in expression.free_symbols}
    arguments = [symbols[n] for n in names]
    a = symbols["aG"]
    slope = sp.lambdify(arguments, sp.diff(expression, a), "mpmath")
    curvature = sp.lambdify(arguments, sp.diff(expression, a, 2), "mpmath")
    value = sp.lambdify(arguments, expression, "mpmath")

    def coexistence(L, V):
        import mpmath

        scales = model_scales(generated_kernels(), "softmax", L, V, DEFAULT_CONVENTION)
        with mpmath.workdps(50):

            def minimum(start, P):
                x = mpmath.mpf(start)
                for _ in range(200):
                    step = slope(x, P, L, V, *scales) / curvature(x, P, L, V, *scales)
                    while not 0 < x - step < 1:
                        step /= 2
                    x -= step
                    if abs(step) < mpmath.mpf(10) ** -45:
                        return x
                return x

            def difference(log_P):
                P = mpmath.exp(log_P)
                return value(minimum(copy_start, P), P, L, V, *scales) - value(minimum(1.0 / L, P), P, L, V, *scales)

            copy_start = mpmath.mpf(1) / 2
            guess = mpmath.log(estimates[(L, V)])
            return mpmath.exp(mpmath.findroot(difference, (guess - 0.001, guess + 0.001)))

    sizes = claim.sweeps[0].sizes(quick)
    estimates = {(L, V): float(f"{float(measure_transition(claim, L, V, dps=15)):.3g}") for L, V in sizes}
    return lambda: [coexistence(L, V) for L, V in sizes]


def run(quick: bool = False) -> list[dict]:
    """One record: certification time, engine vs mpmath-only bracketing."""
    size = "L=32..4096, 50 digits" if quick else "L=32..16384, 50 digits"
    engine = _engine(quick)
    record = compare("scaling softmax-first-order", size, engine, _alternative(quick), repeats=1 if quick else 2,
                     **sides("cpu", 1, "cpu", 1))
    return [record | {"engine_flops": counted_kernel_operations(engine), "engine_dtype": "float64",
                      "work_counted": KERNEL_WORK}]
