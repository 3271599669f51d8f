"""Softmax model T's compiled marginal action and a_G with the derived backward against the autograd path (the oracle).

Potentials and gradients must agree to a stated number of rounding units on random weights and data, and a
planted coefficient change in the derived backward must fail the same comparison.  V is drawn from {2, 4}
only: the loops are compiled once per V, key-sum variant and dtype in each process (30 s at load 10 on 2
cores); the drawn L covers both variants (``scatters_keys``: L <= 2V scatters, longer L uses the one-hot rows).
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.validation.copy_task import softmax_marginal_action
from emergence.validation.copy_task.compiled_marginal_action import compiled_action_available
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.models import CopyAttentionModel

pytestmark = [pytest.mark.usefixtures("one_torch_thread"),
              pytest.mark.skipif(not compiled_action_available(), reason="needs numba (emergence[fast])")]

ROUNDING_UNITS = 256
"""Tolerance in units of the dtype's epsilon times the largest entry: the two paths sum the same P L query
terms in different orders (observed up to about 60 units at L = 16, P = 650)."""


def _pair(L: int, V: int, counts: list[int], seed: int, targets: str = "raw"):
    """The same random softmax model T twice (compiled and autograd) on one ragged batch."""
    convention = CopyTaskConvention(attention="softmax", targets=targets)
    batch = copy_task_batch(counts, L, V, [seed + r for r in range(len(counts))], convention.shift, convention.targets)
    models = [CopyAttentionModel(len(counts), L, V, convention, compiled_action=compiled) for compiled in (True, False)]
    generator = torch.Generator().manual_seed(seed)
    weights = 1.5 * torch.randn(models[0].logit_weights.shape, generator=generator, dtype=torch.float64)
    for model in models:
        with torch.no_grad():
            model.logit_weights.copy_(weights)
    return models, batch, generator


def _potential_and_gradient(model, batch, action_weight, bias_weight):
    """A random combination of the two outputs, as the umbrella's bias makes it, and its gradient."""
    action, previous = model.marginal_potential_and_previous_attention(batch)
    combined = (action_weight * action + bias_weight * previous).sum()
    return action.detach(), previous.detach(), torch.autograd.grad(combined, model.logit_weights)[0]


def _agrees(found: torch.Tensor, expected: torch.Tensor, dtype=torch.float64, units: int = ROUNDING_UNITS) -> bool:
    """``|found - expected| <= units * eps(dtype) * max|expected|``, entry by entry."""
    error = (found.double() - expected.double()).abs().max() / expected.double().abs().max()
    return bool(error <= units * torch.finfo(dtype).eps)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from([4, 5, 8, 12, 16]), st.sampled_from([2, 4]), st.lists(st.integers(1, 40), min_size=1, max_size=4),
       st.integers(0, 10_000), st.sampled_from(["raw", "centred"]))
def test_compiled_action_and_gradient_equal_autograd(L, V, counts, seed, targets):
    (compiled, oracle), batch, generator = _pair(L, V, counts, seed, targets)
    action_weight = torch.randn(len(counts), generator=generator, dtype=torch.float64)
    bias_weight = 50 * torch.randn(len(counts), generator=generator, dtype=torch.float64)
    found = _potential_and_gradient(compiled, batch, action_weight, bias_weight)
    expected = _potential_and_gradient(oracle, batch, action_weight, bias_weight)
    for value, reference in zip(found, expected):
        assert _agrees(value, reference)
    assert torch.equal(compiled.marginal_potential(batch).detach(), found[0])  # the training objective: same action


def test_float32_compiled_gradient_is_the_float64_one_to_float32_rounding():
    (compiled, oracle), batch, generator = _pair(8, 4, [30, 17], 3)
    action_weight = torch.randn(2, generator=generator, dtype=torch.float64)
    expected = _potential_and_gradient(oracle, batch, action_weight, torch.zeros(2, dtype=torch.float64))[2]
    single = CopyAttentionModel(2, 8, 4, compiled.convention, dtype=torch.float32)
    with torch.no_grad():
        single.logit_weights.copy_(compiled.logit_weights)
    batch32 = copy_task_batch([30, 17], 8, 4, [3, 4], compiled.convention.shift, compiled.convention.targets,
                              dtype=torch.float32)
    found = _potential_and_gradient(single, batch32, action_weight.float(), torch.zeros(2))[2]
    assert _agrees(found, expected, torch.float32)


def _planted_occam(monkeypatch):
    """V -> V + 1 in the Occam term's coefficient of the head's backward (the action unchanged)."""
    correct = softmax_marginal_action.kernels

    def planted(V, scatter_keys, token_targets):
        forward_pass, backward_pass, readout_head = correct(V, scatter_keys, token_targets)

        def more_occam(C, B, D, beta, epsilon, action, of_design, of_targets):
            readout_head(C, B, D, beta, epsilon, action, of_design, of_targets)
            of_design += epsilon * np.linalg.inv(np.eye(V) + epsilon * C)

        return forward_pass, backward_pass, more_occam

    monkeypatch.setattr(softmax_marginal_action, "kernels", planted)


