"""Subcommand modules.  Each defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args)``.

A parent command (``derive``, ``validate``) lists its own sub-command modules and registers
them with :func:`register_commands`; a chosen sub-command's ``run`` replaces the parent's.
"""

import importlib

COMMAND_MODULES: tuple[str, ...] = (
    "emergence.cli.commands.export_kernels",
    "emergence.cli.commands.check",
    "emergence.cli.commands.phase_diagram",
    "emergence.cli.commands.rho_sweep",
    "emergence.cli.commands.scaling",
    "emergence.cli.commands.derive",
    "emergence.cli.commands.bench",
    "emergence.cli.commands.basis",
    "emergence.cli.commands.associate",
    "emergence.cli.commands.predict_weights",
    "emergence.cli.commands.checkpoints",
    "emergence.cli.commands.validate",
    "emergence.cli.commands.demo",
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
