"""Flat directions of **linear** model T, against brute force.

Linear attention is the logits themselves, :math:`A_{ij} = z_i^TW_{QK}z_j/L^k`, so a change of
:math:`W_{QK}` is flat iff it leaves every logit unchanged; the softmax row gauge (a constant per row)
is not flat here.  Every query and every key embedding :math:`z = (x; e)` is orthogonal to
:math:`f = (\\mathbf 1_V; -\\mathbf 1_L)`, so the flat subspace is :math:`f\\,d^T` (query side) plus
:math:`d\\,f^T` (key side), any d, less their overlap :math:`ff^T`: 2(V + L) - 1 directions.

- count: the null space of the logit map (every query-key pair over many sequences, dense linear algebra)
  has dimension 2(V + L) - 1 and is spanned by the two families; the softmax count 3(V + L) - 2 and the
  query-side family alone (V + L) are rejected;
- the training model: a shift along each family leaves the torch model's linear attention unchanged to
  rounding; a softmax row-gauge shift changes it.
"""

import numpy as np
import pytest
import torch

from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.models import CopyAttentionModel

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SIZES = [(2, 3), (3, 5), (4, 6)]
LINEAR = CopyTaskConvention(architecture="T", attention="linear", normalisation="G/L")


def _logit_map(V, L, sequences=60, seed=0):
    """Rows: z_i z_j^T flattened, every query i and key j of random sequences; (rows, N^2)."""
    N = V + L
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(sequences):
        Z = np.zeros((L, N))
        Z[np.arange(L), rng.integers(0, V, L)] = 1
        Z[np.arange(L), V + np.arange(L)] = 1
        rows.append(np.einsum("ia,jb->ijab", Z, Z).reshape(L * L, N * N))
    return np.concatenate(rows)


def _null_space(matrix):
    _, singular, right = np.linalg.svd(matrix, full_matrices=False)
    rank = int((singular > 1e-9 * singular[0]).sum())
    return right[rank:].T  # (N^2, nullity), orthonormal


def _logit_null_families(V, L):
    """Orthonormal columns spanning f d^T and d f^T, f = (1_V; -1_L), any d; (N^2, n)."""
    N = V + L
    f = np.concatenate([np.ones(V), -np.ones(L)])
    generators = [np.outer(f, e).ravel() for e in np.eye(N)] + [np.outer(e, f).ravel() for e in np.eye(N)]
    left, singular, _ = np.linalg.svd(np.array(generators).T, full_matrices=False)
    return left[:, : int((singular > 1e-10 * singular[0]).sum())]


@pytest.mark.parametrize("V, L", SIZES)
def test_linear_flat_directions_are_the_two_logit_null_families(V, L):
    null = _null_space(_logit_map(V, L))
    families = _logit_null_families(V, L)
    assert null.shape[1] == 2 * (V + L) - 1
    assert families.shape[1] == null.shape[1]
    assert np.allclose(families @ families.T, null @ null.T, atol=1e-10)
    # planted counts: the softmax flat subspace, and the query-side family alone
    assert null.shape[1] not in (3 * (V + L) - 2, V + L)


def test_a_logit_null_shift_leaves_the_torch_linear_attention_unchanged_and_a_row_gauge_shift_does_not():
    V, L, P = 4, 6, 40
    N = V + L
    model = CopyAttentionModel(1, L, V, LINEAR)
    batch = copy_task_batch([P], L, V, seeds=[3])
    generator = torch.Generator().manual_seed(0)
    start = torch.randn(N, N, generator=generator, dtype=torch.float64)

    def attention(weights):
        with torch.no_grad():
            model.logit_weights[0] = weights
            return model.attention(batch).clone()

    reference = attention(start)
    eps = torch.finfo(torch.float64).eps
    rng = np.random.default_rng(1)
    f = torch.as_tensor(np.concatenate([np.ones(V), -np.ones(L)]))
    d = torch.as_tensor(rng.standard_normal(N))
    for direction in (torch.outer(f, d), torch.outer(d, f)):
        moved = attention(start + 3.0 * direction)
        # logits O(5) plus O(3 * 3) shifts that cancel: agreement to a few ulps of the logits, over L
        assert float((moved - reference).abs().max()) <= 64 * eps * 16
    token_columns = torch.cat([torch.ones(V), torch.zeros(L)]).double()
    moved = attention(start + 3.0 * torch.outer(d, token_columns))  # a softmax row gauge
    assert float((moved - reference).abs().max()) > 1e-2
