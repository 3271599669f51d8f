"""Device choice: the default suite computes on the CPU on every machine; the ``gpu`` tests use CUDA.

A machine where torch sees a GPU must not change a verdict of the default suite, so
``tests/conftest.py`` hides CUDA from it (``CUDA_VISIBLE_DEVICES=""``) unless the ``gpu`` marker
is selected (``pytest -m gpu``).  What a GPU changes is then tested where it is chosen: the device
choice itself on a simulated GPU (below, on any machine), and the CUDA computation against the CPU
in the ``gpu`` tests.
"""

import os

import pytest
import torch

from emergence.base.executors import sweep_executor
from emergence.base.runtime import resolve_device
from emergence.base.sweeps import InProcessExecutor, LocalProcessExecutor


def test_the_default_suite_sees_no_gpu(request):
    if "gpu" in request.config.getoption("markexpr").replace("not gpu", ""):
        pytest.skip("the gpu marker is selected: CUDA stays visible")
    assert os.environ.get("CUDA_VISIBLE_DEVICES") == ""
    assert not torch.cuda.is_available()


def test_a_machine_with_a_gpu_picks_cuda_and_sweeps_in_process(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device(None) == "cuda"
    assert resolve_device("cpu") == "cpu"
    assert isinstance(sweep_executor("local", 2, resolve_device(None)), InProcessExecutor)
    assert isinstance(sweep_executor("local", 2, resolve_device("cpu")), LocalProcessExecutor)


def _tiny_point():
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.experiment import point_config

    convention = CopyTaskConvention.parse(None, attention="softmax")
    return point_config("softmax", "adam", 8, 4, 64, 1, convention, seed=3, adam_steps=50, sgld_burn_in=1,
                        sgld_draws=4, sgld_thin=1, chains=1, dtype="float64", objective="joint")


@pytest.mark.gpu
def test_a_copy_point_trained_on_cuda_equals_the_cpu_run():
    """Same data (drawn on the CPU), same initial weights, float64: CUDA's reductions differ from the
    CPU's only by rounding, which 50 Adam steps amplify to well below 1e-6 on the order parameters."""
    from emergence.validation.copy_task.experiment import run_copy_point

    if not torch.cuda.is_available():
        pytest.fail("the gpu tests need a GPU that torch sees")
    on_cpu = run_copy_point(_tiny_point(), device="cpu")
    on_cuda = run_copy_point(_tiny_point(), device="cuda")
    for key in ("aG_uniform_mean", "aG_copy_mean", "c1_mean", "cG_mean", "test_loss_mean"):
        assert on_cuda[key] == pytest.approx(on_cpu[key], rel=1e-6, abs=1e-9), key
