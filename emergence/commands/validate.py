"""Validate the theories against trained models: one sub-subcommand per module in VALIDATE_MODULES.

Each module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``,
like a top-level command.
"""

from __future__ import annotations

import importlib

NAME = "validate"
HELP = "train small torch models and compare them with the theories"

VALIDATE_MODULES: tuple[str, ...] = (
    "emergence.commands.validate_copy_head",
)


def add_arguments(parser):
    subcommands = parser.add_subparsers(dest="validation", metavar="VALIDATION")
    for dotted in VALIDATE_MODULES:
        module = importlib.import_module(dotted)
        sub = subcommands.add_parser(module.NAME, help=module.HELP, description=module.__doc__)
        module.add_arguments(sub)
        sub.set_defaults(validate_handler=module.run)


def run(args) -> int:
    from theory.errors import EmergenceError

    if not hasattr(args, "validate_handler"):
        names = ", ".join(importlib.import_module(d).NAME for d in VALIDATE_MODULES)
        raise EmergenceError(f"choose what to validate: {names}")
    return int(args.validate_handler(args) or 0)
