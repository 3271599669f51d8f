"""Sweeps: one file per finished run, atomic writes, resume without recomputation."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emergence.base.sweeps import InProcessExecutor, LocalProcessExecutor, result_path, run_key, run_sweep

CALLS = []


def _square(config):
    CALLS.append(config["x"])
    if config["x"] == config.get("fail_at"):
        raise KeyboardInterrupt("simulated interruption")
    return {"square": config["x"] ** 2}


def _cube(config):
    return {"cube": config["x"] ** 3}


def test_interrupted_sweep_resumes_without_recomputing(tmp_path):
    configs = [{"x": x, "fail_at": 3} for x in range(6)]
    CALLS.clear()
    with pytest.raises(KeyboardInterrupt):
        run_sweep(_square, configs, tmp_path, executor=InProcessExecutor(), progress=False)
    assert CALLS == [0, 1, 2, 3]
    finished = sorted(p.name for p in tmp_path.iterdir())
    assert finished == sorted(f"{run_key(c)}.json" for c in configs[:3])
    CALLS.clear()
    resumed = [{"x": x, "fail_at": None} for x in range(6)]
    # different configs (fail_at changed) are different runs; keep the finished ones' keys
    results = run_sweep(_square, configs[:3] + resumed[3:], tmp_path, executor=InProcessExecutor(), progress=False)
    assert CALLS == [3, 4, 5]
    assert [r["square"] for r in results] == [x * x for x in range(6)]
    CALLS.clear()
    run_sweep(_square, configs[:3] + resumed[3:], tmp_path, executor=InProcessExecutor(), progress=False)
    assert CALLS == []


def test_result_files_are_complete_json_with_provenance_and_no_leftovers(tmp_path):
    configs = [{"x": x, "seed": x} for x in range(3)]
    run_sweep(_cube, configs, tmp_path, executor=InProcessExecutor(), progress=False)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    for config in configs:
        stored = json.loads(result_path(tmp_path, config).read_text())
        assert stored["config"] == config and stored["result"] == {"cube": config["x"] ** 3}
        assert stored["provenance"]["seed"] == config["x"] and "torch" in stored["provenance"]["versions"]


def test_a_stale_file_with_another_config_is_recomputed(tmp_path):
    config = {"x": 4}
    result_path(tmp_path, config).write_text(json.dumps({"config": {"x": 5}, "result": {"cube": 0}}))
    (result,) = run_sweep(_cube, [config], tmp_path, executor=InProcessExecutor(), progress=False)
    assert result == {"cube": 64}


def test_local_processes_give_the_same_results(tmp_path):
    configs = [{"x": x} for x in range(4)]
    results = run_sweep(_cube, configs, tmp_path, executor=LocalProcessExecutor(2), progress=False)
    assert [r["cube"] for r in results] == [0, 1, 8, 27]


PARENT_STATE = {"touched": False}


def _gradient_in_worker(config):
    """A backward pass in the worker, and whether the worker inherited the parent's memory."""
    import torch

    x = torch.tensor(float(config["x"]), dtype=torch.float64, requires_grad=True)
    (x**3).backward()
    return {"gradient": float(x.grad), "inherited_parent_memory": PARENT_STATE["touched"]}


def test_a_two_worker_sweep_after_a_backward_pass_runs_in_fresh_processes(tmp_path):
    """A notebook trains a model (a backward pass), then sweeps on two workers.

    With CUDA present, torch refuses autograd in a *forked* child of a process whose autograd
    threads have started; this machine may have no GPU to show it, so the test checks the cause
    directly: the workers must not inherit the parent's memory (a fork would see the flag set
    below), and autograd must work in them.
    """
    import torch

    weight = torch.ones(3, dtype=torch.float64, requires_grad=True)
    (weight**2).sum().backward()
    assert weight.grad.tolist() == [2.0, 2.0, 2.0]  # exact by design: 2 * 1.0
    PARENT_STATE["touched"] = True
    try:
        configs = [{"x": x} for x in range(1, 5)]
        results = run_sweep(_gradient_in_worker, configs, tmp_path, executor=LocalProcessExecutor(2), progress=False)
    finally:
        PARENT_STATE["touched"] = False
    assert [r["gradient"] for r in results] == [3.0 * x**2 for x in range(1, 5)]  # exact: small integers
    assert not any(r["inherited_parent_memory"] for r in results)


