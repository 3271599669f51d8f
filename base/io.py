"""Atomic result files and run provenance (configuration, versions, seed).

Every result file is written to a temporary name in the target folder and then renamed
over the final name, so a reader never sees a half-written file and an interrupted run
leaves the previous complete version in place.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> path = write_json_atomic(folder / "r.json", {"P_star": 5290.0})
>>> read_json(path)
{'P_star': 5290.0}
"""

from __future__ import annotations

import json
import logging
import os
import platform
import sys
import tempfile
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator

from emergence.base.errors import EmergenceError

TRACKED_PACKAGES = ("emergence", "sympy", "mpmath", "numpy", "scipy", "torch", "hypothesis")


def ensure_writable_directory(directory: str | os.PathLike) -> Path:
    """Create ``directory`` if needed and check that files can be written there."""
    path = Path(directory)
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass
    except OSError as error:
        raise EmergenceError(f"cannot write to {str(path)!r}: {error.strerror or error}") from None
    return path


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` if the block succeeds.

    The file gets the permissions of an ordinary new file (``0o666`` less the umask), not the
    owner-only mode of :func:`tempfile.mkstemp`.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(handle)
    os.chmod(temporary, 0o666 & ~_current_umask())
    temporary_path = Path(temporary)
    try:
        yield temporary_path
        os.replace(temporary_path, target)
    finally:
        temporary_path.unlink(missing_ok=True)


def _json_default(value: Any):
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def to_json_text(data: Any) -> str:
    """JSON text with NumPy/torch scalars and arrays converted; NaN is written as ``NaN``."""
    return json.dumps(data, indent=2, default=_json_default) + "\n"


def write_json_atomic(path: str | os.PathLike, data: Any) -> Path:
    """Write ``data`` as JSON to ``path`` atomically; return the path."""
    with atomic_path(path) as temporary:
        temporary.write_text(to_json_text(data), encoding="utf-8")
    return Path(path)


def write_npz_atomic(path: str | os.PathLike, **arrays) -> Path:
    """Write NumPy arrays to an ``.npz`` file atomically; return the path."""
    import numpy

    with atomic_path(path) as temporary:
        with open(temporary, "wb") as handle:
            numpy.savez(handle, **arrays)
    return Path(path)


class CorruptFileError(EmergenceError):
    """A stored result file that cannot be read back (truncated, not JSON, not UTF-8)."""


def read_json(path: str | os.PathLike) -> Any:
    """Read a JSON file written by :func:`write_json_atomic`; :class:`CorruptFileError` names a corrupt one."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CorruptFileError(
            f"{path} is corrupt ({type(error).__name__}: {str(error).splitlines()[0]}); delete it and run again"
        ) from None


def read_stored_result(path: str | os.PathLike) -> Any | None:
    """A resumable result file's content, or ``None`` when it is corrupt: then it is renamed to
    ``<name>.corrupt`` (kept for inspection) with a logged note, so that the caller recomputes it.
    """
    try:
        return read_json(path)
    except CorruptFileError as error:
        aside = Path(path).with_name(Path(path).name + ".corrupt")
        os.replace(path, aside)
        logging.getLogger("emergence").warning(f"{error}: moved aside to {aside.name} and recomputed")
        return None


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that determine a result."""
    versions = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def provenance(config: dict[str, Any], seed: int | None) -> dict[str, Any]:
    """The record stored next to every result: configuration, seed, versions, time."""
    return {
        "config": config,
        "seed": seed,
        "versions": package_versions(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
    }


def timed_provenance(config: dict[str, Any], seed: int | None, seconds: float) -> dict[str, Any]:
    """:func:`provenance` plus the wall time of the run, the load average when it ended and the processor: what a
    script's measurement on a shared machine needs next to its numbers.

    >>> sorted(timed_provenance({"L": 12}, 0, 1.5))
    ['command', 'config', 'created', 'load', 'machine', 'seconds', 'seed', 'versions']
    """
    return provenance(config, seed) | {"seconds": seconds, "load": os.getloadavg()[0],
                                       "machine": platform.processor() or platform.machine()}
