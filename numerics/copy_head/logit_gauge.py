r"""Orthonormal bases of model T's flat directions (derived in :mod:`emergence.theory.copy_head.logit_gauge`).

:math:`W_{QK}` is ``(V + L, V + L)``, rows = query embedding, columns = key embedding (tokens first).
The flat subspace is spanned by two families:

- the softmax gauge :math:`a\,b^T` with b constant on the key tokens, :math:`(\mathbf 1_V; 0)`, or on the
  key positions, :math:`(0; \mathbf 1_L)`, and any a (a constant per query row);
- the logit null :math:`c\,d^T` with :math:`c = (\mathbf 1_V; -\mathbf 1_L)` (orthogonal to every query
  embedding, whose token and position parts each sum to one) and any d.

Each direction lies in the key-token or the key-position columns, so the basis splits by column type,
with :math:`2V + L - 1` and :math:`V + 2L - 1` directions (the derivation's counts; checked here).

>>> bases = flat_direction_basis(4, 8)
>>> bases["key_token"].shape, bases["key_position"].shape
((144, 15), (144, 19))
"""

from __future__ import annotations

import numpy as np

FLAT_COUNTS = {"key_token": lambda V, L: 2 * V + L - 1, "key_position": lambda V, L: V + 2 * L - 1}
"""Flat directions per key-column type (:func:`emergence.theory.copy_head.logit_gauge.flat_directions`)."""


def flat_direction_basis(V: int, L: int) -> dict[str, np.ndarray]:
    """Orthonormal columns ``(N^2, n)`` (``N = V + L``, row-major ``W.ravel()``) spanning the flat directions per column type."""
    N = V + L
    query_null = np.concatenate([np.ones(V), -np.ones(L)])
    bases = {}
    for kind, columns in (("key_token", slice(0, V)), ("key_position", slice(V, N))):
        constant_key = np.zeros(N)
        constant_key[columns] = 1.0
        generators = [np.outer(np.eye(N)[k], constant_key).ravel() for k in range(N)]
        generators += [np.outer(query_null, np.eye(N)[k]).ravel() for k in range(N)[columns]]
        left, singular, _ = np.linalg.svd(np.array(generators).T, full_matrices=False)
        rank = int((singular > 1e-10 * singular[0]).sum())
        if rank != FLAT_COUNTS[kind](V, L):
            raise ArithmeticError(f"{kind}: {rank} flat directions, the derivation says {FLAT_COUNTS[kind](V, L)}")
        bases[kind] = left[:, :rank]
    return bases


__all__ = ["FLAT_COUNTS", "flat_direction_basis"]
