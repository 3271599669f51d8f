"""Every kernel the project generates: committed text == regeneration (with the pinned SymPy), and
SymPy at 50 digits == generated NumPy code == generated mpmath twin at random points (any SymPy)."""

import importlib
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.theory.codegen import Kernel
from emergence.theory.kernel_registry import all_kernel_modules
from generated_files import assert_committed_equal_fresh, regenerate, requires_pinned_sympy

MODULES = all_kernel_modules()
KERNELS = [(m.name, k) for m in MODULES for k in m.kernels]


@requires_pinned_sympy
def test_committed_kernels_equal_a_fresh_regeneration():
    assert_committed_equal_fresh(regenerate.kernel_files(), "python tools/regenerate.py kernels")
    assert regenerate.stale_kernel_files() == [], "generated modules no kernel renders: run python tools/regenerate.py kernels"


def draw_argument(draw, low: float, high: float, kind: str) -> float:
    if kind == "int":
        return float(draw(st.integers(int(low), int(high))))
    if kind == "log":
        return math.exp(draw(st.floats(math.log(low), math.log(high))))
    return draw(st.floats(low, high))


@pytest.mark.parametrize("module_name, kernel", KERNELS, ids=[f"{m}.{k.name}" for m, k in KERNELS])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_symbolic_generated_and_mpmath_agree(module_name, kernel: Kernel, data):
    point = {name: draw_argument(data.draw, *domain) for name, domain in kernel.domain.items()}
    generated = importlib.import_module(f"emergence.numerics.kernels.{module_name}")
    context = mpmath.mp.clone()
    context.dps = 50
    arguments = [point[a.name] for a in kernel.arguments]
    fast = getattr(generated, kernel.name)(*arguments)
    precise = getattr(generated, f"{kernel.name}_mp")(*arguments, ctx=context)
    if len(kernel.outputs) == 1:
        fast, precise = (fast,), (precise,)
    substitutions = {a: sp.Float(point[a.name], 60) for a in kernel.arguments}
    for (name, expression), value, twin in zip(kernel.outputs, fast, precise):
        exact = numeric_value(expression, substitutions, 50)
        assert exact.is_real, f"{kernel.name}.{name} is not real at {point}"
        scale = max(1.0, abs(float(exact)))
        assert abs(float(np.asarray(value)) - float(exact)) <= float_tolerance(expression, substitutions, exact), (name, point)
        assert abs(twin - context.mpf(str(exact))) <= context.mpf(10) ** -35 * scale, (name, point)


def numeric_value(expression, substitutions, digits: int):
    """``expression`` at ``substitutions`` (symbols to 60-digit Floats), evaluated to ``digits`` significant digits.

    ``xreplace`` swaps the symbols for their Floats as a tree rewrite; ``subs`` gives the same number here (the
    expressions hold no bound variables) at fifty times the cost."""
    return expression.xreplace(substitutions).evalf(digits)


def absolute_sum(expression, substitutions, seen: dict | None = None) -> float:
    r"""The expression evaluated with every term of every sum made positive (:math:`\sum|t_i|`, recursively).

    Floating-point evaluation of a sum is accurate to a few ulps of the sum of its terms' sizes,
    not of its result (Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 4); where
    terms cancel this is the honest scale of the error.  A power's relative error is its base's
    times the exponent.  ``seen`` keeps each subexpression's value once: a Hessian repeats its subtrees.
    """
    seen = {} if seen is None else seen
    if expression in seen:
        return seen[expression]
    if expression.is_Add:
        value = sum(absolute_sum(term, substitutions, seen) for term in expression.args)
    elif expression.is_Mul:
        value = math.prod(absolute_sum(factor, substitutions, seen) for factor in expression.args)
    else:
        value = abs(float(numeric_value(expression, substitutions, 30)))
        if expression.is_Pow and expression.exp.is_Number:
            base = abs(float(numeric_value(expression.base, substitutions, 30)))
            if base > 0:
                value *= (absolute_sum(expression.base, substitutions, seen) / base) ** abs(float(expression.exp))
    seen[expression] = value
    return value


def float_tolerance(expression, substitutions, exact) -> float:
    """1e-9 relative, or about 4.5 ulp of the expression's sum of absolute terms where terms cancel."""
    return 1e-9 * max(1.0, abs(float(exact))) + 1e-15 * absolute_sum(expression, substitutions)


def test_generated_hessian_at_a_cancelling_point_is_accurate_to_its_terms():
    """Pinned from a CI draw: d2S/dc1dcG = 8.37 from terms of total size 5.7e7; float64 is 1.2e-9 off (relative)."""
    point = {"c1": 0.0, "cG": 0.5, "P": 162754.79141900392, "L": 20.085536923187668, "V": 2.718281828459045,
             "s1": 1.0, "sG": 1.0, "lam": 2.718281828459045, "beta": 1.0}
    kernel = next(k for m, k in KERNELS if k.name == "linear_action_hessian")
    generated = importlib.import_module("emergence.numerics.kernels.copy_head_linear")
    values = generated.linear_action_hessian(*[point[a.name] for a in kernel.arguments])
    substitutions = {a: sp.Float(point[a.name], 60) for a in kernel.arguments}
    for (name, expression), value in zip(kernel.outputs, values):
        exact = numeric_value(expression, substitutions, 50)
        assert abs(float(value) - float(exact)) <= float_tolerance(expression, substitutions, exact), name
    expression = dict(kernel.outputs)["d2S_dc1dcG"]
    assert absolute_sum(expression, substitutions) > 1e6 * abs(float(numeric_value(expression, substitutions, 30)))
