"""Print each step of a theory's derivation, as SymPy derives it.

``emergence derive THEORY ...``: one sub-command per theory module in :data:`DERIVE_MODULES`.
"""

from __future__ import annotations

from emergence.cli.commands import command_names, register_commands

NAME = "derive"
HELP = "print each derivation step of a theory (SymPy results) as text, LaTeX or JSON"

DERIVE_MODULES: tuple[str, ...] = (
    "emergence.cli.commands.derive_copy_head",
)
"""Dotted names of the per-theory ``derive`` sub-commands."""


def add_arguments(parser):
    register_commands(parser.add_subparsers(dest="theory", metavar="THEORY"), DERIVE_MODULES)


def run(args) -> int:
    """Reached only when no theory was named."""
    from emergence.base.errors import EmergenceError

    raise EmergenceError(f"choose a theory to derive: {command_names(DERIVE_MODULES)}")