def _record_pid_and_wait(config):
    Path(config["folder"], f"{os.getpid()}.pid").write_text("started")
    time.sleep(120)
    return {}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_workers_end_when_their_parent_is_killed(tmp_path):
    """SIGKILL to a sweeping process (no clean-up runs): its two workers end too, not run on as orphans."""
    script = (
        "import sys; sys.path.insert(0, {tests!r}); from test_sweeps import _record_pid_and_wait\n"
        "from emergence.base.sweeps import LocalProcessExecutor, run_sweep\n"
        "run_sweep(_record_pid_and_wait, [{{'folder': {folder!r}, 'x': x}} for x in range(2)], {out!r},\n"
        "          executor=LocalProcessExecutor(2), progress=False)\n"
    ).format(tests=str(Path(__file__).parent), folder=str(tmp_path), out=str(tmp_path / "out"))
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("*.pid"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    workers = [int(path.stem) for path in tmp_path.glob("*.pid")]
    assert len(workers) == 2, "the workers did not start"
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 20
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [pid for pid in workers if _running(pid)]
    for pid in alive:  # do not leave them behind, whatever the verdict
        os.kill(pid, signal.SIGKILL)
    assert not alive


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie, dead but not yet reaped, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_run_key_is_stable_across_processes():
    assert run_key({"a": 1, "b": [1, 2]}) == "8baa73198470c7bb"
    assert run_key({"a": 1}) != run_key({"a": 2})


def test_costliest_points_are_handed_out_first_and_results_keep_input_order(tmp_path):
    from emergence.base.sweeps import InProcessExecutor, run_sweep

    started = []

    def work(config):
        started.append(config["P"])
        return {"P": config["P"]}

    configs = [{"P": P} for P in (8, 1024, 64, 512)]
    results = run_sweep(work, configs, tmp_path, executor=InProcessExecutor(), progress=False, cost=lambda c: c["P"])
    assert started == [1024, 512, 64, 8]
    assert [r["P"] for r in results] == [8, 1024, 64, 512]


CHUNKS = []


def _squares(configs):
    """A batched work: every point of the chunk in one call."""
    CHUNKS.append([config["x"] for config in configs])
    if any(config["x"] == config.get("fail_at") for config in configs):
        raise KeyboardInterrupt("simulated interruption")
    return [{"square": config["x"] ** 2} for config in configs]


def test_batched_work_runs_chunks_stores_each_point_and_resumes(tmp_path):
    from emergence.base.sweeps import BatchedWork

    work = BatchedWork(_squares, size=2, group=lambda config: config["x"] % 2)
    configs = [{"x": x, "fail_at": 5} for x in range(7)]
    CHUNKS.clear()
    with pytest.raises(KeyboardInterrupt):
        run_sweep(work, configs, tmp_path, executor=InProcessExecutor(), progress=False)
    # chunks of at most 2 points with one parity each, in the pending order; the chunk holding 5 fails
    assert CHUNKS == [[0, 2], [1, 3], [4, 6], [5]]
    finished = sorted(p.name for p in tmp_path.iterdir())
    assert finished == sorted(f"{run_key(configs[x])}.json" for x in (0, 1, 2, 3, 4, 6))
    CHUNKS.clear()
    resumed = configs[:5] + [{"x": 5, "fail_at": None}] + configs[6:]
    results = run_sweep(work, resumed, tmp_path, executor=InProcessExecutor(), progress=False)
    assert CHUNKS == [[5]]
    assert [r["square"] for r in results] == [x * x for x in range(7)]
    stored = json.loads(result_path(tmp_path, configs[3]).read_text())
    assert stored["config"] == configs[3] and stored["result"] == {"square": 9}


def test_batched_work_in_worker_processes(tmp_path):
    from emergence.base.sweeps import BatchedWork

    work = BatchedWork(_squares, size=3, group=lambda config: 0)
    results = run_sweep(work, [{"x": x} for x in range(5)], tmp_path, executor=LocalProcessExecutor(2), progress=False)
    assert [r["square"] for r in results] == [x * x for x in range(5)]
