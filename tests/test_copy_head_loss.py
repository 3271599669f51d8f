"""Step 6: predicted losses against a readout actually fitted on sampled data and tested on fresh data."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.numerics.kernels.copy_head_linear import linear_posterior_test_loss, linear_test_loss
from emergence.numerics.kernels.copy_head_softmax import softmax_posterior_test_loss, softmax_test_loss
from test_copy_head_marginal import one_hot_sequences, shift_matrix


def fitted_readout_test_loss(A, V, P, beta_value, lam_value, rng, test_sequences=4000):
    """Posterior-mean readout from P sampled training sequences, squared error per position on fresh data."""
    L = A.shape[0]
    S = shift_matrix(L, "cyclic")
    X = one_hot_sequences(rng, P, L, V)
    Phi = np.einsum("lk,skb->slb", A, X).reshape(-1, V)
    Y = np.einsum("lk,skb->slb", S, X).reshape(-1, V)
    eps = beta_value * lam_value
    W = eps * np.linalg.solve(np.eye(V) + eps * Phi.T @ Phi, Phi.T @ Y)
    X_test = one_hot_sequences(rng, test_sequences, L, V)
    residual = np.einsum("lk,skb->slb", A, X_test) @ W - np.einsum("lk,skb->slb", S, X_test)
    per_sequence = (residual**2).sum(axis=(1, 2)) / L
    return per_sequence.mean(), per_sequence.std(ddof=1) / np.sqrt(test_sequences)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31), c1=st.floats(-1, 1), cG=st.floats(-0.5, 0.5), P=st.integers(2, 50))
def test_linear_loss_equals_fitted_readout_on_fresh_data(seed, c1, cG, P):
    rng = np.random.default_rng(seed)
    L, V, beta_value, lam_value = 8, 4, 1 / 8, 1.0
    A = c1 * np.ones((L, L)) / L + cG * shift_matrix(L, "cyclic")
    finite = [fitted_readout_test_loss(A, V, P * 100, beta_value, lam_value, rng) for _ in range(2)]
    measured = np.mean([value for value, _ in finite])
    error = np.sqrt(sum(e**2 for _, e in finite)) / 2
    predicted = linear_posterior_test_loss(c1, cG, P * 100, L, V, lam_value, beta_value)
    # The O(V^2/(P L)) overfitting correction is not in the population prediction.
    assert abs(measured - predicted) <= 5 * error + 3 * V**2 / (P * 100 * L) + 1e-3


def test_infinite_data_limits_and_plateaus():
    L, V = 256, 16
    assert abs(linear_test_loss(1.0, 0.0, L, V) - (1 - 1 / V) * (L - 1) / L) < 1e-12  # uniform plateau
    assert abs(linear_test_loss(1e-9, 1.0, L, V)) < 1e-12  # pure copy
    assert abs(softmax_test_loss(1 - 1e-12, L, V)) < 1e-9
    assert abs(softmax_test_loss(1 / L, L, V) - (1 - 1 / V) * (L - 1) / L) < 1e-12
    for P in (1e2, 1e4, 1e8):
        assert linear_posterior_test_loss(0.3, 0.1, P, L, V, 1.0, 1 / L) >= linear_test_loss(0.3, 0.1, L, V)
    assert abs(linear_posterior_test_loss(0.3, 0.1, 1e14, L, V, 1.0, 1 / L) - linear_test_loss(0.3, 0.1, L, V)) < 1e-6
    assert abs(softmax_posterior_test_loss(0.4, 1e14, L, V, 1.0, 1 / L) - softmax_test_loss(0.4, L, V)) < 1e-6
    assert abs(linear_posterior_test_loss(0.0, 0.0, 1e3, L, V, 1.0, 1 / L) - 1.0) < 1e-12
