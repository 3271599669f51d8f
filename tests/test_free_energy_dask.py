"""Umbrella points (windows, window exchange, MBAR) as a sweep on a Dask LocalCluster: the same Delta F as in this process.

A point's result depends on its configuration and seed only (validation/copy_task/free_energy.py), so on any
executor its draws, profile and Delta F must be those of the local run; the checks below ask for Delta F within
the two runs' combined bootstrap errors and, since the code path, seed and machine are the same, for equal
draws.  The fast check runs a one-worker cluster in this process (``processes=False``): one point, a few seconds of
sampling once softmax model T's compiled loops are compiled (about 15 s on 2 loaded cores, once per test process;
24 s for the whole test measured alone).  The slow one runs L = 4, 5, 6 on two worker processes.
"""

import math
from functools import partial

import pytest

from emergence.base.executors import DaskExecutor
from emergence.base.sweeps import InProcessExecutor, run_sweep
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.free_energy import run_free_energy_point, umbrella_point_config

pytest.importorskip("distributed")
pytest.importorskip("pymbar", reason="umbrella sampling needs the bayes extra")
pytest.importorskip("arviz", reason="R-hat needs the bayes extra")
pytestmark = pytest.mark.usefixtures("one_torch_thread")

SOFTMAX = CopyTaskConvention.parse("", attention="softmax")
TINY = {"centres": [0.1, 0.3, 0.5], "kappa": 200.0, "chains": 2, "warmup": 20, "draws": 15, "leapfrog": 12,
        "min_overlap": 0.0, "exchange_every": 1}
"""A few seconds a point: three windows, two chains each, 35 trajectories (far from converged; a fixed seed)."""
SAMPLED = ("delta_F", "delta_F_error", "F", "mode_weight", "aG_mean", "acceptance", "swap_acceptance",
           "window_mean", "gradients")
"""What a point sampled; its wall time and seconds per gradient differ between runs."""


def _configs(sizes, P_values):
    return [umbrella_point_config(L, 2, P, SOFTMAX, seed=3, **TINY) for L in sizes for P in P_values]


def _assert_same_delta_F(local, on_dask):
    for here, there in zip(local, on_dask):
        errors = math.hypot(here["delta_F_error"], there["delta_F_error"])
        assert abs(here["delta_F"] - there["delta_F"]) <= 3 * errors or here["delta_F"] == there["delta_F"]
        assert {key: here[key] for key in SAMPLED} == {key: there[key] for key in SAMPLED}


def test_umbrella_points_on_an_in_process_dask_cluster_equal_the_local_run(tmp_path):
    from distributed import LocalCluster

    configs = _configs([4], [6])
    work = partial(run_free_energy_point, device="cpu")
    local = run_sweep(work, configs, tmp_path / "local", executor=InProcessExecutor(threads=1), progress=False)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        on_dask = run_sweep(work, configs, tmp_path / "dask", executor=DaskExecutor(cluster.scheduler_address),
                            progress=False)
    _assert_same_delta_F(local, on_dask)


@pytest.mark.slow  # L = 4, 5, 6 on two spawned worker processes: 100 s on 2 loaded cores
def test_umbrella_points_at_L_4_to_6_on_two_dask_workers_equal_the_local_run(tmp_path):
    configs = _configs([4, 5, 6], [8, 16])
    work = partial(run_free_energy_point, device="cpu")
    local = run_sweep(work, configs, tmp_path / "local", executor=InProcessExecutor(threads=1), progress=False)
    on_dask = run_sweep(work, configs, tmp_path / "dask", executor=DaskExecutor(workers=2), progress=False)
    _assert_same_delta_F(local, on_dask)
