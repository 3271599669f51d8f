r"""Scaling laws given as text: safe parsing into SymPy, a precision-following evaluator, limits.

``emergence scaling --law EXPR`` tests another law than the claimed one on the same data with
the same criterion.  The text is an expression in the sizes ``L`` and ``V`` built from numbers,
``+ - * / **``, parentheses and the functions ``log``, ``exp``, ``sqrt`` and ``LambertW``;
anything else (another name, attribute access, a call of something else, bad syntax) raises
:class:`~emergence.base.errors.InvalidArgumentError` (naming ``law``).  The text is checked token by token before
SymPy sees it, and SymPy parses it with nothing but those names in scope.

>>> parse_law("L*log(L)**1.5")
L*log(L)**1.5
>>> parse_law("L**(3/2)*V**(1/2)")
L**(3/2)*sqrt(V)
>>> parse_law("os.system('x')")
Traceback (most recent call last):
...
emergence.base.errors.InvalidArgumentError: law: 'os' is not allowed; use L, V, log, exp, sqrt, LambertW
>>> import mpmath
>>> ctx = mpmath.mp.clone(); ctx.dps = 30
>>> value = law_function(parse_law("L*log(L)**2"))(ctx.mpf(2) ** 10, ctx.mpf(8))
>>> ctx.nstr(value, 25), value.context is ctx
('49198.3886252238258859113', True)
>>> law_ratio_limit(parse_law("L*log(L)**2"), parse_law("L*log(L)**1.5"), "L", {"V": 8})
inf
>>> law_ratio_limit(parse_law("V**2"), parse_law("2*V**2"), "V", {"L": 4096})
0.5
"""

from __future__ import annotations

import io
import math
import tokenize

import sympy as sp
from sympy.parsing.sympy_parser import auto_number, parse_expr

from emergence.theory.copy_head.symbols import L, V
from emergence.base.errors import InvalidArgumentError

ALLOWED_NAMES = {"L": L, "V": V, "log": sp.log, "exp": sp.exp, "sqrt": sp.sqrt, "LambertW": sp.LambertW}
"""The only names a law may use."""

_OPERATORS = {"+", "-", "*", "/", "**", "(", ")", ","}
_FUNCTIONS = {"log", "exp", "sqrt", "LambertW"}


def _check_tokens(text: str) -> None:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError) as error:
        raise InvalidArgumentError("law", f": cannot read {text!r} ({error})") from None
    previous = None
    for token in tokens:
        if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER):
            continue
        if token.type == tokenize.NAME:
            if token.string not in ALLOWED_NAMES:
                names = ", ".join(ALLOWED_NAMES)
                raise InvalidArgumentError("law", f": {token.string!r} is not allowed; use {names}")
        elif token.type == tokenize.NUMBER:
            if not all(ch.isdigit() or ch in ".eE+-" for ch in token.string):
                raise InvalidArgumentError("law", f": number {token.string!r} is not a plain decimal")
        elif not (token.type == tokenize.OP and token.string in _OPERATORS):
            raise InvalidArgumentError("law", f": {token.string!r} is not allowed in a law")
        if token.string == "(" and previous is not None and previous.type == tokenize.NAME \
                and previous.string not in _FUNCTIONS:
            raise InvalidArgumentError("law", f": {previous.string!r} is not a function")
        previous = token


def parse_law(text: str) -> sp.Expr:
    """The SymPy expression of a law in ``L`` and ``V`` (see the module docstring for what is allowed)."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgumentError("law", ": give an expression in L and V, e.g. 'L*log(L)**2'")
    if len(text) > 500:
        raise InvalidArgumentError("law", ": the expression is longer than 500 characters")
    _check_tokens(text)
    scope = {"Integer": sp.Integer, "Float": sp.Float, "Rational": sp.Rational, "__builtins__": {}}
    try:
        expression = parse_expr(text, local_dict=dict(ALLOWED_NAMES), global_dict=scope,
                                transformations=(auto_number,), evaluate=True)
    except (SyntaxError, TypeError, ValueError, NameError, ZeroDivisionError, tokenize.TokenError) as error:
        raise InvalidArgumentError("law", f": cannot parse {text!r} ({error})") from None
    if not isinstance(expression, sp.Expr) or not expression.free_symbols <= {L, V}:
        raise InvalidArgumentError("law", f": {text!r} is not an expression in L and V")
    if not expression.free_symbols:
        raise InvalidArgumentError("law", f": {text!r} does not depend on L or V")
    return expression


def _in_context(name):
    def evaluate(x, *rest):
        return getattr(x.context, name)(x, *rest)

    return evaluate


def law_function(expression: sp.Expr):
    """``f(L, V)`` evaluating the law on mpmath numbers at *their* context's precision.

    The function is plain Python (printed by ``lambdify``); its ``log``, ``exp``, ``sqrt`` and
    ``LambertW`` call the context of the argument, so a private ``mp.clone()`` keeps its digits.
    """
    namespace = {"log": _in_context("log"), "exp": _in_context("exp"), "sqrt": _in_context("sqrt"),
                 "LambertW": lambda x, k=0: x.context.lambertw(x, k).real}
    return sp.lambdify((L, V), expression, modules=[namespace])


def law_ratio_limit(claimed: sp.Expr, law: sp.Expr, variable: str, fixed: dict) -> float:
    r""":math:`\lim (\text{claimed}/\text{law})` as ``variable`` :math:`\to\infty`, the other size at ``fixed``
    (SymPy ``limit``; ``inf``/``0`` when the laws differ in growth, ``nan`` when SymPy cannot decide).
    """
    symbols = {"L": L, "V": V}
    ratio = (claimed / law).subs({symbols[name]: value for name, value in fixed.items()})
    try:
        limit = sp.limit(ratio, symbols[variable], sp.oo)
    except (NotImplementedError, ValueError, TypeError):
        return math.nan
    if limit in (sp.oo, -sp.oo, sp.zoo):
        return math.inf
    try:
        return float(limit)
    except TypeError:
        return math.nan
