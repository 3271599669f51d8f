r"""Choosing a sweep executor from ``--executor local|dask[:ADDRESS]``, and the Dask executor.

``local`` is today's executor (:class:`~emergence.base.sweeps.LocalProcessExecutor`, or
in-process for one worker or a GPU).  ``dask`` starts a ``distributed.LocalCluster`` of
``workers`` processes on this machine; ``dask:tcp://host:8786`` connects to a running
scheduler (``dask scheduler`` on one machine, ``dask worker tcp://host:8786`` on each of the
others).  Every worker runs torch on one thread.

The client writes each finished point atomically as its future completes
(:func:`~emergence.base.sweeps.run_sweep`), so a killed worker costs only the points it
was running: Dask reschedules them (after ``distributed.scheduler.allowed-failures`` deaths a
point fails instead; the others still finish and are written, then the error is raised) and a
rerun computes only the points without a file.  A point's result depends on its configuration
and seed only, so it is the same on any executor.

Dask is the optional extra ``dask`` (``pip install 'emergence[dask]'``).

>>> parse_executor("dask:tcp://10.0.0.1:8786")
('dask', 'tcp://10.0.0.1:8786')
>>> parse_executor("local")
('local', None)
>>> parse_executor("ray")
Traceback (most recent call last):
...
emergence.base.errors.InvalidArgumentError: executor must be local, dask or dask:ADDRESS, got 'ray'
"""

from __future__ import annotations

import importlib.util
from typing import Any

from emergence.base.errors import BackendUnavailableError, EmergenceError, InvalidArgumentError
from emergence.base.sweeps import InProcessExecutor, LocalProcessExecutor

EXECUTOR_HELP = "local (processes on this machine) or dask[:ADDRESS] (a LocalCluster, or a running scheduler)"


def parse_executor(spec: str) -> tuple[str, str | None]:
    """(``local`` | ``dask``, scheduler address or ``None``) from an ``--executor`` value."""
    kind, _, address = spec.partition(":")
    if kind == "local" and not address:
        return "local", None
    if kind == "dask":
        return "dask", address or None
    raise InvalidArgumentError("executor", f"must be local, dask or dask:ADDRESS, got {spec!r}")


def _one_torch_thread() -> None:
    import torch

    torch.set_num_threads(1)


class DaskExecutor:
    """Runs configurations as Dask futures; yields ``(index, result)`` as each finishes.

    ``address``: a running scheduler, or ``None`` for a ``LocalCluster`` of ``workers``
    single-threaded worker processes, closed again after the sweep.  A point that fails does
    not stop the others: every other point is yielded first, then the first error is raised.
    Workers write each finished point into the (shared) output folder themselves
    (``stores_where_it_runs``): a result computed on a worker that dies before the client
    fetches it is not lost.
    """

    stores_where_it_runs = True

    def __init__(self, address: str | None = None, workers: int | None = None):
        if importlib.util.find_spec("distributed") is None:
            raise BackendUnavailableError("--executor dask needs Dask (pip install 'emergence[dask]')")
        self.address = address
        self.workers = workers

    def _client(self):
        import dask
        from distributed import Client, LocalCluster

        if self.address is not None:
            return Client(self.address), None
        # one point per worker at a time, so that a dying worker holds only the point it runs; workers
        # spawned, never forked, whatever the user's Dask configuration says (see LocalProcessExecutor)
        with dask.config.set({"distributed.scheduler.worker-saturation": 1.0,
                              "distributed.worker.multiprocessing-method": "spawn"}):
            cluster = LocalCluster(
                n_workers=self.workers or 2, threads_per_worker=1, processes=True, dashboard_address=":0"
            )
        return Client(cluster), cluster

    def map_unordered(self, work, configs):
        from distributed import as_completed

        client, cluster = self._client()
        try:
            client.run(_one_torch_thread)
            futures = {
                client.submit(work, config, pure=False, key=f"point-{index}-{id(self)}"): index
                for index, config in enumerate(configs)
            }
            first_error: BaseException | None = None
            for future in as_completed(futures):
                try:
                    result = future.result()
                except Exception as error:  # a point that failed: finish the others first
                    first_error = first_error or error
                    continue
                yield futures[future], result
            if first_error is not None:
                raise EmergenceError(f"a sweep point failed on Dask ({first_error}); rerun to resume") from first_error
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def sweep_executor(spec: str, workers: int | None = None, device: str = "cpu") -> Any:
    """The executor ``--executor spec`` names, with ``--workers`` processes (local or LocalCluster)."""
    kind, address = parse_executor(spec)
    if kind == "dask":
        return DaskExecutor(address, workers)
    if device == "cuda":
        return InProcessExecutor()
    if workers == 1:
        return InProcessExecutor(threads=1)
    return LocalProcessExecutor(workers)
