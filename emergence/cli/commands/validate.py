"""Validate a theory against trained models: one sub-command per experiment in :data:`VALIDATE_MODULES`."""

from __future__ import annotations

from emergence.cli.commands import command_names, register_commands

NAME = "validate"
HELP = "train small models and compare them with a theory's predictions"

VALIDATE_MODULES: tuple[str, ...] = (
    "emergence.cli.commands.validate_leading_terms",
    "emergence.cli.commands.validate_copy_head",
    "emergence.cli.commands.validate_posterior",
)


def add_arguments(parser):
    register_commands(parser.add_subparsers(dest="experiment", metavar="EXPERIMENT"), VALIDATE_MODULES)


def run(args) -> int:
    """Reached only when no experiment was named."""
    from emergence.base.errors import EmergenceError

    raise EmergenceError(f"choose what to validate: {command_names(VALIDATE_MODULES)}")
