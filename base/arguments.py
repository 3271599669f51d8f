"""Checks of the Python API's arguments, run before any work.

Each check takes the parameter's name and the value a caller passed, and returns the value in
the form the engine works with, or raises :class:`~emergence.base.errors.InvalidArgumentError`
naming the parameter (never a command-line flag: the command line maps names to its flags).
Integers are ``int`` or NumPy integers, or floats with no fractional part; ``bool`` is not a
number and text is not a number.

>>> integer("L", 64.0, low=3)
64
>>> integer("L", 64.5, low=3)
Traceback (most recent call last):
...
emergence.base.errors.InvalidArgumentError: L must be an integer >= 3, got 64.5
>>> integer("L", "64", low=3)
Traceback (most recent call last):
...
emergence.base.errors.InvalidArgumentError: L must be an integer >= 3, got '64' (a str)
>>> words("queries", "the")
('the',)
"""

from __future__ import annotations

import collections.abc
import math
import numbers
import os
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from emergence.base.errors import InvalidArgumentError

T = TypeVar("T")


def shown(value: Any) -> str:
    """``value`` as a message shows it: numbers plainly, anything else with its type."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return repr(value) if not hasattr(value, "item") else repr(value.item())
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    kind = type(value).__name__
    return f"{text} ({'an' if kind[0] in 'aeiou' else 'a'} {kind})"


def _real(value: Any) -> bool:
    """A real number, not a truth value (``True`` is an ``int`` to Python, not to the engine)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _as_float(value: Any) -> float:
    """``value`` as a float, infinite where it is too large for one (``10**400``)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _bounds(low: float | None, high: float | None, open_low: bool = False, open_high: bool = False) -> str:
    parts = [f"{'>' if open_low else '>='} {low:g}" if low is not None else "",
             f"{'<' if open_high else '<='} {high:g}" if high is not None else ""]
    return " and ".join(part for part in parts if part)


def integer(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """A whole number in ``[low, high]``: an ``int``, a NumPy integer or an integral float (``64.0``)."""
    whole = _real(value) and (isinstance(value, numbers.Integral) or _as_float(value).is_integer())
    if not whole or (low is not None and value < low) or (high is not None and value > high):
        bounds = _bounds(low, high)
        raise InvalidArgumentError(name, f"must be an integer{' ' + bounds if bounds else ''}, got {shown(value)}")
    return int(value)


def number(name: str, value: Any, low: float | None = None, high: float | None = None, open_low: bool = False,
           open_high: bool = False) -> float:
    """A finite real number in ``[low, high]`` (the ends left out with ``open_low``, ``open_high``)."""
    finite = _real(value) and math.isfinite(_as_float(value))
    if not finite or (low is not None and (value < low or (open_low and value == low))) \
            or (high is not None and (value > high or (open_high and value == high))):
        bounds = _bounds(low, high, open_low, open_high)
        raise InvalidArgumentError(name, f"must be a finite number{' ' + bounds if bounds else ''}, got {shown(value)}")
    return float(value)


def positive(name: str, value: Any) -> float:
    """A finite number > 0."""
    return number(name, value, 0.0, open_low=True)


def seed(name: str, value: Any) -> int:
    """A seed: an integer in ``[0, 2**32)`` (every generator the engine uses accepts them)."""
    return integer(name, value, 0, 2**32 - 1)


def flag(name: str, value: Any) -> bool:
    """``True`` or ``False`` (not 0, 1 or text)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidArgumentError(name, f"must be True or False, got {shown(value)}")
    return bool(value)


def text(name: str, value: Any, empty: bool = False) -> str:
    """A string, non-empty unless ``empty``."""
    if not isinstance(value, str) or not (value or empty):
        raise InvalidArgumentError(name, f"must be a {'' if empty else 'non-empty '}string, got {shown(value)}")
    return value


def executor(name: str, value: Any) -> str:
    """Where a sweep runs: ``local``, ``dask`` or ``dask:ADDRESS`` (:func:`~emergence.base.executors.parse_executor`)."""
    from emergence.base.executors import parse_executor

    parse_executor(text(name, value))
    return value


def choice(name: str, value: Any, options: Sequence[str]) -> str:
    """One of ``options``."""
    if not isinstance(value, str) or value not in options:
        raise InvalidArgumentError(name, f"must be one of {', '.join(options)}, got {shown(value)}")
    return value


def sequence(name: str, values: Any, check: Callable[[str, Any], T], min_length: int = 1) -> tuple[T, ...]:
    """A list, tuple (any sequence but text) or 1-d array of at least ``min_length`` items, each passed through ``check``.

    >>> sequence("P", [8, 16.0], lambda name, value: integer(name, value, low=1))
    (8, 16)
    """
    ordered = isinstance(values, collections.abc.Sequence) and not isinstance(values, (str, bytes))
    if not (ordered or isinstance(values, np.ndarray) and values.ndim == 1):
        raise InvalidArgumentError(name, f"must be a sequence of values, got {shown(values)}")
    if len(values) < min_length:
        raise InvalidArgumentError(name, f"must hold at least {min_length} value{'s' * (min_length > 1)}, "
                                         f"got {len(values)}")
    checked = []
    for k, value in enumerate(values):
        try:
            checked.append(check(name, value))
        except InvalidArgumentError as error:
            raise InvalidArgumentError(name, f"item {k} {error.reason}") from None
    return tuple(checked)


def distinct(values: tuple[float, ...], minimum: int, name: str) -> tuple[float, ...]:
    """``values`` when at least ``minimum`` of them differ (a grid that can place a transition)."""
    if len(set(values)) < minimum:
        raise InvalidArgumentError(name, f"must hold at least {minimum} distinct values, got {sorted(set(values))}")
    return values


def words(name: str, value: Any) -> tuple[str, ...]:
    """Query words: one string is one word (not its letters), or a non-empty sequence of strings."""
    if isinstance(value, str):
        return (text(name, value),)
    return sequence(name, value, text)


def path(name: str, value: Any) -> Path:
    """A path given as ``str`` or :class:`os.PathLike` (it need not exist)."""
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        raise InvalidArgumentError(name, f"must be a path (str or os.PathLike), got {shown(value)}")
    return Path(value)


def existing_file(name: str, value: Any) -> Path:
    """A path to a file that exists."""
    found = path(name, value)
    if not found.is_file():
        raise InvalidArgumentError(name, f"{str(value)!r} {'is a folder' if found.is_dir() else 'does not exist (no such file)'}")
    return found


def existing_folder(name: str, value: Any) -> Path:
    """A path to a folder that exists."""
    found = path(name, value)
    if not found.is_dir():
        raise InvalidArgumentError(name, f"{str(value)!r} {'is a file' if found.exists() else 'does not exist (no such folder)'}")
    return found


def optional(check: Callable[..., T], name: str, value: Any, *args, **kwargs) -> T | None:
    """``None`` passed through, any other value checked by ``check``."""
    return None if value is None else check(name, value, *args, **kwargs)
