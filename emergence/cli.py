"""The ``emergence`` command line: one subcommand per module in :mod:`emergence.commands`.

The CLI holds no science: each subcommand parses its arguments, calls the layer that does
the work and prints or writes the result.  User errors (:class:`emergence.base.errors.EmergenceError`
and unwritable paths) end in one line on stderr and exit status 2; ``--traceback`` shows
the full trace instead.  So does a command that needs an optional framework which is not
installed: the line names the extra that installs it (:data:`OPTIONAL_EXTRAS`).
"""

from __future__ import annotations

import argparse
import logging
import sys

from emergence import __version__
from emergence.commands import COMMAND_MODULES, register_commands
from emergence.base.errors import EmergenceError, InvalidArgumentError

OPTIONAL_EXTRAS = {"torch": "train", "matplotlib": "plot", "hypothesis": "testing"}
"""Optional framework -> the extra of ``pyproject.toml`` that installs it."""


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


class ConsoleHandler(logging.Handler):
    """Notes of the engine (logger ``emergence``) as ``emergence: note: ...`` lines on stderr, written
    through ``tqdm.write`` so that they never garble a progress bar."""

    def emit(self, record: logging.LogRecord) -> None:
        from tqdm import tqdm

        tqdm.write(f"emergence: note: {record.getMessage()}", file=sys.stderr)


def _console_logging() -> None:
    logger = logging.getLogger("emergence")
    if not any(isinstance(handler, ConsoleHandler) for handler in logger.handlers):
        logger.addHandler(ConsoleHandler())
    logger.setLevel(logging.INFO)
    logger.propagate = False


def main(argv: list[str] | None = None) -> int:
    _console_logging()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as error:
        print(f"emergence: error: {error}", file=sys.stderr)
        return 2
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
        if isinstance(error, InvalidArgumentError):
            message = error.naming(lambda name: option_of(parser, args, name)).splitlines()[0]
        print(f"emergence: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"emergence: interrupted; {_what_was_kept(args)}", file=sys.stderr)
        if argv is None:  # the command line itself, not a caller in this process: leave now
            _exit_now(130)
        return 130


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


def _exit_now(status: int) -> None:
    """Run the exit handlers (temporary folders), flush, and skip the interpreter's slow teardown of
    torch and SymPy (seconds on a loaded machine), so that Ctrl-C stops the command at once."""
    import atexit
    import os

    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _what_was_kept(args) -> str:
    """The interrupted command's resumable output, if it has one."""
    out = getattr(args, "out", None)
    if out is not None and args.command in ("demo", "validate"):
        return f"finished steps are kept in {out} and reused when the same command is run again"
    return "nothing was written" + (" (use --out DIR to keep finished points)" if args.command == "validate" else "")
