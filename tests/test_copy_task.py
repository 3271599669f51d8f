"""Copy-task models: the potential is the theory's, batching changes nothing, starts and errors behave."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.base.errors import DivergenceError, EmergenceError
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch, previous_token_targets
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.copy_task.training import measure, train_map

pytestmark = pytest.mark.usefixtures("one_torch_thread")


conventions = st.builds(
    CopyTaskConvention,
    a=st.sampled_from([0.0, 1.0]),
    c=st.sampled_from([0.0, 1.0]),
    d=st.sampled_from([0.0, 1.0]),
    normalisation=st.sampled_from(["G", "G/L"]),
    shift=st.sampled_from(["cyclic", "open"]),
    targets=st.sampled_from(["raw", "centred"]),
    architecture=st.sampled_from(["M", "T"]),
    attention=st.sampled_from(["linear", "softmax"]),
)


def _random_model(runs, L, V, convention, seed):
    model = CopyAttentionModel(runs, L, V, convention)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=generator, dtype=p.dtype))
    return model


def _direct_attention(model, batch, r):
    """One-hot X, attention A and targets Y of run r from the definitions, z = x (+) e_l (differentiable in theta)."""
    c = model.convention
    L, V = model.L, model.V
    rows = batch.run == r
    X = torch.nn.functional.one_hot(batch.tokens[rows], V).double()
    theta = model.logit_weights[r]
    if c.architecture == "M":
        G = theta.expand(X.shape[0], L, L)
    else:
        Z = torch.cat([X, torch.eye(L, dtype=torch.float64).expand(X.shape[0], L, L)], dim=-1)
        G = Z @ theta @ Z.transpose(-1, -2)
    if c.attention == "softmax":
        A = torch.softmax(G, dim=-1)
    else:
        A = G / L ** c.attention_normalisation_exponent
    return X, A, batch.targets[rows]


def _direct_potential(model, batch, r):
    """U_r from its definition with explicit one-hot tokens and matrix products (differentiable)."""
    X, A, Y = _direct_attention(model, batch, r)
    data = ((Y - A @ X @ model.readout[r]) ** 2).sum()
    return 0.5 * model.beta * data + model.prior_energy()[r]


@settings(max_examples=20)
@given(conventions, st.integers(2, 6), st.integers(2, 5), st.lists(st.integers(1, 7), min_size=1, max_size=3))
def test_batched_potential_equals_the_definition(convention, L, V, counts):
    batch = copy_task_batch(counts, L, V, seeds=list(range(len(counts))), shift=convention.shift, targets=convention.targets)
    model = _random_model(len(counts), L, V, convention, seed=L * 100 + V)
    potential = model.potential(batch).detach()
    for r in range(len(counts)):
        assert potential[r].item() == pytest.approx(_direct_potential(model, batch, r).item(), rel=1e-10)


@pytest.mark.parametrize("attention", ["linear", "softmax"])
def test_fast_model_T_potential_equals_the_direct_definition_on_a_shuffled_ragged_batch(attention):
    """Run-major layout (padding, gathered token columns) == z^T W_QK z and (Y - A X W)^2 per sequence."""
    convention = CopyTaskConvention(architecture="T", attention=attention)
    ordered = copy_task_batch([3, 7, 1], 5, 3, seeds=[4, 5, 6])
    permutation = torch.randperm(11, generator=torch.Generator().manual_seed(0))
    batch = type(ordered)(
        tokens=ordered.tokens[permutation], targets=ordered.targets[permutation],
        run=ordered.run[permutation], counts=ordered.counts, V=3,
    )
    model = _random_model(3, 5, 3, convention, seed=11)
    potential = model.potential(batch)
    for r in range(3):
        assert potential[r].item() == pytest.approx(_direct_potential(model, batch, r).item(), rel=1e-12)
    X = batch.one_hot()
    Z = torch.cat([X, torch.eye(5, dtype=torch.float64).expand(11, 5, 5)], dim=-1)
    direct_logits = Z @ model.logit_weights.detach()[batch.run] @ Z.transpose(-1, -2)
    torch.testing.assert_close(model.logits(batch).detach(), direct_logits)
    gradient = torch.autograd.grad(potential.sum(), model.logit_weights)[0]
    direct = sum(_direct_potential(model, batch, r) for r in range(3))
    torch.testing.assert_close(gradient, torch.autograd.grad(direct, model.logit_weights)[0])


@pytest.mark.parametrize("attention", ["linear", "softmax"])
@pytest.mark.parametrize("scale", [1.0, 8.0])
def test_model_T_design_without_attention_matrices_equals_the_dense_route(attention, scale):
    """The factored design (tables a, b indexed by the query) equals A X with A from the definition,
    values and gradients, with logits spanning tens of units and tokens missing from sequences (L < V)."""
    convention = CopyTaskConvention(architecture="T", attention=attention)
    for L, V in [(6, 3), (4, 7)]:
        batch = copy_task_batch([5, 3], L, V, seeds=[2, 9])
        model = _random_model(2, L, V, convention, seed=5)
        with torch.no_grad():
            model.logit_weights.mul_(scale)
        factored, dense = [], []
        for group in batch.run_major_groups():
            design = model.attention_logits.design(group)
            for i, r in enumerate(group.runs.tolist()):
                X, A, _ = _direct_attention(model, batch, r)
                factored.append(design[i])
                dense.append(A @ X)
        for mine, reference in zip(factored, dense):
            torch.testing.assert_close(mine, reference)
        probes = [torch.randn(d.shape, generator=torch.Generator().manual_seed(i), dtype=torch.float64)
                  for i, d in enumerate(dense)]
        gradient, direct = (
            torch.autograd.grad(sum((d * w).sum() for d, w in zip(designs, probes)), model.logit_weights)[0]
            for designs in (factored, dense)
        )
        torch.testing.assert_close(gradient, direct)


def test_statistics_route_equals_per_sequence_residuals_for_model_M():
    convention = CopyTaskConvention(architecture="M", attention="softmax")
    batch = copy_task_batch([5, 9], 6, 3, seeds=[1, 2])
    model = _random_model(2, 6, 3, convention, seed=3)
    residual = batch.targets - model.outputs(batch)
    direct = torch.zeros(2, dtype=torch.float64).index_add(0, batch.run, (residual**2).sum(dim=(-2, -1)))
    torch.testing.assert_close(model.squared_errors(batch), direct)


def test_data_targets_are_the_previous_token():
    tokens = torch.tensor([[2, 0, 1, 1]])
    cyclic = previous_token_targets(tokens, 3)
    assert cyclic.argmax(-1).tolist() == [[1, 2, 0, 1]]
    open_ = previous_token_targets(tokens, 3, shift="open")
    # exact by design: the open shift's first target row is exact zeros
    assert open_[0, 0].abs().sum() == 0 and open_[0, 1:].argmax(-1).tolist() == [2, 0, 1]
    centred = previous_token_targets(tokens, 3, targets="centred")
    torch.testing.assert_close(centred.sum(-1), torch.zeros(1, 4, dtype=torch.float64))


@pytest.mark.parametrize("architecture", ["M", "T"])
@pytest.mark.parametrize("attention", ["linear", "softmax"])
def test_starts_put_the_attention_on_the_named_pattern(architecture, attention):
    L, V = 8, 4
    model = CopyAttentionModel(2, L, V, CopyTaskConvention(architecture=architecture, attention=attention))
    model.initialise(["uniform", "copy"], [0, 0], noise=0.0)
    evaluation = copy_task_batch([16, 16], L, V, seeds=[5, 6])
    measured = measure(model, evaluation)
    if attention == "softmax":
        assert measured["aG"][0].item() == pytest.approx(1 / L)
        assert measured["aG"][1].item() == pytest.approx(0.9)
    else:
        assert (measured["c1"][0].item(), measured["cG"][0].item()) == pytest.approx((1, 0), abs=1e-12)
        assert (measured["c1"][1].item(), measured["cG"][1].item()) == pytest.approx((0, 1), abs=1e-12)
    # the copy start with W = I predicts the previous token exactly (up to the softmax leakage)
    assert measured["test_loss"][1] < measured["test_loss"][0]


def test_linear_gauge_makes_the_sign_flip_invisible():
    convention = CopyTaskConvention(architecture="T", attention="linear")
    model = _random_model(1, 5, 3, convention, seed=9)
    evaluation = copy_task_batch([20], 5, 3, seeds=[0])
    before = measure(model, evaluation)
    with torch.no_grad():
        model.logit_weights.neg_()
        model.readout.neg_()
    after = measure(model, evaluation)
    for key in ("c1", "cG", "test_loss"):
        torch.testing.assert_close(before[key], after[key])
    assert before["aG"].item() >= 0


def test_batched_adam_equals_separate_runs():
    L, V, counts = 6, 3, [4, 12, 30]
    convention = CopyTaskConvention(architecture="T", attention="softmax")
    batch = copy_task_batch(counts, L, V, seeds=[0, 1, 2])
    batched = CopyAttentionModel(3, L, V, convention)
    batched.initialise(["uniform", "copy", "uniform"], [0, 1, 2])
    together = train_map(batched, batch, steps=60)
    for r in range(3):
        single = CopyAttentionModel(1, L, V, convention)
        single.initialise([["uniform", "copy", "uniform"][r]], [r])
        alone = train_map(single, copy_task_batch([counts[r]], L, V, seeds=[r]), steps=60)
        assert alone.potential.item() == pytest.approx(together.potential[r].item(), rel=1e-9)
        torch.testing.assert_close(single.logit_weights[0], batched.logit_weights[r].detach(), rtol=1e-8, atol=1e-10)


def test_adam_reaches_the_copy_solution_and_passes_the_filter():
    L, V = 6, 3
    convention = CopyTaskConvention(architecture="M", attention="softmax", d=0.0)
    batch = copy_task_batch([200, 200], L, V, seeds=[0, 0])
    model = CopyAttentionModel(2, L, V, convention)
    model.initialise(["uniform", "copy"], [0, 0])
    result = train_map(model, batch, steps=1500)
    assert bool(result.converged.all()), (result.gradient_norm, result.relative_change)
    measured = measure(model, copy_task_batch([100, 100], L, V, seeds=[3, 3]))
    # plenty of data and beta = 1: both starts end on the same copy state (the prior s = 1 bounds the logits)
    assert measured["aG"].min() > 0.5
    assert result.potential[0].item() == pytest.approx(result.potential[1].item(), rel=1e-6)


def test_divergence_is_a_one_line_error():
    from emergence.validation.copy_task.training import sample_sgld

    convention = CopyTaskConvention(architecture="M", attention="linear", normalisation="G")
    batch = copy_task_batch([50], 4, 3, seeds=[0])
    model = CopyAttentionModel(1, 4, 3, convention)
    model.initialise(["copy"], [0])
    with pytest.raises(DivergenceError, match="non-finite") as error:
        sample_sgld(model, batch, batch, burn_in=400, draws=4, thin=1, step_fraction=50.0)
    assert "\n" not in str(error.value)


def test_convention_parsing_and_errors():
    convention = CopyTaskConvention.parse("a=2, sigma_W2=0.5, targets=centred", attention="softmax")
    assert (convention.a, convention.sigma_W2, convention.targets, convention.attention) == (2.0, 0.5, "centred", "softmax")
    assert convention.logit_prior_variance(4) == pytest.approx(1 / 16)
    for bad in ("a", "a=x", "normalisation=L", "sigma_G2=-1"):
        with pytest.raises(EmergenceError):
            CopyTaskConvention.parse(bad)


def _dense_marginal_action(model, batch, r):
    """S_r from the PL x PL log-evidence of the readout (emergence.validation.copy_task.exact_marginal), on the direct design."""
    from emergence.validation.copy_task.exact_marginal import dense_log_evidence

    X, A, Y = _direct_attention(model, batch, r)
    logit_prior = (model.logit_weights[r] ** 2).sum() / (2 * model.logit_prior_variance)
    return logit_prior + dense_log_evidence((A @ X).reshape(-1, model.V), Y.reshape(-1, model.V),
                                            model.readout_prior_variance, model.beta)


@settings(max_examples=15)
@given(conventions, st.integers(2, 5), st.integers(2, 4), st.lists(st.integers(1, 6), min_size=1, max_size=3))
def test_marginal_action_equals_the_dense_log_evidence_values_and_gradient(convention, L, V, counts):
    """Woodbury V x V form == PL x PL Gaussian integral over W, up to the constant (V P L / 2) ln beta."""
    batch = copy_task_batch(counts, L, V, seeds=list(range(len(counts))), shift=convention.shift, targets=convention.targets)
    model = _random_model(len(counts), L, V, convention, seed=L * 10 + V)
    marginal = model.marginal_potential(batch)
    dense = torch.stack([_dense_marginal_action(model, batch, r) for r in range(len(counts))])
    constant = 0.5 * V * L * batch.counts * np.log(model.beta)
    torch.testing.assert_close(marginal, dense + constant, rtol=1e-9, atol=1e-9)
    gradient = torch.autograd.grad(marginal.sum(), model.logit_weights)[0]
    torch.testing.assert_close(gradient, torch.autograd.grad(dense.sum(), model.logit_weights)[0], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("architecture", ["M", "T"])
def test_posterior_mean_readout_minimises_U_and_the_profile_is_the_marginal_less_its_occam_term(architecture):
    convention = CopyTaskConvention(architecture=architecture, attention="softmax")
    batch = copy_task_batch([5, 9], 6, 3, seeds=[1, 2])
    model = _random_model(2, 6, 3, convention, seed=4)
    C, _, _ = model.readout_statistics(batch)
    occam = 0.5 * 3 * torch.logdet(torch.eye(3, dtype=C.dtype) + model.beta * model.readout_prior_variance * C)
    marginal = model.marginal_potential(batch).detach()
    model.set_posterior_mean_readout(batch)
    potential = model.potential(batch)
    torch.testing.assert_close(potential.detach(), marginal - occam.detach(), rtol=1e-10, atol=1e-10)
    readout_gradient = torch.autograd.grad(potential.sum(), model.readout)[0]
    assert readout_gradient.abs().max().item() < 1e-10


def test_adam_on_the_marginal_finds_a_lower_marginal_action_than_the_joint_map():
    """The marginal MAP minimises S(theta); the joint MAP's theta is a feasible point of S, never lower."""
    from emergence.validation.copy_task.training import train_map

    L, V = 6, 3
    convention = CopyTaskConvention(architecture="T", attention="softmax")
    batch = copy_task_batch([40, 40], L, V, seeds=[0, 0])
    joint, marginal = (CopyAttentionModel(2, L, V, convention) for _ in range(2))
    for model in (joint, marginal):
        model.initialise(["uniform", "copy"], [0, 0])
    train_map(joint, batch, steps=1500)
    result = train_map(marginal, batch, steps=1500, objective="marginal")
    assert bool(result.converged.all()), (result.gradient_norm, result.relative_change)
    assert (result.potential <= joint.marginal_potential(batch).detach() + 1e-9).all()
    # the readout is left at its posterior mean: no readout gradient of U remains
    gradient = torch.autograd.grad(marginal.potential(batch).sum(), marginal.readout)[0]
    assert gradient.abs().max().item() < 1e-8