def _planted_previous(monkeypatch):
    """a_G's 1/(PL) doubled in the compiled backward (the forward's a_G unchanged)."""
    correct = softmax_marginal_action.kernels

    def planted(V, scatter_keys, token_targets):
        forward_pass, backward_pass, readout_head = correct(V, scatter_keys, token_targets)

        def doubled(*arguments):
            arguments = list(arguments)
            arguments[-2] = 2 * arguments[-2]  # previous_gradient
            backward_pass(*arguments)

        return forward_pass, doubled, readout_head

    monkeypatch.setattr(softmax_marginal_action, "kernels", planted)


def _planted_target_token(monkeypatch):
    """Each target token moved to the next token (mod V) in the compiled backward (the forward's targets unchanged)."""
    correct = softmax_marginal_action.kernels

    def planted(V, scatter_keys, token_targets):
        assert token_targets  # raw targets: the loops read them as tokens
        forward_pass, backward_pass, readout_head = correct(V, scatter_keys, token_targets)

        def moved(runs, tokens, targets, target_tokens, *rest):
            backward_pass(runs, tokens, targets, np.where(target_tokens >= 0, (target_tokens + 1) % V, -1), *rest)

        return forward_pass, moved, readout_head

    monkeypatch.setattr(softmax_marginal_action, "kernels", planted)


@pytest.mark.parametrize("plant", [_planted_occam, _planted_previous, _planted_target_token])
def test_a_planted_coefficient_change_fails_the_comparison(monkeypatch, plant):
    (compiled, oracle), batch, generator = _pair(8, 4, [20, 25], 11)
    action_weight = torch.randn(2, generator=generator, dtype=torch.float64)
    bias_weight = 50 * torch.randn(2, generator=generator, dtype=torch.float64)
    expected = _potential_and_gradient(oracle, batch, action_weight, bias_weight)
    assert _agrees(_potential_and_gradient(compiled, batch, action_weight, bias_weight)[2], expected[2])
    plant(monkeypatch)
    found = _potential_and_gradient(compiled, batch, action_weight, bias_weight)
    assert _agrees(found[0], expected[0]) and _agrees(found[1], expected[1])  # the values are untouched
    assert not _agrees(found[2], expected[2])


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([4, 8, 16]), st.sampled_from([2, 4]), st.lists(st.integers(1, 30), min_size=1, max_size=3),
       st.integers(0, 10_000))
def test_compiled_joint_potential_and_gradient_equal_autograd(L, V, counts, seed):
    """The joint potential U (training's Adam objective) from the compiled statistics: value and both gradients."""
    models, batch, generator = _pair(L, V, counts, seed)
    readout = torch.randn(models[0].readout.shape, generator=generator, dtype=torch.float64)
    results = []
    for model in models:
        with torch.no_grad():
            model.readout.copy_(readout)
        potential = model.potential(batch)
        results.append((potential.detach(), *torch.autograd.grad(potential.sum(), [model.logit_weights, model.readout])))
    for found, expected in zip(*results):
        assert _agrees(found, expected)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_the_gpu_gradient_of_the_sampler_potential_is_the_compiled_cpu_one(dtype):
    """The GPU bench row's call (autograd on cuda, start placed on the device) against the compiled CPU loops."""
    from emergence.benchmarks.posterior_gradient import gradient_call

    if not torch.cuda.is_available():
        pytest.fail("the gpu tests need a GPU that torch sees")
    expected = gradient_call(8, 120, 6, compiled=True)()
    found = gradient_call(8, 120, 6, compiled=False, device="cuda", dtype=dtype)().cpu()
    assert _agrees(found, expected, dtype)


@pytest.mark.parametrize("shift", ["cyclic", "open"])
def test_targets_read_as_tokens_give_the_dense_targets_result(shift):
    """Raw targets: the loops that read each target as its token (``token_targets``) against the same loops reading
    the targets' rows, action, a_G and gradient within 4 rounding units (Phi-bar's row sums its terms in another
    order: the gradients differ by at most 0.7 units of the largest entry at L = 8-32, V = 4-8, P up to 650; the action
    and a_G are equal bit for bit)."""
    convention = CopyTaskConvention(attention="softmax", shift=shift)
    results = []
    for tokens in (True, False):
        batch = copy_task_batch([9, 14], 16, 4, [5, 6], convention.shift, convention.targets)
        if not tokens:
            batch._target_tokens = (None,)  # as if the targets were not one-hot: the loops read their rows
        model = CopyAttentionModel(2, 16, 4, convention)
        with torch.no_grad():
            model.logit_weights.copy_(torch.randn(model.logit_weights.shape, generator=torch.Generator().manual_seed(2),
                                                  dtype=torch.float64))
        assert (batch.run_major_groups(cache_blocks=False)[0].target_tokens is not None) == tokens
        results.append(_potential_and_gradient(model, batch, torch.tensor([0.7, -1.3], dtype=torch.float64),
                                               torch.tensor([20.0, 5.0], dtype=torch.float64)))
    for found, expected in zip(*results):
        assert _agrees(found, expected, units=4)
