"""A sweep trained as one batched model equals the per-point loop, point by point."""

import functools
import math

import pytest

from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.experiment import point_config, run_copy_point, run_copy_points, sweep_model
from emergence.validation.copy_task.training import train_map

TOLERANCE = 1e-10
"""float64: about 5e5 rounding units of 2.2e-16; the batched matmuls may round differently from one point's."""

GRID = (3, 6, 12, 40)


def _configs(architecture: str, attention: str, grid=GRID, steps: int = 600, optimizer: str = "adam") -> list[dict]:
    convention = CopyTaskConvention(architecture=architecture, attention=attention)
    sampling = dict(sgld_burn_in=60, sgld_draws=4, sgld_thin=5) if optimizer == "sgld" else {}
    return [point_config(attention, optimizer, 5, 3, P, 2, convention, seed=seed, adam_steps=steps, objective="marginal",
                         **sampling) for seed, P in enumerate(grid)]


def differences(mine, reference, path: str = "") -> list[str]:
    """Paths where two summaries differ by more than :data:`TOLERANCE` (relative to max(1, |value|)); ``seconds`` skipped."""
    if isinstance(reference, dict):
        if mine.keys() != reference.keys():
            return [path + "/<keys>"]
        return [d for key in reference if key != "seconds" for d in differences(mine[key], reference[key], f"{path}/{key}")]
    if isinstance(reference, list):
        if len(mine) != len(reference):
            return [path + "/<length>"]
        return [d for i, (a, b) in enumerate(zip(mine, reference)) for d in differences(a, b, f"{path}[{i}]")]
    if isinstance(reference, float):
        same = math.isclose(mine, reference, rel_tol=0, abs_tol=TOLERANCE * max(1.0, abs(reference)))
        return [] if same or (math.isnan(mine) and math.isnan(reference)) else [path]
    return [] if mine == reference else [path]


@functools.cache
def _point_loop(architecture: str, attention: str, steps: int = 600) -> tuple[dict, ...]:
    """Each point of :func:`_configs` run alone, once per test process (the reference of every equality here)."""
    return tuple(run_copy_point(config) for config in _configs(architecture, attention, steps=steps))


@pytest.mark.parametrize("architecture, attention, steps", [
    ("T", "linear", 600),
    ("M", "linear", 150),
    ("T", "softmax", 150),
    pytest.param("M", "linear", 600, marks=pytest.mark.slow),
    pytest.param("T", "softmax", 600, marks=pytest.mark.slow),
])
def test_the_batched_sweep_equals_the_point_loop(architecture, attention, steps):
    """At 600 steps (model T, linear) one point stops early (below); 150 steps of the other two cover their batched
    forward, backward and Adam update at a quarter of the cost, and their 600-step runs are in the slow set."""
    configs = _configs(architecture, attention, steps=steps)
    loop = _point_loop(architecture, attention, steps)
    batched = run_copy_points(configs)
    assert [differences(mine, reference) for mine, reference in zip(batched, loop)] == [[]] * len(configs)


@pytest.mark.parametrize("attention", ["linear", "softmax"])
def test_a_batched_sgld_sweep_equals_the_point_loop(attention):
    """SGLD: each point draws its noise and its curvature's start vectors from its own generator (its own seed
    here, 0..3), so its chains are the ones it samples alone; a planted shared generator would fail."""
    configs = _configs("T", attention, optimizer="sgld")
    loop = [run_copy_point(config) for config in configs]
    batched = run_copy_points(configs)
    assert [differences(mine, reference) for mine, reference in zip(batched, loop)] == [[]] * len(configs)


def test_points_stop_early_on_their_own():
    """The equality above covers per-point early stops: at these settings one point stops at 300 steps, the others run to the cap."""
    batch, _, model, points = sweep_model(_configs("T", "linear"), "cpu")
    steps = train_map(model, batch, steps=600, objective="marginal", points=points).steps_taken
    per_point = {int(p): set(steps[points == p].tolist()) for p in points.unique()}
    assert all(len(taken) == 1 for taken in per_point.values())
    assert len({next(iter(taken)) for taken in per_point.values()}) > 1


def test_a_planted_difference_in_one_points_P_fails_the_equality():
    configs = _configs("M", "linear", steps=150)
    planted = [dict(config) for config in configs]
    planted[1]["P"] += 1
    loop = _point_loop("M", "linear", 150)
    found = [differences(mine, reference) for mine, reference in zip(run_copy_points(planted), loop)]
    assert found[0] == found[2] == found[3] == []
    assert set(found[1]) - {"/P"}, "the trained numbers of the planted point must differ, not only its label"


def test_points_that_differ_in_more_than_P_are_not_batched():
    from emergence.base.errors import EmergenceError

    configs = _configs("M", "linear", grid=(3, 6))
    configs[1] = dict(configs[1], adam_lr=0.01)
    with pytest.raises(EmergenceError, match="agree on every setting"):
        run_copy_points(configs)


def _never(config):
    raise AssertionError("a stored point was recomputed")


def test_a_batched_sweep_stores_each_point_under_its_own_key(tmp_path):
    """The store is keyed per point: a per-point sweep resumes a batched one without recomputing anything."""
    from emergence.base.sweeps import InProcessExecutor, run_sweep
    from emergence.validation.copy_task.experiment import sweep_work

    configs = _configs("M", "linear", grid=(3, 6, 12), steps=100)
    batched = run_sweep(sweep_work("cpu", points_per_model=2), configs, tmp_path, executor=InProcessExecutor(), progress=False)
    resumed = run_sweep(_never, configs, tmp_path, executor=InProcessExecutor(), progress=False)
    assert resumed == batched
    assert [differences(mine, run_copy_point(config)) for mine, config in zip(batched, configs)] == [[]] * 3


@pytest.mark.parametrize("optimizer", ["adam", "sgld"])
def test_every_point_is_batched_on_a_gpu_and_none_on_a_cpu_by_default(optimizer):
    from emergence.validation.copy_task.copy_experiment import CopyExperiment

    experiment = CopyExperiment("softmax", 8, 4, (16, 32, 64), optimizer=optimizer)
    assert (experiment.points_per_model("cuda"), experiment.points_per_model("cpu")) == (3, 1)
    assert CopyExperiment("softmax", 8, 4, (16, 32, 64), optimizer=optimizer, batch_points=2).points_per_model("cpu") == 2