def test_diverging_marginal_training_is_a_one_line_error():
    from emergence.validation.copy_task.training import train_map

    convention = CopyTaskConvention(architecture="T", attention="linear", normalisation="G")
    batch = copy_task_batch([30], 4, 3, seeds=[0])
    model = CopyAttentionModel(1, 4, 3, convention)
    with torch.no_grad():
        model.logit_weights.fill_(float("inf"))
    with pytest.raises(DivergenceError, match="non-finite") as error:
        train_map(model, batch, steps=5, objective="marginal")
    assert "\n" not in str(error.value)


def test_training_stops_when_every_run_has_converged_and_not_before():
    """Early stopping gives the same verdict as the cap: converged runs stop early, too few steps do not pass."""
    import emergence.validation.copy_task.training as training

    L, V = 6, 3
    calls = []
    model = CopyAttentionModel(2, L, V, CopyTaskConvention(attention="softmax"))
    model.initialise(["uniform", "copy"], [0, 1])
    batch = copy_task_batch([16, 16], L, V, seeds=[0, 1])
    original = training._passes
    training._passes = lambda *a: calls.append(1) or original(*a)
    try:
        result = train_map(model, batch, steps=3000)
    finally:
        training._passes = original
    assert bool(result.converged.all())
    assert len(calls) < 10  # stopped before the last check at the cap (10 checks + the final verdict)
    short = CopyAttentionModel(2, L, V, CopyTaskConvention(attention="softmax"))
    short.initialise(["uniform", "copy"], [0, 1])
    assert not bool(train_map(short, batch, steps=3).converged.all())
