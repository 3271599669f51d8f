"""The ``emergence`` command line: one subcommand per module in :mod:`emergence.commands`.

The CLI holds no science: each subcommand parses its arguments, calls the layer that does
the work and prints or writes the result.  User errors (:class:`emergence.theory.errors.EmergenceError`
and unwritable paths) end in one line on stderr and exit status 2; ``--traceback`` shows
the full trace instead.  So does a command that needs an optional framework which is not
installed: the line names the extra that installs it (:data:`OPTIONAL_EXTRAS`).
"""

from __future__ import annotations

import argparse
import sys

from emergence import __version__
from emergence.commands import COMMAND_MODULES, register_commands
from emergence.theory.errors import EmergenceError

OPTIONAL_EXTRAS = {"torch": "train", "matplotlib": "plot", "hypothesis": "testing"}
"""Optional framework -> the extra of ``pyproject.toml`` that installs it."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="emergence",
        description="Symbolic-numeric theory engine for how attention learns.",
    )
    parser.add_argument("--version", action="version", version=f"emergence {__version__}")
    parser.add_argument(
        "--traceback", action="store_true", help="show the full traceback of an error"
    )
    register_commands(parser.add_subparsers(dest="command", metavar="COMMAND"), COMMAND_MODULES)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "handler"):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except ModuleNotFoundError as error:
        framework = (error.name or "").partition(".")[0]
        if args.traceback or framework not in OPTIONAL_EXTRAS:
            raise
        print(f"emergence: error: `emergence {args.command}` needs {framework}, which is not installed: "
              f"pip install 'emergence[{OPTIONAL_EXTRAS[framework]}]'", file=sys.stderr)
        return 2
    except (EmergenceError, OSError) as error:
        if args.traceback:
            raise
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"emergence: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("emergence: interrupted; finished parts are kept and reused on the next run", file=sys.stderr)
        return 130
