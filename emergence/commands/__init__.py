"""Subcommand modules.  Each defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args)``.

A parent command (``derive``, ``validate``) lists its own sub-command modules and registers
them with :func:`register_commands`; a chosen sub-command's ``run`` replaces the parent's.
"""

import importlib

COMMAND_MODULES: tuple[str, ...] = (
    "emergence.commands.export_kernels",
    "emergence.commands.check",
    "emergence.commands.phase_diagram",
    "emergence.commands.scaling",
    "emergence.commands.derive",
    "emergence.commands.bench",
    "emergence.commands.basis",
    "emergence.commands.associate",
    "emergence.commands.predict_weights",
    "emergence.commands.checkpoints",
    "emergence.commands.validate",
    "emergence.commands.demo",
)


def register_commands(subparsers, modules: tuple[str, ...]) -> None:
    """Add one sub-parser per command module, with ``handler`` set to the module's ``run``."""
    for dotted in modules:
        module = importlib.import_module(dotted)
        sub = subparsers.add_parser(module.NAME, help=module.HELP, description=module.__doc__)
        module.add_arguments(sub)
        sub.set_defaults(handler=module.run)


def command_names(modules: tuple[str, ...]) -> str:
    """The ``NAME`` of each module, comma-separated (for "choose one of" messages)."""
    return ", ".join(importlib.import_module(dotted).NAME for dotted in modules)
