"""The SymPy -> array-module generator: printed text, NumPy / array-API / mpmath agreement."""

import re
import subprocess
import sys

import array_api_strict
import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy.codegen.cfunctions import log1p
from sympy.codegen.numpy_nodes import logaddexp

from emergence.theory.codegen import ArrayModulePrinter, Kernel, KernelModule, module_source
from emergence.theory.kernel_export import export_readme, exported_sources

x, y = sp.symbols("x y", positive=True)

SPECIAL = Kernel(
    "special_mix",
    (x, y),
    (
        ("value", sp.erf(x) * sp.log(2) + sp.LambertW(y) + sp.loggamma(x) + sp.polygamma(1, x)),
        ("smooth", log1p(x) + logaddexp(x, y) + sp.sqrt(x) * sp.pi + sp.Rational(1, 3)),
        ("branches", sp.Max(x, y) + sp.Min(x, y) + sp.Piecewise((x**2, x > 1), (y, True))),
    ),
    "special functions, constants and branches",
    {"x": (0.05, 20.0, "log"), "y": (0.01, 5.0, "log")},
)
PLAIN = Kernel(
    "plain",
    (x, y),
    (("value", sp.log(x) * sp.exp(y) + sp.log(x) ** 2 + sp.pi * sp.sqrt(x) + sp.log(2)),),
    "elementary functions only",
    {"x": (0.05, 20.0, "log"), "y": (0.01, 5.0, "log")},
)
TOY_MODULES = [KernelModule("toy_special", "tests.test_codegen", (SPECIAL,)),
               KernelModule("toy_plain", "tests.test_codegen", (PLAIN,))]


def load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<generated>", "exec"), namespace)
    return namespace


def sympy_values(kernel: Kernel, point: dict, digits: int = 50) -> list:
    substitutions = {a: sp.Float(point[a.name], digits) for a in kernel.arguments}
    return [sp.N(e.subs(substitutions), digits) for _, e in kernel.outputs]


@settings(max_examples=30)
@given(st.floats(0.05, 20.0), st.floats(0.01, 5.0))
def test_symbolic_equals_generated_numpy_equals_mpmath_twin(x_value, y_value):
    point = {"x": x_value, "y": y_value}
    context = mpmath.mp.clone()
    context.dps = 50
    for module in TOY_MODULES:
        namespace = load(module_source(module))
        for kernel in module.kernels:
            exact = sympy_values(kernel, point)
            numeric = np.atleast_1d(namespace[kernel.name](x_value, y_value))
            precise = np.atleast_1d(namespace[f"{kernel.name}_mp"](x_value, y_value, ctx=context))
            for reference, fast, slow in zip(exact, numeric, precise):
                assert float(fast) == pytest.approx(float(reference), rel=1e-12, abs=1e-12)
                assert abs(slow - context.mpf(str(reference))) <= context.mpf(10) ** -40 * max(1, abs(slow))


def test_arrays_broadcast_and_array_api_strict_runs_plain_kernels():
    namespace = load(module_source(TOY_MODULES[1]))
    xs = np.linspace(0.1, 3.0, 7)
    ys = np.full(7, 0.5)
    expected = namespace["plain"](xs, ys)
    strict = namespace["plain"](array_api_strict.asarray(xs), array_api_strict.asarray(ys), xp=array_api_strict)
    assert isinstance(strict, array_api_strict._array_object.Array)
    np.testing.assert_allclose(np.asarray(strict), expected, rtol=1e-15)
    assert expected.shape == (7,)


def test_torch_tensors_keep_their_autograd_graph_through_a_generated_kernel():
    """A float64 tensor that requires grad goes into the kernel as it is (torch < 2.13's
    ``asarray`` switched ``requires_grad`` off on the caller's own tensor), and the kernel's
    gradient is the derivative: d/dx [log x e^y + log^2 x + pi sqrt x + log 2] at (x, y)."""
    torch = pytest.importorskip("torch")
    namespace = load(module_source(TOY_MODULES[1]))
    x_value = torch.tensor(1.7, dtype=torch.float64, requires_grad=True)
    y_value = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    value = namespace["plain"](x_value, y_value, xp=torch)
    assert x_value.requires_grad and y_value.requires_grad and value.requires_grad
    value.backward()
    expected = np.exp(0.3) / 1.7 + 2 * np.log(1.7) / 1.7 + np.pi / (2 * np.sqrt(1.7))
    # a few operations on values of order one: 8 rounding units of float64
    assert float(x_value.grad) == pytest.approx(expected, rel=8 * np.finfo(float).eps)
    converted = namespace["_as_float64"](np.float32(2.5), np)
    assert isinstance(converted, np.ndarray) and converted.dtype == np.float64


def test_printer_emits_no_scalar_math_and_maps_special_functions():
    printer = ArrayModulePrinter()
    assert printer.doprint(sp.erf(x)) == "special.erf(x)"
    assert printer.doprint(sp.loggamma(x)) == "special.gammaln(x)"
    assert printer.doprint(sp.LambertW(x)) == "special.lambertw(x, 0).real"
    assert printer.doprint(sp.Max(x, y, 1)) == "xp.maximum(xp.maximum(1, x), y)"
    source = module_source(TOY_MODULES[0])
    assert not re.search(r"(?<![\w.])(math|numpy)\.", source)


def test_header_names_origin_and_generator_version():
    source = module_source(TOY_MODULES[0])
    first, second = source.splitlines()[:2]
    assert first.startswith("# Generated by emergence.theory.codegen version")
    assert "from tests.test_codegen" in first
    assert "Do not edit by hand" in second


def test_unknown_backend_is_rejected():
    with pytest.raises(ValueError, match="unknown backend"):
        module_source(TOY_MODULES[0], "tensorflow")


def test_kernel_declares_domain_and_symbols():
    with pytest.raises(ValueError, match="no test domain"):
        Kernel("bad", (x,), (("v", x),), "missing domain", {})
    with pytest.raises(ValueError, match="undeclared symbols"):
        Kernel("bad", (x,), (("v", x + y),), "stray symbol", {"x": (1, 2, "uniform")})


def test_exported_numpy_modules_run_with_numpy_alone(tmp_path):
    for filename, text in exported_sources(TOY_MODULES, "numpy").items():
        (tmp_path / filename).write_text(text)
    script = (
        "import sys; sys.modules['sympy'] = None; sys.modules['theory'] = None; sys.modules['numerics'] = None\n"
        "import toy_plain, toy_special\n"
        "print(float(toy_plain.plain(2.0, 0.5)), float(toy_special.special_mix(2.0, 0.5)[0]))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    plain_value, special_value = map(float, result.stdout.split())
    assert plain_value == pytest.approx(float(sympy_values(PLAIN, {"x": 2.0, "y": 0.5})[0]), rel=1e-13)
    assert special_value == pytest.approx(float(sympy_values(SPECIAL, {"x": 2.0, "y": 0.5})[0]), rel=1e-13)


def test_exported_cupy_source_is_valid_text_importing_only_cupy():
    files = exported_sources(TOY_MODULES, "cupy")
    special = files["toy_special.py"]
    plain = files["toy_plain.py"]
    for text in (special, plain):
        compile(text, "<cupy>", "exec")
        assert "import cupy as xp" in text and "numpy" not in text and "scipy.special" not in text.replace("cupyx.scipy.special", "")
    assert "import cupyx.scipy.special as special" in special
    assert "cupyx" not in plain
    readme = export_readme(TOY_MODULES, "cupy")
    assert "`special_mix(x, y) -> value, smooth, branches`" in readme
