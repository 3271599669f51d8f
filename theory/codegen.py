r"""SymPy expressions to standalone array-module source code.

A derived expression becomes a plain Python function whose every array operation goes
through a module bound at call time, ``xp`` (NumPy, CuPy, ``array_api_strict``), and whose
special functions go through ``special`` (``scipy.special`` or ``cupyx.scipy.special``).
The stock NumPy/CuPy printers emit scalar-only ``math.erf``/``math.lgamma`` and nothing
usable for ``LambertW``; :class:`ArrayModulePrinter` is SymPy's SciPy printer with the
module prefixes bound at call time and the few overrides SciPy's lacks.

The extension point is the printer: a special function SciPy's printer does not know needs
one ``_print_<Name>`` method on :class:`ArrayModulePrinter` and, where SciPy and CuPy
disagree, nothing else, because the same source text serves both (the prologue binds
``special``).

A :class:`KernelModule` groups kernels that share a derivation; :func:`module_source`
prints one, with a header naming the expressions' origin and this generator's version.

Example
-------
>>> import sympy as sp
>>> x, y = sp.symbols("x y", positive=True)
>>> kernel = Kernel("f", (x, y), (("value", sp.log(x) * sp.exp(y) + sp.log(x) ** 2),),
...                 "a toy kernel", {"x": (0.1, 10.0, "log"), "y": (-1.0, 1.0, "uniform")})
>>> print(kernel_body(kernel))  # doctest: +NORMALIZE_WHITESPACE
    x0 = xp.log(x)
    value = x0*(x0 + xp.exp(y))
    return value
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Literal, Mapping

import sympy as sp
from sympy.printing.numpy import SciPyPrinter
from sympy.printing.pycode import MpmathPrinter

CODEGEN_VERSION = "2"
"""Bumped whenever the printed text changes for an unchanged expression."""

Backend = Literal["xp", "numpy", "cupy"]
BACKENDS: tuple[str, ...] = ("numpy", "cupy")
"""Array libraries a module can be exported for (``xp`` is the project-internal, generic form)."""

DomainKind = Literal["log", "uniform", "int"]


@dataclass(frozen=True)
class Kernel:
    r"""One generated function: ordered arguments, named outputs, and a test domain.

    ``domain`` maps every argument name to ``(low, high, kind)`` with kind ``"log"``
    (log-uniform), ``"uniform"`` or ``"int"``; property tests draw points from it.
    A kernel with several outputs returns a tuple in the order of ``outputs``.
    """

    name: str
    arguments: tuple[sp.Symbol, ...]
    outputs: tuple[tuple[str, sp.Expr], ...]
    summary: str
    domain: Mapping[str, tuple[float, float, DomainKind]]

    def __post_init__(self):
        names = [a.name for a in self.arguments]
        missing = set(names) - set(self.domain)
        if missing:
            raise ValueError(f"kernel {self.name}: no test domain for {sorted(missing)}")
        free = set().union(*(sp.sympify(e).free_symbols for _, e in self.outputs))
        stray = {s.name for s in free} - set(names)
        if stray:
            raise ValueError(f"kernel {self.name}: outputs use undeclared symbols {sorted(stray)}")


@dataclass(frozen=True)
class KernelModule:
    """A generated module: its file name, the derivation it came from, and its kernels."""

    name: str
    origin: str
    kernels: tuple[Kernel, ...] = field(default_factory=tuple)


class ArrayModulePrinter(SciPyPrinter):
    """SymPy's SciPy printer with NumPy calls through ``xp`` and SciPy's through ``special``.

    :class:`sympy.printing.numpy.SciPyPrinter` already names every special function as
    ``scipy.special`` does (``erf``, ``gammaln``, ``psi``, ``polygamma``, ``beta``, ...); these
    are the overrides it lacks for array-API kernels:

    - module prefixes bound at call time: ``numpy.`` becomes ``xp.``, ``scipy.special.``
      becomes ``special.`` (``cupyx.scipy.special`` has the same names);
    - ``LambertW`` prints its branch and takes the real part (SciPy returns complex numbers);
    - ``Max``/``Min`` nest ``xp.maximum``/``xp.minimum`` (``amax`` is not array-API);
    - ``Piecewise`` prints as nested ``xp.where`` (``select`` is not array-API);
    - ``Float`` prints as Python's shortest round-trip literal.

    >>> import sympy as sp
    >>> ArrayModulePrinter().doprint(sp.polygamma(1, sp.Symbol("x")) + sp.log(sp.Symbol("y")))
    'xp.log(y) + special.polygamma(1, x)'
    """

    _NAMESPACES = {"numpy.": "xp.", "scipy.special.": "special."}

    def _module_format(self, fqn, register=True):
        for prefix, alias in self._NAMESPACES.items():
            if fqn.startswith(prefix):
                return alias + fqn[len(prefix):]
        raise ValueError(f"{fqn} has no counterpart in the array-module kernels (xp, special)")

    def _print_LambertW(self, expr):
        branch = self._print(expr.args[1]) if len(expr.args) > 1 else "0"
        return f"special.lambertw({self._print(expr.args[0])}, {branch}).real"

    def _nested(self, function, args):
        printed = [self._print(a) for a in args]
        result = printed[0]
        for item in printed[1:]:
            result = f"xp.{function}({result}, {item})"
        return result

    def _print_Max(self, expr):
        return self._nested("maximum", expr.args)

    def _print_Min(self, expr):
        return self._nested("minimum", expr.args)

    def _print_Piecewise(self, expr):
        *pieces, (last_value, last_condition) = expr.args
        if last_condition != sp.true:
            raise ValueError("Piecewise kernels need an unconditional last branch")
        result = self._print(last_value)
        for value, condition in reversed(pieces):
            result = f"xp.where({self._print(condition)}, {self._print(value)}, {result})"
        return result

    def _print_Float(self, expr):
        return repr(float(expr))


class MpmathContextPrinter(MpmathPrinter):
    """mpmath printer whose functions go through a context ``ctx`` bound at call time.

    A context (``mpmath.mp.clone()`` with its own ``dps``) keeps the working precision
    local to the caller, as engineering practice for mpmath asks; rationals print as
    ``ctx.mpf(p)/ctx.mpf(q)`` so they carry the context's precision.
    """

    def _module_format(self, fqn, register=True):
        if fqn.startswith("mpmath."):
            return "ctx." + fqn[len("mpmath."):]
        return super()._module_format(fqn, register)

    def _print_LambertW(self, expr):
        branch = self._print(expr.args[1]) if len(expr.args) > 1 else "0"
        return f"ctx.re(ctx.lambertw({self._print(expr.args[0])}, {branch}))"

    def _print_logaddexp(self, expr):
        first, second = (self._print(a) for a in expr.args)
        return f"ctx.log(ctx.exp({first}) + ctx.exp({second}))"

    def _print_polygamma(self, expr):
        order, argument = expr.args
        return f"ctx.polygamma({self._print(order)}, {self._print(argument)})"

    def _print_Max(self, expr):
        return f"max({', '.join(self._print(a) for a in expr.args)})"

    def _print_Min(self, expr):
        return f"min({', '.join(self._print(a) for a in expr.args)})"


_FLOAT64_CONVERSION = '''def _as_float64(value, xp):
    """``value`` as a float64 array of ``xp``; a float64 array of ``xp`` is returned as it is.

    Passing such an array through keeps torch's autograd graph: before torch 2.13,
    ``torch.asarray(t, dtype=torch.float64)`` of a tensor ``t`` that requires grad returned ``t``
    itself with ``requires_grad`` switched off (an input of another dtype is converted, and with
    torch before 2.13 that copy is detached: differentiate in float64).
    """
    if getattr(value, "dtype", None) == xp.float64 and isinstance(value, type(xp.asarray(0.0))):
        return value
    return xp.asarray(value, dtype=xp.float64)
'''

_SPECIAL_PROLOGUE = {
    "xp": '''def _namespaces(xp):
    """The array module (NumPy unless given) and its special-function module."""
    if xp is None:
        import numpy as xp
    if xp.__name__.startswith("cupy"):
        import cupyx.scipy.special as special
    else:
        import scipy.special as special
    return xp, special
''',
    "numpy": "import numpy as xp\nimport scipy.special as special\n",
    "cupy": "import cupy as xp\nimport cupyx.scipy.special as special\n",
}

_PLAIN_PROLOGUE = {
    "xp": '''def _namespaces(xp):
    """The array module (NumPy unless given)."""
    if xp is None:
        import numpy as xp
    return xp, None
''',
    "numpy": "import numpy as xp\n",
    "cupy": "import cupy as xp\n",
}


def _numeric_constants_to_floats(expr: sp.Expr) -> sp.Expr:
    """Fold symbol-free non-rational subexpressions (``log(2)``, ``pi``) to float literals.

    Array-API namespaces reject Python scalars in ``xp.log(2)``; a 17-digit literal is exact
    at float64.
    """
    replacements = {}
    for sub in sp.preorder_traversal(expr):
        if isinstance(sub, sp.Basic) and not sub.free_symbols and not sub.is_Rational:
            if isinstance(sub, (sp.Expr,)) and sub.is_number and not isinstance(sub, sp.Float):
                value = sp.N(sub, 30)
                if value.is_real:
                    replacements[sub] = sp.Float(value, 17)
    return expr.xreplace(replacements) if replacements else expr


def _uses_special(kernels: tuple[Kernel, ...]) -> bool:
    return any("special." in kernel_body(k) for k in kernels)


def kernel_body(kernel: Kernel, mpmath: bool = False) -> str:
    """The indented body (CSE assignments, outputs, ``return``) of one kernel function, printed
    for array modules or, with ``mpmath``, for an mpmath context.

    For array printers, symbol-free constants are folded to float literals first; the
    mpmath printer keeps them exact so they follow the context's precision.  The text
    depends only on the kernel's arguments, outputs and the printer, so it is computed once
    per process for each (every backend prints the same body; the CSE is most of the cost
    of writing the modules).
    """
    return _body_text(kernel.arguments, kernel.outputs, mpmath)


@functools.cache
def _body_text(arguments: tuple[sp.Symbol, ...], outputs: tuple[tuple[str, sp.Expr], ...], mpmath: bool) -> str:
    printer = MpmathContextPrinter() if mpmath else ArrayModulePrinter()
    names = [n for n, _ in outputs]
    expressions = [sp.sympify(e) for _, e in outputs]
    if isinstance(printer, ArrayModulePrinter):
        expressions = [_numeric_constants_to_floats(e) for e in expressions]
    reserved = {a.name for a in arguments} | set(names)
    temporaries = (sp.Symbol(f"x{i}") for i in range(10**6) if f"x{i}" not in reserved)
    replacements, reduced = sp.cse(expressions, symbols=temporaries, optimizations="basic")
    lines = [f"    {symbol} = {printer.doprint(value)}" for symbol, value in replacements]
    lines += [f"    {name} = {printer.doprint(value)}" for name, value in zip(names, reduced)]
    lines.append(f"    return {', '.join(names)}")
    return "\n".join(lines)


def _docstring(kernel: Kernel) -> str:
    return _docstring_text(kernel.summary, kernel.arguments, kernel.outputs)


@functools.cache
def _docstring_text(summary: str, arguments: tuple[sp.Symbol, ...], outputs: tuple[tuple[str, sp.Expr], ...]) -> str:
    """The kernel function's docstring (the same for every backend; printed once per process)."""
    lines = [f'    r"""{summary}', ""]
    lines.append("    Generated; outputs as derived:")
    lines.append("")
    for name, expression in outputs:
        lines.append(f"    {name} = {sp.sstr(expression)}")
    lines.append("")
    argument_list = ", ".join(a.name for a in arguments)
    lines.append(f"    Arguments ({argument_list}) broadcast as arrays of one shape.")
    lines.append('    """')
    return "\n".join(lines)


