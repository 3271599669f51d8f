"""The ``emergence`` argument parser: one subcommand per module in :mod:`emergence.cli.commands`.

:func:`build_parser` builds it; a refusal is one line (:class:`OneLineParser` raises :class:`UsageError`).
:func:`option_of` names the command-line option behind an API parameter, so that an API refusal
(:class:`~emergence.base.errors.InvalidArgumentError`) names the flag the user typed.
"""

from __future__ import annotations

import argparse

from emergence import __version__
from emergence.base.errors import EmergenceError
from emergence.cli.commands import COMMAND_MODULES, register_commands


class UsageError(EmergenceError):
    """A command line that argparse refused (unknown option, bad value); reported in one line, exit 2."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose refusals are one line (``emergence: error: ...``), not usage plus error."""

    def error(self, message: str):
        raise UsageError(f"{self.prog.removeprefix('emergence ')}: {message}" if self.prog != "emergence" else message)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="emergence",
        description="Symbolic-numeric theory engine for how attention learns.",
    )
    parser.add_argument("--version", action="version", version=f"emergence {__version__}")
    parser.add_argument(
        "--traceback", action="store_true", help="show the full traceback of an error"
    )
    register_commands(parser.add_subparsers(dest="command", metavar="COMMAND"), COMMAND_MODULES)
    return parser


API_DESTINATIONS = {"T": "context_length", "queries": "query", "P": "P_grid", "paths": "checkpoint",
                    "adam_steps": "steps", "adam_lr": "lr", "sgld_burn_in": "burn_in", "sgld_draws": "draws",
                    "sgld_thin": "thin", "bisections": "bisect"}
"""API parameters whose command-line option stores its value under another name."""


def option_of(parser: argparse.ArgumentParser, args: argparse.Namespace, parameter: str) -> str:
    """The option of the chosen (sub-)command that gives the API's ``parameter`` (``top_k`` -> ``--top-k``,
    ``T`` -> ``--T``, a positional argument by its name), so that an API refusal names the flag.

    >>> option_of(build_parser(), build_parser().parse_args(["associate", "x", "--query", "a"]), "top")
    '--top'
    """
    destination = API_DESTINATIONS.get(parameter, parameter)
    for action in _chosen_parser(parser, args)._actions:
        if action.dest == destination:
            return action.option_strings[0] if action.option_strings else str(action.metavar or action.dest)
    return "--" + parameter.replace("_", "-")


def _chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the innermost sub-command ``args`` chose (``validate copy-head``: its own parser)."""
    while True:
        commands = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
        if not commands or getattr(args, commands[0].dest, None) is None:
            return parser
        parser = commands[0].choices[getattr(args, commands[0].dest)]
