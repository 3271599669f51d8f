"""Exact small-step identities of Definition 3.1 trained by full-batch gradient descent.

These fix every transpose convention of the statistics independently of the formulas:
W_O after one step is eta B (not B^T), V after two steps is proportional to Phi^T B^T,
and W, P after three steps are proportional to Q (query row, key column) and Delta.
"""

import numpy as np
import pytest
import torch

from emergence.numerics.leading_terms.basis_statistics import basis_statistics
from emergence.numerics.leading_terms.leading_weights import step_coefficients
from emergence.validation.leading_terms.experiment import frobenius_cosine
from emergence.validation.leading_terms.model import LeadingTermTransformer

RATE = 0.01


def _trained(sequences, vocab_size, steps, layers=2):
    model = LeadingTermTransformer(vocab_size, sequences.shape[1] - 1, layers).double()
    optimizer = torch.optim.SGD(model.parameters(), lr=RATE)
    windows = torch.as_tensor(sequences)
    for _ in range(steps):
        optimizer.zero_grad()
        model.loss(windows).backward()
        optimizer.step()
    return model


@pytest.fixture(scope="module")
def corpus():
    rng = np.random.default_rng(7)
    sequences = rng.integers(0, 9, size=(24, 13))
    return sequences, basis_statistics(sequences, 9)


def _as_tensor(array):
    return torch.as_tensor(np.asarray(array))


def test_one_step_moves_only_the_output(corpus):
    sequences, stats = corpus
    model = _trained(sequences, 9, 1)
    assert torch.allclose(model.output.detach(), RATE * _as_tensor(stats.bigram), rtol=1e-12, atol=1e-18)
    # exact by design: every gradient reaching these weights passes through a weight that is still exactly zero
    for layer in model.layers:
        assert not layer.value.detach().any() and not layer.key_query.detach().any()
        assert not layer.position.detach().any()


def test_two_steps_leave_key_query_and_position_at_zero(corpus):
    sequences, stats = corpus
    model = _trained(sequences, 9, 2)
    for layer in model.layers:  # exact zeros by design: their gradients pass through V, still zero at steps 1 and 2
        assert not layer.key_query.detach().any() and not layer.position.detach().any()
        value = layer.value.detach()
        assert frobenius_cosine(value, _as_tensor(stats.value_feature)) > 0.999
        assert frobenius_cosine(value, _as_tensor(stats.value_feature.T)) < 0.99
        expected = float(step_coefficients(2, RATE)["V"]) * _as_tensor(stats.value_feature)
        assert torch.linalg.vector_norm(value - expected) < 0.05 * torch.linalg.vector_norm(expected)


def test_three_steps_align_key_query_and_position_with_the_statistics(corpus):
    sequences, stats = corpus
    model = _trained(sequences, 9, 3)
    key_query, positional = _as_tensor(stats.key_query), _as_tensor(stats.positional)
    coefficient = float(step_coefficients(3, RATE)["W"])
    assert coefficient == pytest.approx(2 * RATE**4)
    for layer in model.layers:
        W, P = layer.key_query.detach(), layer.position.detach()
        assert frobenius_cosine(W, key_query) > 0.999
        assert frobenius_cosine(W, key_query.T) < 0.99
        assert frobenius_cosine(P, positional) > 0.999
        assert torch.linalg.vector_norm(W - coefficient * key_query) < 0.05 * coefficient * torch.linalg.vector_norm(key_query)


def test_lookup_first_layer_equals_the_one_hot_model():
    """The first layer by lookups (W[i_t, i_tau], V[i_t], a scatter of ones) against the literal one-hot
    forward h = X + A X V: logits and every gradient agree to 64 rounding units of their largest entry."""
    torch.manual_seed(3)
    model = LeadingTermTransformer(11, 7, 2).double()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_()
    tokens = torch.randint(0, 11, (5, 8))
    one_hot = torch.nn.functional.one_hot(tokens[:, :-1], 11).double()
    literal = model.layers[1](model.layers[0](one_hot)) @ model.output
    looked_up = model(tokens[:, :-1])
    unit = torch.finfo(torch.float64).eps
    assert (looked_up - literal).abs().max() <= 64 * unit * literal.abs().max()
    gradients = []
    for logits in (literal, looked_up):
        model.zero_grad()
        torch.nn.functional.cross_entropy(logits.reshape(-1, 11), tokens[:, 1:].reshape(-1)).backward(
            retain_graph=True)
        gradients.append([p.grad.clone() for p in model.parameters()])
    for a, b in zip(*gradients):
        assert (a - b).abs().max() <= 64 * unit * a.abs().max()
