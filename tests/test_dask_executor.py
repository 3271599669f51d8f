"""Sweeps on a 2-worker Dask LocalCluster: same results as local, a killed worker costs only its points."""

import os
from pathlib import Path

import pytest

from emergence.base.errors import EmergenceError
from emergence.base.executors import DaskExecutor, parse_executor, sweep_executor
from emergence.base.sweeps import InProcessExecutor, LocalProcessExecutor, result_path, run_sweep
from emergence.validation.copy_task.compiled_marginal_action import GRADIENT_ENVIRONMENT

pytest.importorskip("distributed")


def _tiny_copy_point(config):
    """A tiny real training point (model M, softmax, Adam): seeds fix the result on any executor."""
    from emergence.validation.copy_task.experiment import run_copy_point

    log = config.get("log")
    if log:
        with open(Path(log) / f"{config['P']}-{os.getpid()}", "a") as handle:
            handle.write("run\n")
        if config["P"] == config.get("kill_at") and not (Path(log) / "killed").exists():
            (Path(log) / "killed").write_text("once")
            os._exit(1)  # the worker process dies mid-sweep
    point = {key: value for key, value in config.items() if key not in ("log", "kill_at")}
    result = run_copy_point(point, device="cpu")
    result.pop("seconds")  # wall time: the one entry that differs between executors
    return result


def _runs_per_point(log):
    """How often each point started, counted from the lines its processes logged."""
    counts = {4: 0, 6: 0, 8: 0, 10: 0}
    for file in log.iterdir():
        if file.name != "killed":
            counts[int(file.name.split("-")[0])] += len(file.read_text().splitlines())
    return counts


def _configs(extra=None):
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.experiment import point_config

    convention = CopyTaskConvention.parse(None, attention="softmax")
    configs = [
        point_config("softmax", "adam", 4, 3, P, 1, convention, seed=7, adam_steps=20, sgld_burn_in=1,
                     sgld_draws=4, sgld_thin=1, chains=1, dtype="float64", objective="joint")
        for P in (4, 6, 8, 10)
    ]
    return [config | (extra or {}) for config in configs]


def test_executor_names():
    assert parse_executor("dask") == ("dask", None)
    assert isinstance(sweep_executor("local", 1), InProcessExecutor)
    assert isinstance(sweep_executor("dask", 2), DaskExecutor)
    with pytest.raises(EmergenceError):
        parse_executor("local:somewhere")


def test_two_worker_local_cluster_equals_local_and_survives_a_killed_worker(tmp_path, monkeypatch):
    # every process here starts fresh: the autograd path of the softmax action spares each one the Numba compile
    # of the compiled path (seconds a process), on the local executor and on Dask alike
    monkeypatch.setenv(GRADIENT_ENVIRONMENT, "autograd")
    configs = _configs()
    local = run_sweep(_tiny_copy_point, configs, tmp_path / "local", executor=LocalProcessExecutor(2), progress=False)

    # one worker dies while running the point P = 8, and Dask may not retry it; the other three points are
    # computed and stored on the cluster, the rerun (a second cluster) computes P = 8 alone: every point of the
    # rerun's answer came from a Dask worker, so it is also the comparison of Dask with the local executor
    import dask

    log = tmp_path / "log"
    log.mkdir()
    killing = _configs({"log": str(log), "kill_at": 8})
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with pytest.raises(EmergenceError, match="rerun to resume"):
            run_sweep(_tiny_copy_point, killing, tmp_path / "killed", executor=DaskExecutor(workers=2), progress=False)
    finished = {config["P"] for config in killing if result_path(tmp_path / "killed", config).exists()}
    runs_before = _runs_per_point(log)
    assert finished == {4, 6, 10}, runs_before  # only the killed worker's point is lost

    rerun = run_sweep(_tiny_copy_point, killing, tmp_path / "killed", executor=DaskExecutor(workers=2), progress=False)
    runs_after = _runs_per_point(log)
    assert {P: runs_after[P] - runs_before[P] for P in runs_after} == {4: 0, 6: 0, 8: 1, 10: 0}
    assert rerun == local  # exact by design: one code path, seeded, one torch thread per worker, same machine;
    # the stored points read back as exact JSON, the lost one computed on the second cluster
