"""Progress of long steps: a bar on a terminal, periodic log lines otherwise, never garbled.

:func:`progress` is a tqdm bar when stderr is a terminal and otherwise a :class:`LogProgress` that
logs ``description: done/total unit (p%) after T s, about E s left`` through the ``emergence`` logger at most every
:data:`LOG_INTERVAL` seconds (and once at the end), so a run whose output goes to a file still shows
that it moves.  :func:`heartbeat` does the same for a step without countable parts (a bar with
elapsed time, or a log line every :data:`LOG_INTERVAL` seconds).  Lines printed while a bar is
shown go through :func:`write` (``tqdm.write``), which keeps the bar below them intact.

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
from typing import Iterator

LOG_INTERVAL = 10.0
"""Seconds between progress log lines when stderr is not a terminal."""

_log = logging.getLogger("emergence")


def _terminal() -> bool:
    return hasattr(sys.stderr, "isatty") and sys.stderr.isatty()


class LogProgress:
    """The tqdm methods the engine uses, reported as log lines every :data:`LOG_INTERVAL` seconds."""

    def __init__(self, total: int | None, description: str, unit: str = "it", initial: float = 0):
        self.total, self.description, self.unit, self.n, self.initial = total, description, unit, initial, initial
        self.started = self.last = time.monotonic()

    def _line(self) -> str:
        elapsed = time.monotonic() - self.started
        if self.total:
            line = (f"{self.description}: {self.n:.3g}/{self.total:.3g} {self.unit} ({100 * self.n / self.total:.0f}%) "
                    f"after {elapsed:.0f} s")
            if self.initial < self.n < self.total * (1 - 1e-9):  # remaining work at this run's rate so far
                line += f", about {elapsed * (self.total - self.n) / (self.n - self.initial):.0f} s left"
            return line
        if self.unit == "s":
            return f"{self.description}: still running after {elapsed:.0f} s"
        return f"{self.description}: {self.n} {self.unit} after {elapsed:.0f} s"

    def update(self, count: int = 1) -> None:
        self.n += count
        if time.monotonic() - self.last >= LOG_INTERVAL:
            self.last = time.monotonic()
            _log.info(self._line())

    def set_description(self, description: str) -> None:
        self.description = description

    def set_postfix(self, **values) -> None:
        pass

    def close(self) -> None:
        if time.monotonic() - self.started >= LOG_INTERVAL:
            done = self.total is not None and self.n >= self.total * (1 - 1e-9)  # cost-weighted counts are sums of floats
            _log.info(self._line() + (" (done)" if done else " (stopped)" if self.total else ""))

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress(total: int | None, description: str, unit: str = "it", initial: float = 0,
             file_is_terminal: bool | None = None):
    """A tqdm bar on a terminal, else a :class:`LogProgress` (see the module docstring)."""
    if file_is_terminal is None:
        file_is_terminal = _terminal()
    if file_is_terminal:
        from tqdm import tqdm

        return tqdm(total=total, desc=description, unit=unit, initial=initial, file=sys.stderr, leave=False)
    return LogProgress(total, description, unit, initial)


def progress_over(items, description: str, unit: str = "it") -> Iterator:
    """Iterate ``items`` with :func:`progress`; the bar is closed even when the loop is left early."""
    items = list(items)
    bar = progress(len(items), description, unit)
    try:
        for item in items:
            yield item
            bar.update(1)
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