def kernel_source(kernel: Kernel, backend: Backend = "xp") -> str:
    """The source of one kernel function for ``backend`` (``xp``: the module binds it at call time)."""
    arguments = ", ".join(a.name for a in kernel.arguments)
    converted = "\n".join(
        f"    {a.name} = _as_float64({a.name}, xp)" for a in kernel.arguments
    )
    if backend == "xp":
        signature = f"def {kernel.name}({arguments}, *, xp=None):"
        binding = "    xp, special = _namespaces(xp)\n"
    else:
        signature = f"def {kernel.name}({arguments}):"
        binding = ""
    return f"{signature}\n{_docstring(kernel)}\n{binding}{converted}\n{kernel_body(kernel)}\n"


def mpmath_twin_source(kernel: Kernel) -> str:
    """The source of ``<name>_mp(args, *, ctx)``: the same outputs evaluated in an mpmath context."""
    arguments = ", ".join(a.name for a in kernel.arguments)
    converted = "\n".join(f"    {a.name} = ctx.mpf({a.name})" for a in kernel.arguments)
    docstring = (
        f'    """mpmath twin of :func:`{kernel.name}`, evaluated at the precision of ``ctx`` '
        '(e.g. ``mpmath.mp.clone()``)."""'
    )
    body = kernel_body(kernel, mpmath=True)
    return f"def {kernel.name}_mp({arguments}, *, ctx):\n{docstring}\n{converted}\n{body}\n"


