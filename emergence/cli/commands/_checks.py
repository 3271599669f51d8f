"""Argument checks shared by every command: argparse ``type=`` functions that refuse bad input at parse time.

Each function turns the text of one option into a value or raises ``argparse.ArgumentTypeError``
with one sentence; the CLI's parser prints it as one line (``emergence: error: argument --X: ...``)
and exits with status 2 before any work starts.  Checks that need several options at once
(memory estimates) run at the top of the command's ``run`` through :mod:`emergence.base.limits`.

>>> integer(1)("8")
8
>>> positive_float("1e308")
1e+308
>>> output_file(".json", stdout=True)("-")
'-'
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path
from typing import Callable

SEED_LIMIT = 2**32
"""Seeds are 0 <= seed < 2**32 (every generator the engine uses accepts them, and derived seeds stay below 2**64)."""

PLOT_FORMATS = (".png", ".pdf", ".svg")
JSON_FORMATS = (".json",)
NPZ_FORMATS = (".npz",)


def _fail(message: str):
    raise argparse.ArgumentTypeError(message)


def argument_type(parse: Callable[[str], object]) -> Callable[[str], object]:
    """``parse`` as an argparse type: its one-line
    :class:`~emergence.base.errors.EmergenceError` becomes argparse's refusal, at parse time."""

    def checked(text: str):
        from emergence.base.errors import EmergenceError

        try:
            return parse(text)
        except EmergenceError as error:
            _fail(str(error))

    checked.__name__ = getattr(parse, "__name__", "value")
    return checked


def integer(low: int | None = None, high: int | None = None, what: str = "") -> Callable[[str], int]:
    """An integer in ``[low, high]``; ``8.5``, ``nan`` or ``1e3`` are refused, not rounded.

    ``what`` names the quantity in the message.

    >>> integer(1)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer >= 1, got 0 (out of range)
    >>> integer(1, what="sequence length T")("x")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: sequence length T must be a whole number >= 1, got 'x'
    """
    prefix = f"{what} " if what else ""
    bounds = " and ".join(part for part in (f">= {low}" if low is not None else "",
                                            f"<= {high}" if high is not None else "") if part)

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            _fail(f"{prefix}must be a whole number{' ' + bounds if bounds else ''}, got {text!r}")
        if (low is not None and value < low) or (high is not None and value > high):
            _fail(f"{prefix}must be an integer {bounds}, got {value} (out of range)")
        return value

    parse.__name__ = "integer"
    return parse


seed = integer(0, SEED_LIMIT - 1)
seed.__name__ = "seed"


def finite_float(low: float | None = None, high: float | None = None, open_low: bool = False,
                 what: str = "") -> Callable[[str], float]:
    """A finite number in ``[low, high]`` (``(low, high]`` with ``open_low``); nan and inf are refused."""
    prefix = f"{what} " if what else ""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            _fail(f"{prefix}must be a number, got {text!r}")
        if not math.isfinite(value):
            _fail(f"{prefix}must be a finite number, got {text!r}")
        if low is not None and (value < low or (open_low and value == low)):
            _fail(f"{prefix}must be {'>' if open_low else '>='} {low:g}, got {value:g} (out of range)")
        if high is not None and value > high:
            _fail(f"{prefix}must be <= {high:g}, got {value:g} (out of range)")
        return value

    parse.__name__ = "number"
    return parse


positive_float = finite_float(0.0, open_low=True)
positive_float.__name__ = "positive number"
learning_rate = finite_float(0.0, open_low=True, what="learning rate")
learning_rate.__name__ = "learning rate"


def count_or_all(text: str) -> int | None:
    """A positive count, or ``all`` (``None``: no limit).

    >>> count_or_all("all") is None, count_or_all("64")
    (True, 64)
    """
    return None if text == "all" else integer(1)(text)


def output_file(*suffixes: str, stdout: bool = False) -> Callable[[str], str]:
    """A file the command can write later: its format is known and its folder is (or can be made) writable.

    The nearest existing ancestor folder must accept a file (a temporary probe, removed at once; no
    folder is created), and the path must not be a folder.  ``-`` (standard output) is accepted with ``stdout``.
    """

    def parse(text: str) -> str:
        if stdout and text == "-":
            return text
        path = Path(text).expanduser()
        if suffixes and path.suffix.lower() not in suffixes:
            _fail(f"{text!r} has an unsupported format {path.suffix or '(none)'!r}; use {', '.join(suffixes)}")
        _check_writable(path, text)
        return text

    parse.__name__ = "output file"
    return parse


def output_folder(text: str) -> Path:
    """A folder the command can create or write into (probed in its nearest existing ancestor, not created)."""
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        _fail(f"{text!r} exists and is not a folder")
    _check_writable(path / "probe", text)
    return Path(text)


def _check_writable(path: Path, text: str) -> None:
    if path.is_dir():
        _fail(f"{text!r} is a folder; give a file name")
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        _fail(f"cannot write to {text!r}: {str(parent)!r} is not a folder")
    try:  # a real probe: permission bits say nothing for root, read-only mounts or /proc
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".emergence-write-test-"):
            pass
    except OSError as error:
        _fail(f"cannot write to {text!r}: {error.strerror or error} in {str(parent)!r}")
    if path.exists() and not os.access(path, os.W_OK):
        _fail(f"cannot write to {text!r}: the file is read-only")


def existing_file(text: str) -> Path:
    """A file the command will read: it exists and is not a folder (refused at parse time, not read as empty)."""
    path = Path(text).expanduser()
    if not path.exists():
        _fail(f"no such file: {text!r}")
    if path.is_dir():
        _fail(f"{text!r} is a folder; give a file")
    return path


def existing_folder(text: str) -> Path:
    """A folder the command will read: it exists and is a folder."""
    path = Path(text).expanduser()
    if not path.exists():
        _fail(f"no such folder: {text!r}")
    if not path.is_dir():
        _fail(f"{text!r} is not a folder")
    return path


def executor_spec(text: str) -> str:
    """``--executor``: the text, once :func:`emergence.base.executors.parse_executor` accepts it."""
    from emergence.base.executors import parse_executor

    parse_executor(text)
    return text


def add_executor_arguments(parser, points: str, default: str | None = "local") -> None:
    """``--executor``, ``--workers`` and ``--out`` of a sweep whose points are ``points``."""
    in_process = "" if default else " (default: one after the other in this process)"
    parser.add_argument("--executor", default=default, type=argument_type(executor_spec),
                        help=f"where the {points} run: local (processes here), dask (a LocalCluster of --workers) "
                        f"or dask:ADDRESS (a running scheduler){in_process}")
    parser.add_argument("--workers", type=integer(1), default=None, help="local worker processes (CPU; default: CPU count)")
    parser.add_argument("--out", default=None, type=output_folder,
                        help="folder for resumable per-point results (shared by the workers of a cluster)")
