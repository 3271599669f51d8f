"""Every kernel the project generates: committed text == regeneration, and
SymPy at 50 digits == generated NumPy code == generated mpmath twin at random points."""

import importlib
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.codegen import Kernel
from theory.kernel_registry import COMMITTED_KERNELS_DIR, all_kernel_modules, rendered_modules

MODULES = all_kernel_modules()
KERNELS = [(m.name, k) for m in MODULES for k in m.kernels]


def test_committed_kernels_equal_a_fresh_regeneration():
    rendered = rendered_modules("xp")
    committed = {p.name: p.read_text(encoding="utf-8") for p in COMMITTED_KERNELS_DIR.glob("*.py") if p.name != "__init__.py"}
    assert set(committed) == set(rendered), "stale or missing generated modules: run python -m theory.kernel_registry"
    for filename, text in rendered.items():
        assert committed[filename] == text, f"{filename} differs from its regeneration (never edit generated code by hand)"


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
    generated = importlib.import_module(f"numerics.kernels.{module_name}")
    context = mpmath.mp.clone()
    context.dps = 50
    arguments = [point[a.name] for a in kernel.arguments]
    fast = getattr(generated, kernel.name)(*arguments)
    precise = getattr(generated, f"{kernel.name}_mp")(*arguments, ctx=context)
    if len(kernel.outputs) == 1:
        fast, precise = (fast,), (precise,)
    substitutions = {a: sp.Float(point[a.name], 60) for a in kernel.arguments}
    for (name, expression), value, twin in zip(kernel.outputs, fast, precise):
        exact = sp.N(expression.subs(substitutions), 50)
        assert exact.is_real, f"{kernel.name}.{name} is not real at {point}"
        scale = max(1.0, abs(float(exact)))
        assert abs(float(np.asarray(value)) - float(exact)) <= 1e-9 * scale, (name, point)
        assert abs(twin - context.mpf(str(exact))) <= context.mpf(10) ** -35 * scale, (name, point)
