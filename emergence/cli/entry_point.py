"""The ``emergence`` command line's entry point: :func:`main` runs one command and turns its errors into exit codes.

The CLI holds no science: each subcommand parses its arguments, calls the layer that does
the work and prints or writes the result.  User errors (:class:`emergence.base.errors.EmergenceError`
and unwritable paths) end in one line on stderr and exit status 2; ``--traceback`` shows
the full trace instead.  So does a command that needs an optional framework which is not
installed: the line names the extra that installs it (:data:`OPTIONAL_EXTRAS`).
"""

from __future__ import annotations

import logging
import sys

from emergence.base.errors import EmergenceError, InvalidArgumentError
from emergence.cli.parser import UsageError, build_parser, option_of

OPTIONAL_EXTRAS = {"torch": "train", "matplotlib": "plot", "hypothesis": "testing"}
"""Optional framework -> the extra of ``pyproject.toml`` that installs it."""


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
