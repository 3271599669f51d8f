r"""Derivation steps as data, and their text / LaTeX / JSON / Markdown renderings.

A theory package describes its derivation as a list of :class:`DerivationStep`; each step
says what was done, whether its content is *derived* (by SymPy from the model), *assumed*
(a modelling choice or approximation) or *checked* (a numeric cross-check), and carries the
resulting SymPy expressions.  ``emergence derive`` and the generated documents render the
same objects, so the printed formulas are the ones the kernels were generated from.

>>> import sympy as sp
>>> x = sp.Symbol("x")
>>> step = DerivationStep("demo", "A demo", "Squares x.", (Equation("f", sp.Symbol("f"), x**2),))
>>> print(render_text([step]))
[1] A demo (derived)
    Squares x.
    f = x**2
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import sympy as sp

STATUSES = ("derived", "assumed", "checked")


@dataclass(frozen=True)
class Equation:
    """``lhs = expression``; ``label`` names it in JSON."""

    label: str
    lhs: sp.Basic
    expression: sp.Basic


@dataclass(frozen=True)
class DerivationStep:
    key: str
    title: str
    summary: str
    equations: tuple[Equation, ...] = field(default_factory=tuple)
    status: str = "derived"

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")


def _latex(expression) -> str:
    return expression if isinstance(expression, str) else sp.latex(expression)


def render_text(steps: list[DerivationStep]) -> str:
    lines = []
    for number, step in enumerate(steps, 1):
        lines.append(f"[{number}] {step.title} ({step.status})")
        lines.append(f"    {step.summary}")
        for equation in step.equations:
            lines.append(f"    {sp.sstr(equation.lhs)} = {sp.sstr(equation.expression)}")
    return "\n".join(lines)


def render_latex(steps: list[DerivationStep]) -> str:
    lines = []
    for step in steps:
        lines.append(f"% {step.title} ({step.status}): {step.summary}")
        for equation in step.equations:
            lines.append(f"{_latex(equation.lhs)} = {_latex(equation.expression)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def render_json(steps: list[DerivationStep], **header) -> str:
    document = dict(header)
    document["steps"] = [
        {
            "key": step.key,
            "title": step.title,
            "status": step.status,
            "summary": step.summary,
            "equations": [
                {"label": e.label, "lhs": sp.sstr(e.lhs), "sympy": sp.sstr(e.expression),
                 "latex": _latex(e.expression)}
                for e in step.equations
            ],
        }
        for step in steps
    ]
    return json.dumps(document, indent=2)


def render_markdown(steps: list[DerivationStep], heading_level: int = 3) -> str:
    """Markdown with display LaTeX ($$ ... $$), one section per step."""
    hashes = "#" * heading_level
    lines = []
    for number, step in enumerate(steps, 1):
        lines += [f"{hashes} {number}. {step.title} *({step.status})*", "", step.summary, ""]
        for equation in step.equations:
            lines += [f"$$ {_latex(equation.lhs)} = {_latex(equation.expression)} $$", ""]
    return "\n".join(lines)