def module_source(module: KernelModule, backend: Backend = "xp") -> str:
    """Full text of a generated module: header, prologue, kernels, ``__all__``.

    ``backend="xp"`` gives the project-internal form (``xp=`` keyword, NumPy default);
    ``"numpy"``/``"cupy"`` give exported modules that import that library at the top.
    Every kernel ``f`` comes with an mpmath twin ``f_mp(..., ctx=...)`` that imports nothing.
    """
    if backend not in ("xp", *BACKENDS):
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    prologues = _SPECIAL_PROLOGUE if _uses_special(module.kernels) else _PLAIN_PROLOGUE
    header = (
        f"# Generated by emergence.theory.codegen version {CODEGEN_VERSION} "
        f"(SymPy {sp.__version__}) from {module.origin}.\n"
        "# Do not edit by hand: regenerate with `emergence export-kernels` or "
        "`python tools/regenerate.py kernels`.\n"
    )
    docstring = f'"""Generated kernels from ``{module.origin}``: {", ".join(k.name for k in module.kernels)}."""\n'
    names = ", ".join(f"{k.name!r}, {k.name + '_mp'!r}" for k in module.kernels)
    body = "\n\n".join(
        f"{kernel_source(k, backend)}\n\n{mpmath_twin_source(k)}" for k in module.kernels
    )
    return (
        f"{header}{docstring}\n{prologues[backend]}\n\n{_FLOAT64_CONVERSION}\n\n{body}\n\n"
        f"__all__ = [{names}]\n"
    )
