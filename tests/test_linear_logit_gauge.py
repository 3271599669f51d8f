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
  rounding; a softmax row-gauge shift changes it;
- free energy: F(gauge) - F(product) of the linear posterior theory (SymPy and generated kernel) equals the
  difference of the two trials' Gaussian KL divergences from the prior computed densely, the gauge trial being
  the product trial's marginal on the complement of the brute-force null space and the prior on it; releasing
  only the query-side family, V I(t_u) + L I(t_v), is rejected.
"""

import numpy as np
import pytest
import sympy as sp
import torch

from emergence.numerics.copy_head.linear_posterior import LinearPosteriorTheory
from emergence.numerics.copy_head.posterior import entropy_rate
from emergence.theory.copy_head import linear_posterior as theory
from emergence.theory.copy_head.symbols import L as L_, V as V_

from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.models import CopyAttentionModel

from embedding_maps import attention_at, null_space, random_embeddings

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SIZES = [(2, 3), (3, 5), (4, 6)]
LINEAR = CopyTaskConvention(architecture="T", attention="linear", normalisation="G/L")


def _logit_map(V, L, sequences=60, seed=0):
    """Rows: z_i z_j^T flattened, every query i and key j of random sequences; (rows, N^2)."""
    N = V + L
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(sequences):
        Z = random_embeddings(V, L, rng)
        rows.append(np.einsum("ia,jb->ijab", Z, Z).reshape(L * L, N * N))
    return np.concatenate(rows)


def _logit_null_families(V, L):
    """Orthonormal columns spanning f d^T and d f^T, f = (1_V; -1_L), any d; (N^2, n)."""
    N = V + L
    f = np.concatenate([np.ones(V), -np.ones(L)])
    generators = [np.outer(f, e).ravel() for e in np.eye(N)] + [np.outer(e, f).ravel() for e in np.eye(N)]
    left, singular, _ = np.linalg.svd(np.array(generators).T, full_matrices=False)
    return left[:, : int((singular > 1e-10 * singular[0]).sum())]


@pytest.mark.parametrize("V, L", SIZES)
def test_linear_flat_directions_are_the_two_logit_null_families(V, L):
    null = null_space(_logit_map(V, L))
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
    attention = attention_at(model, batch)
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


def _gaussian_kl_from_prior(covariance, s):
    """KL(N(0, covariance) || N(0, s I)), dense."""
    _, logdet = np.linalg.slogdet(covariance / s)
    return 0.5 * (np.trace(covariance) / s - covariance.shape[0] - logdet)


@pytest.mark.parametrize("t_u, t_v", [(0.41, 0.75), (0.92, 0.99), (1.7, 0.3), (0.03, 0.15)])
def test_gauge_trial_lowers_F_by_the_dense_kl_of_the_released_directions(t_u, t_v):
    V, L, s = 4, 6, 0.37
    N = V + L
    flat = null_space(_logit_map(V, L))
    projector = flat @ flat.T
    visible = np.eye(N * N) - projector
    variance = np.empty((N, N))
    variance[:, :V], variance[:, V:] = t_u * s, t_v * s
    product = np.diag(variance.ravel())
    gauge = visible @ product @ visible + s * projector  # the product trial's marginal where the logits look
    dense = _gaussian_kl_from_prior(gauge, s) - _gaussian_kl_from_prior(product, s)
    symbolic = float(theory.gauge_trial_shift().subs({theory.t_u: t_u, theory.t_v: t_v, V_: V, L_: L}))
    assert symbolic == pytest.approx(dense, rel=1e-9, abs=1e-9)
    numerics = {trial: LinearPosteriorTheory(L, V, draws=2, sequences=2, trial=trial) for trial in ("gauge", "product")}
    shift = float(numerics["gauge"].free_energy(0.3, 0.1, t_u, t_v, 90.0)[0]
                  - numerics["product"].free_energy(0.3, 0.1, t_u, t_v, 90.0)[0])
    assert shift == pytest.approx(dense, rel=1e-9, abs=1e-9)
    # the gauge entropy is the KL of the gauge trial itself, and the product entropy the product trial's
    for trial, covariance in (("gauge", gauge), ("product", product)):
        entropy = float(theory.noise_entropy(trial).subs({theory.t_u: t_u, theory.t_v: t_v, V_: V, L_: L}))
        assert entropy == pytest.approx(_gaussian_kl_from_prior(covariance, s), rel=1e-9), trial
    # planted: only the query-side family f d^T released (the softmax logit-null count, V + L)
    query_side_only = -(V * entropy_rate(t_u) + L * entropy_rate(t_v))
    assert query_side_only != pytest.approx(dense, rel=1e-3)


def test_released_entropy_gradient_kernel_is_the_sympy_derivative():
    t_u, t_v, V, L = 0.6, 0.9, 4, 16
    released = theory.gauge_trial_shift()
    values = LinearPosteriorTheory(L, V, draws=2, sequences=2).kernels.linear_posterior_gauge_shift(t_u, t_v, L, V)
    point = {theory.t_u: t_u, theory.t_v: t_v, V_: V, L_: L}
    for value, expression in zip(values, (released, sp.diff(released, theory.t_u), sp.diff(released, theory.t_v))):
        assert float(value) == pytest.approx(float(expression.subs(point)), rel=1e-10)
