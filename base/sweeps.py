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
from dataclasses import dataclass
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


def _store(folder: str, code: str, config: dict[str, Any], result: dict[str, Any]) -> None:
    """Write one finished point atomically: ``{"config", "code", "result", "provenance"}``."""
    write_json_atomic(result_path(folder, config), {"config": config, "code": code, "result": result,
                                                    "provenance": provenance(config, config.get("seed"))})


def _run_and_store(work: Work, folder: str, code: str, config: dict[str, Any]) -> dict[str, Any]:
    """Run one point and write its file at once, where it ran (a shared output folder)."""
    result = work(config)
    _store(folder, code, config, result)
    return result


def _run_chunk_and_store(work: "Callable[[list[dict[str, Any]]], list[dict[str, Any]]]", folder: str, code: str,
                         configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run one chunk of points and write each point's file at once, where it ran."""
    results = work(configs)
    for config, result in zip(configs, results):
        _store(folder, code, config, result)
    return results


@dataclass(frozen=True)
class BatchedWork:
    r"""A work that runs several points in one call: ``work(configs) -> results``, one result per configuration, in order.

    :func:`run_sweep` hands it chunks of at most ``size`` pending points whose ``group(config)`` agree
    (a copy-task sweep: every setting but :math:`P`), and writes each point's result into the store as
    its chunk finishes, keyed per point as always: a point's result must not depend on the chunk it ran
    in, so that resuming may regroup the points that are left.  Ctrl-C keeps every finished chunk; the
    points of the chunk that was running are lost together.  ``work`` goes to the executor's workers
    (picklable); ``group`` stays in this process.
    """

    work: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
    size: int
    group: Callable[[dict[str, Any]], Any]

    def chunks(self, indices: Sequence[int], configs: Sequence[dict[str, Any]]) -> list[list[int]]:
        """``indices`` (in their order) split into chunks of at most ``size`` with one ``group`` each."""
        by_group: dict[Any, list[list[int]]] = {}
        chunks: list[list[int]] = []
        for index in indices:
            open_chunks = by_group.setdefault(self.group(configs[index]), [])
            if not open_chunks or len(open_chunks[-1]) >= max(1, self.size):
                open_chunks.append([])
                chunks.append(open_chunks[-1])
            open_chunks[-1].append(index)
        return chunks


def _stored_result(folder, config: dict[str, Any], code: str) -> dict[str, Any] | None:
    """The result stored for ``config`` by the code ``code``, or None."""
    path = result_path(folder, config)
    stored = (read_stored_result(path) or {}) if path.exists() else {}
    if (isinstance(stored, dict) and stored.get("config") == json.loads(json.dumps(config, default=str))
            and stored.get("code") == code):
        return stored["result"]
    return None


def _plan(work: "Work | BatchedWork", pending: list[int], configs: Sequence[dict[str, Any]], folder: str, code: str,
          stored_by_executor: bool) -> tuple[list[list[int]], list[Any], Callable]:
    """What the executor runs: the chunks (lists of indices), one item per chunk and the task applied to each item.

    A plain work runs each point alone (item: its configuration); a :class:`BatchedWork` runs chunks
    (item: the list of their configurations, the task returns a list of results).
    """
    task: Callable[[Any], Any]
    if isinstance(work, BatchedWork):
        chunks = work.chunks(pending, configs)
        task = partial(_run_chunk_and_store, work.work, folder, code) if stored_by_executor else work.work
        return chunks, [[configs[i] for i in chunk] for chunk in chunks], task
    task = partial(_run_and_store, work, folder, code) if stored_by_executor else work
    return [[index] for index in pending], [configs[i] for i in pending], task


def run_sweep(
    work: "Work | BatchedWork",
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
    (:mod:`emergence.base.time_left`, :func:`emergence.base.progress.report_steps`).  A
    :class:`BatchedWork` runs chunks of pending points in one call each (in that order) and stores
    every point of a chunk when the chunk finishes.
    """
    code = code if code is not None else source_fingerprint()
    folder = ensure_writable_directory(out)
    results = [_stored_result(folder, config, code) for config in configs]
    pending = [index for index, result in enumerate(results) if result is None]
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
    chunks, items, task = _plan(work, pending, configs, str(folder), code, stored_by_executor)
    try:
        with steps_reported_to(bar):  # the steps of points run in this process
            for chunk_index, result in executor.map_unordered(task, items):
                chunk = chunks[chunk_index]
                for index, point_result in zip(chunk, result if isinstance(work, BatchedWork) else [result]):
                    if not stored_by_executor:
                        _store(str(folder), code, configs[index], point_result)
                    results[index] = point_result
                    if bar is not None:
                        bar.update(1, cost=costs[index])
    finally:
        if bar is not None:
            bar.close()
    return [result for result in results if result is not None]  # all of them: every point was stored or has run
