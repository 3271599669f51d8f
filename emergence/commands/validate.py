"""Validate a theory against trained models: one sub-command per experiment.

Each module in :data:`VALIDATE_MODULES` defines ``NAME``, ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``, like a top-level command.
"""

from __future__ import annotations

import importlib

NAME = "validate"
HELP = "train small models and compare them with a theory's predictions"

VALIDATE_MODULES: tuple[str, ...] = (
    "emergence.commands.validate_leading_terms",
    "emergence.commands.validate_copy_head",
)


def add_arguments(parser):
    experiments = parser.add_subparsers(dest="experiment", metavar="EXPERIMENT")
    for dotted in VALIDATE_MODULES:
        module = importlib.import_module(dotted)
        sub = experiments.add_parser(module.NAME, help=module.HELP, description=module.__doc__)
        module.add_arguments(sub)
        sub.set_defaults(validate_handler=module.run)
    parser.set_defaults(validate_parser=parser)


def run(args) -> int:
    handler = getattr(args, "validate_handler", None)
    if handler is None:
        args.validate_parser.print_help()
        return 2
    return int(handler(args) or 0)
