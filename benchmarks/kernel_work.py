r"""Counting the arithmetic of the generated copy-head kernels, for the rows without a BLAS workload.

The phase diagram and the scaling certification spend their time in the generated kernels
(``emergence.numerics.kernels.copy_head_*``): float64 NumPy functions and their mpmath twins
(``*_mp``).  Their work is counted, not timed: each kernel's source is parsed once
(:func:`operations_per_call`: arithmetic operators and elementary-function calls; the
argument conversions ``asarray``/``mpf`` are not counted), and during one uncounted-time run
(:func:`counted_kernel_operations`) every call adds ``operations x elements`` (the size of
its arguments' broadcast shape; one element for an mpmath twin).  The row then states the work as
``engine_flops`` and is compared with the float64 matmul limit, counting one mpmath
operation as one floating-point operation (a generous count: each costs hundreds of
machine instructions).

>>> def kernel(x, y, *, xp=None):
...     z = x * y + 1
...     return xp.log(z) / 2
>>> operations_per_call(kernel)
4
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import textwrap
from typing import Any, Callable

import numpy as np

KERNEL_WORK = "generated-kernel operations x elements (AST count of each kernel; one mpmath operation counted as one)"

_NOT_ARITHMETIC = {"asarray", "mpf", "_namespaces", "float", "int"}


def operations_per_call(function: Callable) -> int:
    """Arithmetic operators plus elementary-function calls in ``function``'s source (per element)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            count += 1
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            count += name not in _NOT_ARITHMETIC
    return count


@contextlib.contextmanager
def _counting(modules, tally: dict[str, float]):
    originals = []
    for module in modules:
        for name, function in list(vars(module).items()):
            if name.startswith("_") or not inspect.isfunction(function) or function.__module__ != module.__name__:
                continue
            per_call = operations_per_call(function)
            mp = name.endswith("_mp")

            def counted(*args, _function=function, _per_call=per_call, _mp=mp, **kwargs):
                elements = 1 if _mp else int(np.prod(np.broadcast_shapes(*(np.shape(a) for a in args))))
                tally["operations"] += _per_call * elements
                return _function(*args, **kwargs)

            originals.append((module, name, function))
            setattr(module, name, counted)
    try:
        yield tally
    finally:
        for module, name, function in originals:
            setattr(module, name, function)


def counted_kernel_operations(run: Callable[[], Any]) -> float:
    """Kernel operations (float64 element operations plus mpmath operations) of one call of ``run``."""
    from emergence.numerics.copy_head.reduced_action import generated_kernels

    kernels = generated_kernels()
    with _counting([kernels.scales, kernels.linear, kernels.softmax, kernels.asymptotics], {"operations": 0.0}) as tally:
        run()
    return tally["operations"]
