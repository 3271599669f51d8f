r"""Resumable sweeps: many runs through one executor, each result written atomically.

A sweep is a list of JSON-able run configurations and one function ``work(config) -> dict``.
Every finished run is written to ``<out>/<run_key(config)>.json`` (atomic rename, with the
provenance: configuration, seed, versions), so an interrupted sweep resumes by skipping
every configuration whose file exists.  :func:`run_key` is a stable hash of the
canonical JSON of the configuration (sorted keys), independent of dict order and process.
A stored run is reused only when it was made by the same engine code as well
(:func:`source_fingerprint` of the science packages): after a change to the training code,
every run is recomputed and its file replaced.

Executors share one interface, ``map_unordered(work, configs)`` yielding
``(index, result)`` as runs finish: :class:`InProcessExecutor` (tests, a GPU: runs in
this process, in order) and :class:`LocalProcessExecutor` (default: a pool of local
processes, each with ``torch`` limited to one thread).  A "run" may itself be a batched
tensor program of many models (all seeds and starts of one :math:`P`, say).

>>> import tempfile
>>> out = tempfile.mkdtemp()
>>> results = run_sweep(lambda c: {"square": c["x"] ** 2}, [{"x": 2}, {"x": 3}], out,
...                     executor=InProcessExecutor(), progress=False)
>>> [r["square"] for r in results]
[4, 9]
>>> run_key({"b": 1, "a": 2}) == run_key({"a": 2, "b": 1})
True
"""

from __future__ import annotations

import hashlib
import importlib
import json
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol, Sequence

from emergence.base.progress import progress as progress_bar, steps_reported_to
from emergence.base.io import ensure_writable_directory, provenance, read_stored_result, write_json_atomic
from emergence.base.runtime import torch_threads

Work = Callable[[dict[str, Any]], dict[str, Any]]

SCIENCE_PACKAGES = ("emergence.base", "emergence.theory", "emergence.numerics", "emergence.validation")
"""The packages whose code decides what a run computes: the ground floor and the three layers (the CLI and the report do not)."""


def folder_fingerprint(folders: dict[str, Path]) -> str:
    """SHA-256 (16 hex digits) of every ``*.py`` file under each named folder, in path order.

    Files are named ``<name>/<path relative to the folder>``, so a source checkout and an
    installed copy of the same code give the same fingerprint.
    """
    digest = hashlib.sha256()
    seen: set[Path] = set()
    for name, folder in folders.items():
        for path in sorted(Path(folder).rglob("*.py")):
            if path in seen or "__pycache__" in path.parts:
                continue
            seen.add(path)
            digest.update(f"{name}/{path.relative_to(folder).as_posix()}".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=None)
def source_fingerprint(packages: tuple[str, ...] = SCIENCE_PACKAGES) -> str:
    """:func:`folder_fingerprint` of the named packages' folders (the engine's code fingerprint)."""
    return folder_fingerprint({package: Path(importlib.import_module(package).__file__).resolve().parent  # type: ignore[arg-type]
                               for package in packages})


def run_key(config: dict[str, Any]) -> str:
    """A stable 16-hex-digit key of a configuration (SHA-256 of its canonical JSON)."""
    canonical = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


class Executor(Protocol):
    def map_unordered(self, work: Work, configs: Sequence[dict[str, Any]]) -> Iterator[tuple[int, dict[str, Any]]]:
        """Run ``work`` on every configuration; yield ``(index, result)`` as each finishes."""


class InProcessExecutor:
    """Runs every configuration in this process, one after the other.

    ``threads``: limit torch to that many threads while the runs execute (restored after);
    small batched models on a shared CPU run an order of magnitude faster on one thread
    than on contended threads.  ``None`` leaves torch alone (a GPU).
    """

    def __init__(self, threads: int | None = None):
        self.threads = threads

    def map_unordered(self, work, configs):
        with torch_threads(self.threads):
            for index, config in enumerate(configs):
                yield index, work(config)


def _limit_threads(parent: int) -> None:
    """Worker setup: one torch thread, Ctrl-C left to the parent (no worker tracebacks), and the
    worker ends with its parent process ``parent`` (see :func:`_end_with_parent`)."""
    import signal

    import torch

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _end_with_parent(parent)
    torch.set_num_threads(1)


def _end_with_parent(parent: int) -> None:
    """Linux: the kernel sends this process SIGTERM when its parent dies (``prctl(PR_SET_PDEATHSIG)``).

    A command killed outright (SIGKILL, an out-of-memory kill) runs no clean-up; without this its
    workers ran on as orphans (two of them for 49 minutes, each on a core).  Elsewhere nothing.
    """
    import sys

    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    ctypes.CDLL(None).prctl(pr_set_pdeathsig, int(signal.SIGTERM))
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


