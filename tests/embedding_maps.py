"""Brute-force pieces shared by the flat-direction tests: random copy-task embeddings, a null space, and the
torch model's attention at given logit weights.

An embedding row is z = token one-hot (V entries) followed by position one-hot (L entries).
"""

import numpy as np


def random_embeddings(V: int, L: int, rng: np.random.Generator) -> np.ndarray:
    """The embeddings z_1 ... z_L of one sequence of uniform random tokens; (L, V + L)."""
    Z = np.zeros((L, V + L))
    Z[np.arange(L), rng.integers(0, V, L)] = 1
    Z[np.arange(L), V + np.arange(L)] = 1
    return Z


def null_space(matrix: np.ndarray) -> np.ndarray:
    """Orthonormal columns spanning the null space of ``matrix`` (singular values below 1e-9 of the largest)."""
    _, singular, right = np.linalg.svd(matrix, full_matrices=False)
    rank = int((singular > 1e-9 * singular[0]).sum())
    return right[rank:].T  # (columns of matrix, nullity)


def attention_at(model, batch):
    """``weights (V + L, V + L) -> attention``: the torch copy-task ``model``'s attention on ``batch`` with its
    first run's logit weights set to ``weights`` (a copy, taken without gradients)."""
    import torch

    def attention(weights):
        with torch.no_grad():
            model.logit_weights[0] = weights
            return model.attention(batch).clone()

    return attention
