"""The block trial (numerics/copy_head/block_trial.py) against dense Gaussian algebra and the gauge-correct trial."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from emergence.numerics.copy_head.block_trial import BlockTrial, block_variances, visible_geometry
from emergence.numerics.order_parameters import cyclic_shift
from emergence.validation.copy_task.posterior_diagnosis import flat_log_ratio, trial_moments

L, V, S = 5, 3, 0.7
N = V + L
TRIAL = BlockTrial(L, V, S, 1.3, -0.6, {"tt": 0.4, "tp": 0.9, "pt": 1.7, "pp": 0.6, "diag": 1.2})
ULP = np.finfo(float).eps


def dense_log_density(trial: BlockTrial, theta: np.ndarray) -> np.ndarray:
    """ln N(theta; mean, s K K^T + B (B^T D B) B^T), from the dense covariance."""
    flat, visible = visible_geometry(L, V)
    D = block_variances(L, V, trial.ratios, trial.s).ravel()
    covariance = trial.s * flat @ flat.T + visible @ (visible.T @ (D[:, None] * visible)) @ visible.T
    centred = theta.reshape(len(theta), -1) - trial.mean().ravel()
    _, log_det = np.linalg.slogdet(2 * np.pi * covariance)
    return -0.5 * np.einsum("ni,ni->n", centred, np.linalg.solve(covariance, centred.T).T) - 0.5 * log_det


def test_density_and_entropy_are_the_dense_gaussians():
    theta, log_q = TRIAL.sample(np.random.default_rng(0).standard_normal((6, N * N)))
    dense = dense_log_density(TRIAL, theta)
    assert np.allclose(log_q, dense, rtol=0, atol=1e6 * ULP * np.abs(dense).max())
    assert np.allclose(TRIAL.log_density(theta), log_q, rtol=0, atol=1e6 * ULP * np.abs(dense).max())
    centred_at_mean = dense_log_density(TRIAL, TRIAL.mean()[None])[0]  # = -ln det(2 pi Sigma)/2 = -H + N^2/2
    assert TRIAL.entropy() == pytest.approx(N * N / 2 - centred_at_mean, rel=1e6 * ULP)
    flat, visible = visible_geometry(L, V)
    D = block_variances(L, V, TRIAL.ratios, S).ravel()
    second_moment = S * flat.shape[1] + np.trace(visible.T @ (D[:, None] * visible)) + (TRIAL.mean() ** 2).sum()
    kl = -TRIAL.entropy() + N * N / 2 * np.log(2 * np.pi * S) + second_moment / (2 * S)  # -H - E ln prior
    assert TRIAL.kl_from_prior() == pytest.approx(kl, rel=1e6 * ULP)


def test_gauge_case_is_the_theorys_gauge_correct_trial():
    """One ratio per key-column type: the library's gauge-correct density (product law over flat_log_ratio)."""
    g, t_u, t_v = 1.1, 0.45, 0.8
    mean, variance = trial_moments(V, L, g, t_u, t_v, S)
    standard = torch.randn(5, N, N, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    theta = mean + standard * variance.sqrt()
    reference = (-0.5 * (standard**2).sum((-2, -1)) - 0.5 * torch.log(2 * np.pi * variance).sum()
                 + flat_log_ratio(standard, V, t_u, t_v)).numpy()
    ours = BlockTrial.gauge(L, V, S, g, t_u, t_v).log_density(theta.numpy())
    assert np.allclose(ours, reference, rtol=0, atol=1e6 * ULP * np.abs(reference).max())


def test_mean_changes_the_logits_as_the_raw_mean_and_has_no_flat_part():
    """Query (a, i), key (b, j): logit = W[a, b] + W[a, V+j] + W[V+i, b] + W[V+i, V+j]; differences over keys kept."""
    raw = np.zeros((N, N))
    raw[V:, V:] = TRIAL.g * (cyclic_shift(L) - 1 / L)
    raw[np.arange(V), np.arange(V)] = TRIAL.delta
    queries = [np.concatenate([np.eye(V)[a], np.eye(L)[i]]) for a in range(V) for i in range(L)]
    keys = np.array(queries)
    for weights in (raw, TRIAL.mean()):
        logits = np.array([keys @ weights.T @ q for q in queries])
        if weights is raw:
            expected = logits - logits[:, :1]
    assert np.allclose(logits - logits[:, :1], expected, rtol=0, atol=64 * ULP * np.abs(expected).max())
    assert np.abs(visible_geometry(L, V)[0].T @ TRIAL.mean().ravel()).max() < 64 * ULP
    assert np.abs(TRIAL.mean()[np.arange(V), np.arange(V)] - TRIAL.delta * (1 - 1 / V)).max() < 64 * ULP


def test_token_permutations_and_cyclic_shifts_leave_the_density_unchanged():
    theta = TRIAL.sample(np.random.default_rng(2).standard_normal((3, N * N)))[0]
    for order in (np.r_[[2, 0, 1], V + np.arange(L)], np.r_[np.arange(V), V + np.roll(np.arange(L), 2)]):
        moved = theta[:, order][:, :, order]
        assert np.allclose(TRIAL.log_density(moved), TRIAL.log_density(theta), rtol=0, atol=1e6 * ULP)