class LocalProcessExecutor:
    """A pool of ``workers`` local processes (default: the CPU count), one torch thread each.

    The workers are *spawned* (fresh interpreters), never forked: a process that has run a
    backward pass with CUDA present holds autograd threads, and torch refuses autograd in a
    forked child of it ("Unable to handle autograd's threading in combination with fork-based
    multiprocessing").  ``work`` and the configurations must therefore be picklable (a module-level
    function, or a ``functools.partial`` of one); each pool start costs one interpreter and one
    ``import torch`` per worker (about a second).
    """

    def __init__(self, workers: int | None = None):
        self.workers = max(1, workers or os.cpu_count() or 1)

    def map_unordered(self, work, configs):
        pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_limit_threads, initargs=(os.getpid(),))
        finished = False
        try:
            futures = {pool.submit(work, config): index for index, config in enumerate(configs)}
            for future in as_completed(futures):
                yield futures[future], future.result()
            finished = True
        finally:
            if finished:
                pool.shutdown(wait=True)
            else:  # interrupted or failed: stop the running workers now instead of waiting for them
                processes = list((pool._processes or {}).values())
                pool.shutdown(wait=False, cancel_futures=True)
                for process in processes:
                    process.terminate()


def sweep_folder(out: str | os.PathLike | None, prefix: str) -> str:
    """``out``, or (``None``) a fresh temporary folder that is removed when the process exits."""
    if out:
        return str(out)
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, folder, True)  # a temporary folder never outlives the process
    return folder


def result_path(out: str | os.PathLike, config: dict[str, Any]) -> Path:
    return Path(out) / f"{run_key(config)}.json"


def _run_and_store(work: Work, folder: str, code: str, config: dict[str, Any]) -> dict[str, Any]:
    """Run one point and write its file at once, where it ran (a shared output folder)."""
    result = work(config)
    _store(folder, config, code, result)
    return result


def _store(folder, config: dict[str, Any], code: str, result) -> None:
    """Write one finished point atomically: ``{"config", "code", "result", "provenance"}``."""
    write_json_atomic(result_path(folder, config), {"config": config, "code": code, "result": result,
                                                    "provenance": provenance(config, config.get("seed"))})


def _stored_results(folder, configs: Sequence[dict[str, Any]], code: str) -> tuple[list, list[int]]:
    """The results already stored in ``folder`` for ``configs`` (None where absent or stale: another
    configuration under the same hash, or another ``code``) and the indices still to run."""
    results: list[dict[str, Any] | None] = [None] * len(configs)
    pending = []
    for index, config in enumerate(configs):
        path = result_path(folder, config)
        if path.exists():
            stored = read_stored_result(path) or {}
            if (isinstance(stored, dict) and stored.get("config") == json.loads(json.dumps(config, default=str))
                    and stored.get("code") == code):
                results[index] = stored["result"]
                continue
        pending.append(index)
    return results, pending


def run_sweep(
    work: Work,
    configs: Sequence[dict[str, Any]],
    out: str | os.PathLike,
    executor: Executor | None = None,
    progress: bool = True,
    description: str = "runs",
    code: str | None = None,
    cost: Callable[[dict[str, Any]], float] | None = None,
) -> list[dict[str, Any]]:
    """Run every configuration not yet finished in ``out``; return all results in input order.

    Each stored file holds ``{"config", "code", "result", "provenance"}``; a file whose stored
    configuration differs from the requested one (a hash collision) or whose ``code`` differs
    from ``code`` (default: :func:`source_fingerprint`, the engine's code now) is recomputed.
    An executor with ``stores_where_it_runs`` (Dask) has each worker write its finished point
    itself, so a worker that dies loses only the point it was running, not results it had
    computed but not yet handed to the client.  ``cost``: an estimate of a point's run time;
    the points are then handed out costliest first (longest-processing-time order: with uneven
    points and a few workers the largest no longer starts last, after the others).  The progress
    counts points; its time left is fitted to the measured times of the finished points against their
    count and estimated cost, and to the steps a running point reports in this process
    (:mod:`emergence.base.time_left`, :func:`emergence.base.progress.report_steps`).
    """
    code = code if code is not None else source_fingerprint()
    folder = ensure_writable_directory(out)
    results, pending = _stored_results(folder, configs, code)
    costs = [1.0] * len(configs)
    if cost is not None and configs:
        pending.sort(key=lambda index: -cost(configs[index]))
        costs = [float(cost(config)) for config in configs]
    bar = None
    if progress:
        bar = progress_bar(len(configs), description, unit="run", initial=len(configs) - len(pending),
                           cost=sum(costs[index] for index in pending))
    executor = executor or LocalProcessExecutor()
    stored_by_executor = getattr(executor, "stores_where_it_runs", False)
    try:
        todo = [configs[i] for i in pending]
        task = partial(_run_and_store, work, str(folder), code) if stored_by_executor else work
        with steps_reported_to(bar):  # the steps of points run in this process
            for local_index, result in executor.map_unordered(task, todo):
                index = pending[local_index]
                config = configs[index]
                if not stored_by_executor:
                    _store(folder, config, code, result)
                results[index] = result
                if bar is not None:
                    bar.update(1, cost=costs[index])
    finally:
        if bar is not None:
            bar.close()
    return results
