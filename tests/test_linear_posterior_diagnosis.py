"""The linear posterior theory's trial in W_QK (validation/copy_task/linear_posterior_diagnosis.py), against brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from emergence.numerics.copy_head.linear_posterior import LinearPosteriorTheory
from emergence.numerics.order_parameters import cyclic_shift
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.linear_posterior_diagnosis import (
    importance_sampled_linear_free_energy, mean_weights, trial_covariance,
)
from emergence.validation.copy_task.models import CopyAttentionModel

pytestmark = pytest.mark.usefixtures("one_torch_thread")

LINEAR = CopyTaskConvention.parse("", attention="linear")


def _entropy_rate(t):
    return 0.5 * (t - 1 - math.log(t))


def test_the_trial_mean_has_the_pattern_as_attention_and_the_theory_prior_cost():
    L, V, c1, cG = 6, 3, 1.3, 0.4
    W = mean_weights(V, L, c1, cG, LINEAR.attention_normalisation_exponent)
    model = CopyAttentionModel(1, L, V, LINEAR)
    with torch.no_grad():
        model.logit_weights.copy_(torch.as_tensor(W[None]))
    batch = copy_task_batch([20], L, V, seeds=[3], shift=LINEAR.shift, targets=LINEAR.targets)
    attention = model.attention(batch).detach().numpy()  # (20, L, L): the same on every sequence
    expected = c1 / L + cG * cyclic_shift(L)
    assert np.abs(attention - expected).max() <= 64 * np.finfo(float).eps * np.abs(expected).max()
    theory = LinearPosteriorTheory(L, V, LINEAR, draws=4)
    prior_cost = (c1 + cG) ** 2 / (2 * theory.s1) + (L - 1) * cG**2 / (2 * theory.sG)
    assert (W**2).sum() / (2 * model.logit_prior_variance) == pytest.approx(prior_cost, rel=1e-10)


@pytest.mark.parametrize("trial", ["gauge", "product"])
def test_the_dense_trial_kl_is_the_theory_noise_entropy(trial):
    L, V, t_u, t_v, s = 5, 3, 0.6, 0.85, 0.7
    covariance = trial_covariance(V, L, t_u, t_v, s, trial)
    d = covariance.shape[0]
    kl = 0.5 * (np.trace(covariance) / s - d + d * math.log(s) - np.linalg.slogdet(covariance)[1])
    N = V + L
    if trial == "product":
        expected = N * (V * _entropy_rate(t_u) + L * _entropy_rate(t_v))
    else:  # the derived gauge entropy: (V + L - 1)[(V - 1) I(t_u) + (L - 1) I(t_v) + I(t_w)]
        t_w = (L * t_u + V * t_v) / (V + L)
        expected = (N - 1) * ((V - 1) * _entropy_rate(t_u) + (L - 1) * _entropy_rate(t_v) + _entropy_rate(t_w))
    assert kl == pytest.approx(expected, rel=1e-9)


def test_a_trial_at_the_prior_without_a_mean_weighs_the_posterior_like_the_prior():
    """At t_u = t_v = 1 and c = 0 the trial is the prior: log w = -S_data, so F_Q = E_prior[S_data] and F_Q >= F_IS."""
    L, V, P = 4, 2, 6
    point = {"c1": 0.0, "cG": 0.0, "t_u": 1.0, "t_v": 1.0}
    result = importance_sampled_linear_free_energy(L, V, P, point, LINEAR, draws=400, chunk=100)
    assert not result["symmetrised"] and result["F_Q"] == result["F_Q_single"]
    assert result["gap"] >= 0 and result["ess"] <= 400
    # brute force: the data action averaged over prior draws with the same generator
    model = CopyAttentionModel(400, L, V, LINEAR)
    rng = np.random.default_rng(0)
    theta = rng.standard_normal((4, 100, (V + L) ** 2)) * math.sqrt(model.logit_prior_variance)
    batch = copy_task_batch([P] * 400, L, V, [7919 * P] * 400, LINEAR.shift, LINEAR.targets)
    with torch.no_grad():
        model.logit_weights.copy_(torch.as_tensor(theta.reshape(400, V + L, V + L)))
        data = (model.marginal_potential(batch) - model.logit_prior_energy()).numpy()
    assert result["F_Q"] == pytest.approx(float(data.mean()), rel=1e-9)
