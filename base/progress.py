"""Progress of long steps: a bar on a terminal, periodic log lines otherwise, never garbled.

:func:`progress` is a tqdm bar when stderr is a terminal and otherwise a :class:`LogProgress` that
logs ``description: done/total unit (p%) after T s, about E s left`` through the ``emergence`` logger at most every
:data:`LOG_INTERVAL` seconds (and once at the end), so a run whose output goes to a file still shows
that it moves.  Both give the time left of :class:`~emergence.base.time_left.TimeLeft`: measured from the
finished parts (each with its estimated cost, ``update(count, cost=...)``) and from the running part's
steps (:func:`report_steps`, reaching the bar of :func:`steps_reported_to` in this process), and
``time left unknown`` until something is measured.  :func:`heartbeat` does the same for a step without
countable parts (a bar with elapsed time, or a log line every :data:`LOG_INTERVAL` seconds).  Lines
printed while a bar is shown go through :func:`write` (``tqdm.write``), which keeps the bar below them intact.

>>> bar = progress(3, "points", file_is_terminal=False)
>>> for _ in range(3):
...     bar.update(1)
>>> bar.close()
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from emergence.base.time_left import TimeLeft

LOG_INTERVAL = 10.0
"""Seconds between progress log lines when stderr is not a terminal."""

_log = logging.getLogger("emergence")
_listening: list = []  # the bars that report_steps reaches, innermost last


def _terminal() -> bool:
    return hasattr(sys.stderr, "isatty") and sys.stderr.isatty()


class _Counted:
    """The count, the time left and the tqdm methods the engine uses; subclasses show them."""

    def __init__(self, total: int | None, description: str, unit: str = "it", initial: float = 0,
                 cost: float | None = None, clock: Callable[[], float] = time.monotonic,
                 cost_in_seconds: bool = False, interval: float | None = None):
        self.total, self.description, self.unit, self.n = total, description, unit, initial
        self.clock = clock
        self.interval = interval
        self.time_left = TimeLeft((total or 0) - initial, cost, clock, cost_in_seconds)

    def update(self, count: float = 1, cost: float | None = None) -> None:
        """``count`` more parts done, of estimated cost ``cost`` (default: ``count``)."""
        self.n += count
        self.time_left.finished(count, cost)
        self._show()

    def steps(self, done: float, total: float) -> None:
        """The running part has done ``done`` of its ``total`` steps."""
        self.time_left.steps(done, total)
        self._show()

    def _show(self) -> None:
        pass

    def set_description(self, description: str) -> None:
        self.description = description

    def set_postfix(self, **values) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        pass


class LogProgress(_Counted):
    """Log lines every :data:`LOG_INTERVAL` seconds (see the module docstring)."""

    def __init__(self, *arguments, **options):
        super().__init__(*arguments, **options)
        self.started = self.last = self.clock()

    def _line(self) -> str:
        elapsed = self.clock() - self.started
        if self.total:
            line = (f"{self.description}: {self.n:.3g}/{self.total:.3g} {self.unit} ({100 * self.n / self.total:.0f}%) "
                    f"after {elapsed:.0f} s")
            return line + (f", {self.time_left.text()}" if self.n < self.total else "")
        if self.unit == "s":
            return f"{self.description}: still running after {elapsed:.0f} s"
        return f"{self.description}: {self.n} {self.unit} after {elapsed:.0f} s"

    def _show(self) -> None:
        if self.clock() - self.last >= (LOG_INTERVAL if self.interval is None else self.interval):
            self.last = self.clock()
            _log.info(self._line())

    def close(self) -> None:
        if self.clock() - self.started >= (LOG_INTERVAL if self.interval is None else self.interval):
            done = self.total is not None and self.n >= self.total
            _log.info(self._line() + (" (done)" if done else " (stopped)" if self.total else ""))


class TerminalProgress(_Counted):
    """A tqdm bar whose time left is :class:`~emergence.base.time_left.TimeLeft`'s, not tqdm's smoothed rate."""

    def __init__(self, *arguments, **options):
        from tqdm import tqdm

        super().__init__(*arguments, **options)
        self.postfix = ""
        counted = "{l_bar}{bar}| {n_fmt}/{total_fmt} {unit} [{elapsed}{postfix}]" if self.total else None
        self.bar = tqdm(total=self.total, desc=self.description, unit=self.unit, initial=self.n, file=sys.stderr,
                        leave=False, bar_format=counted)
        self._show()

    def update(self, count: float = 1, cost: float | None = None) -> None:
        super().update(count, cost)
        self.bar.update(count)

    def _show(self) -> None:
        if self.total:
            self.bar.set_postfix_str(", ".join(filter(None, [self.postfix, self.time_left.text()])))

    def set_description(self, description: str) -> None:
        super().set_description(description)
        self.bar.set_description(description)

    def set_postfix(self, **values) -> None:
        self.postfix = ", ".join(f"{key}={value}" for key, value in values.items())
        self._show()

    def close(self) -> None:
        self.bar.close()


def progress(total: int | None, description: str, unit: str = "it", initial: float = 0,
             file_is_terminal: bool | None = None, cost: float | None = None, cost_in_seconds: bool = False,
             interval: float | None = None):
    """A :class:`TerminalProgress` bar on a terminal, else a :class:`LogProgress` (see the module docstring);
    ``cost``: the estimated cost of the ``total - initial`` parts left (default: one per part), in reference
    seconds with ``cost_in_seconds`` (:class:`~emergence.base.time_left.TimeLeft`); ``interval``: seconds
    between log lines (default :data:`LOG_INTERVAL`)."""
    if file_is_terminal is None:
        file_is_terminal = _terminal()
    return (TerminalProgress if file_is_terminal else LogProgress)(
        total, description, unit, initial, cost, cost_in_seconds=cost_in_seconds, interval=interval)


@contextmanager
def steps_reported_to(bar):
    """Inside the block, :func:`report_steps` in this process reaches ``bar`` (``None``: nothing)."""
    _listening.append(bar)
    try:
        yield
    finally:
        _listening.pop()


def report_steps(done: float, total: float) -> None:
    """The running point of a sweep in this process has done ``done`` of ``total`` steps (a no-op elsewhere)."""
    if _listening and _listening[-1] is not None:
        _listening[-1].steps(done, total)


def progress_over(items, description: str, unit: str = "it", seconds: list[float] | None = None,
                  interval: float | None = None) -> Iterator:
    """Iterate ``items`` with :func:`progress`; the bar is closed even when the loop is left early.

    ``seconds``: each item's expected wall time (reference seconds), from which the time left is estimated
    from the start; ``interval``: seconds between log lines (0: a line after every item)."""
    items = list(items)
    costs = seconds if seconds is not None else [1.0] * len(items)
    bar = progress(len(items), description, unit, cost=sum(costs), cost_in_seconds=seconds is not None,
                   interval=interval)
    try:
        for item, cost in zip(items, costs, strict=True):
            yield item
            bar.update(1, cost)
    finally:
        bar.close()


@contextmanager
def heartbeat(description: str):
    """Show that a step without countable parts is running: elapsed time on a bar, or a log line every 10 s."""
    stop = threading.Event()
    bar = progress(None, description, unit="s")

    def beat() -> None:
        while not stop.wait(1.0):
            bar.update(1)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        bar.close()


def write(line: str) -> None:
    """Print ``line`` on stdout without garbling a progress bar on stderr."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stdout)
