r"""The literal construction of the basis statistics, as the paper defines them (tests, benchmark).

Per sequence, with dense one-hot X, Y (T x V), R = Y - 1/V and (A_0)_{t\tau} = 1/t:
B̄ += X^\top R, \bar\Phi += R^\top A_0 X; then \Sigma = \bar B^\top\bar B,
\bar G = \Sigma\bar\Phi, and in a second loop M = R\bar G X^\top (T x T), the softmax
Jacobian tensor at uniform causal attention
J_{t j k} = \partial\,\mathrm{softmax}(S_t)_j / \partial S_{tk} = A_{tj}(\delta_{jk} - A_{tk})
(T x T x T), Q_{tk} = \sum_j M_{tj} J_{tjk}, \bar Q += X^\top Q X and
\Delta_d += \sum_t Q_{t,t-d}.  O(N T^3) time, O(T^3 + T V) memory per sequence:
use it only to check :func:`emergence.numerics.leading_terms.basis_statistics.basis_statistics`.

>>> import numpy as np
>>> literal_basis_statistics(np.array([[0, 1, 0, 1], [1, 1, 0, 0]]), 2)["B"]
array([[-0.08333333,  0.08333333],
       [ 0.08333333, -0.08333333]])
"""

from __future__ import annotations

import numpy as np


def uniform_causal_attention(context_length: int) -> np.ndarray:
    """A_0 (T x T): 1/t on and below the diagonal of row t (1-based), 0 above."""
    causal = np.tril(np.ones((context_length, context_length)))
    return causal / causal.sum(axis=1, keepdims=True)


def softmax_jacobian_tensor(attention: np.ndarray) -> np.ndarray:
    """J[t, j, k] = A[t, j] (delta_jk - A[t, k]) for one attention matrix A (T x T x T)."""
    identity = np.eye(attention.shape[1])
    return attention[:, :, None] * (identity[None, :, :] - attention[:, None, :])


def literal_basis_statistics(sequences: np.ndarray, vocab_size: int) -> dict[str, np.ndarray]:
    """Keys ``B``, ``Sigma``, ``Phi``, ``G``, ``Q``, ``Delta`` from the paper's definitions."""
    sequences = np.asarray(sequences)
    count, context_length = sequences.shape[0], sequences.shape[1] - 1
    identity = np.eye(vocab_size)
    attention = uniform_causal_attention(context_length)
    jacobian = softmax_jacobian_tensor(attention)
    positions = count * context_length
    bigram = np.zeros((vocab_size, vocab_size))
    context = np.zeros((vocab_size, vocab_size))
    for window in sequences:
        inputs, residual = identity[window[:-1]], identity[window[1:]] - 1.0 / vocab_size
        bigram += inputs.T @ residual
        context += residual.T @ attention @ inputs
    bigram /= positions
    context /= positions
    interchangeability = bigram.T @ bigram
    composed = interchangeability @ context
    key_query = np.zeros((vocab_size, vocab_size))
    positional = np.zeros(context_length)
    for window in sequences:
        inputs, residual = identity[window[:-1]], identity[window[1:]] - 1.0 / vocab_size
        scores = residual @ composed @ inputs.T
        logit_gradient = np.einsum("tj,tjk->tk", scores, jacobian)
        key_query += inputs.T @ logit_gradient @ inputs
        for lag in range(context_length):
            positional[lag] += np.trace(logit_gradient, offset=-lag)
    return {
        "B": bigram,
        "Sigma": interchangeability,
        "Phi": context,
        "G": composed,
        "Q": key_query / positions,
        "Delta": positional / positions,
    }
