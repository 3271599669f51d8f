"""Print each step of a theory's derivation, as SymPy derives it.

``emergence derive THEORY ...``: one sub-command per theory module in :data:`DERIVE_MODULES`
(each defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args)``).
"""

from __future__ import annotations

import importlib

NAME = "derive"
HELP = "print each derivation step of a theory (SymPy results) as text, LaTeX or JSON"

DERIVE_MODULES: tuple[str, ...] = (
    "emergence.commands.derive_copy_head",
)
"""Dotted names of the per-theory ``derive`` sub-commands."""


def add_arguments(parser):
    theories = parser.add_subparsers(dest="theory", metavar="THEORY")
    for dotted in DERIVE_MODULES:
        module = importlib.import_module(dotted)
        sub = theories.add_parser(module.NAME, help=module.HELP, description=module.__doc__)
        module.add_arguments(sub)
        sub.set_defaults(derive_handler=module.run)


def run(args) -> int:
    from theory.errors import EmergenceError

    handler = getattr(args, "derive_handler", None)
    if handler is None:
        names = ", ".join(importlib.import_module(d).NAME for d in DERIVE_MODULES)
        raise EmergenceError(f"choose a theory to derive: {names}")
    return handler(args)
