"""float32 is accurate enough for the copy-task potential at the default validation sizes (the CLI's default dtype)."""

import pytest
import torch

from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.experiment import point_config, run_copy_point
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.base.runtime import torch_threads


def _potential_and_gradient(attention, dtype, P=1024, L=32, V=8):
    convention = CopyTaskConvention.parse(None, attention=attention)
    batch = copy_task_batch([P, P], L, V, [3, 4], convention.shift, convention.targets, dtype, "cpu")
    reference = CopyAttentionModel(2, L, V, convention, dtype=torch.float64)
    reference.initialise(["uniform", "copy"], [5, 6], noise=0.1)  # the same weights in both dtypes
    model = CopyAttentionModel(2, L, V, convention, dtype=dtype)
    with torch.no_grad():
        model.logit_weights.copy_(reference.logit_weights)
        model.readout.copy_(reference.readout)
    potential = model.potential(batch)
    potential.sum().backward()
    return potential.detach().double(), model.logit_weights.grad.double(), model.readout.grad.double()


@pytest.mark.parametrize("attention", ["softmax", "linear"])
def test_float32_potential_and_gradient_match_float64_at_the_largest_default_point(attention):
    single = _potential_and_gradient(attention, torch.float32)
    double = _potential_and_gradient(attention, torch.float64)
    assert torch.allclose(single[0], double[0], rtol=1e-6, atol=0)  # measured 1e-7
    for g32, g64 in zip(single[1:], double[1:]):
        assert float((g32 - g64).norm() / g64.norm()) < 1e-4  # measured 1e-6


def test_float32_training_reaches_the_float64_minimum():
    convention = CopyTaskConvention.parse(None, attention="softmax")
    results = {}
    with torch_threads(1):
        for dtype in ("float32", "float64"):
            config = point_config("softmax", "adam", 8, 4, 32, 1, convention, seed=3, adam_steps=400, dtype=dtype)
            results[dtype] = run_copy_point(config)
    (single,), (double,) = results["float32"]["per_seed"], results["float64"]["per_seed"]
    for start in ("uniform", "copy"):
        assert single[start]["converged"] == double[start]["converged"]
        for key in ("c1", "cG", "aG"):
            assert abs(single[start][key] - double[start][key]) < 1e-3, (start, key)
    assert single["global_start"] == double["global_start"]
