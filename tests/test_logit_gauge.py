"""Flat directions of softmax model T and the gauge-correct trial of the posterior theory, against brute force.

- count: the null space of the attention map (every row's logit differences over many sequences, dense
  linear algebra) has the derived dimension 3(V + L) - 2, split 2V + L - 1 / V + 2L - 1 by key-column type;
- the training model: a shift of W_QK along each derived flat direction leaves every attention row of the
  torch model unchanged to rounding, a direction outside them does not;
- free energy: F(gauge) - F(product) at equal (g, t_u, t_v) equals the difference of the two trials' Gaussian
  KL divergences from the prior computed densely, with the flat subspace taken from the brute-force null space
  (not from the derivation); the two trials have the same law on the informative directions.
Each is also run with the count that misses the logit-null directions, 2(V + L), and must fail.
"""

import numpy as np
import pytest
import sympy as sp
import torch

from emergence.numerics.copy_head.logit_gauge import flat_direction_basis
from emergence.numerics.copy_head.posterior import PosteriorTheory, entropy_rate, trial_entropy_counts
from emergence.theory.copy_head import posterior as theory
from emergence.theory.copy_head.logit_gauge import flat_directions
from emergence.theory.copy_head.symbols import L as L_, P as P_, V as V_, beta as beta_, lam as lam_
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.models import CopyAttentionModel

from embedding_maps import attention_at, null_space, random_embeddings

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SIZES = [(2, 3), (3, 5), (4, 6)]
SOFTMAX = CopyTaskConvention(architecture="T", attention="softmax")


def _logit_difference_map(V, L, sequences=150, seed=0):
    """Rows: z_i (z_{i-1} - z_j)^T flattened, every query i and key j != i - 1 of random sequences; (rows, N^2)."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(sequences):
        Z = random_embeddings(V, L, rng)
        for i in range(L):
            for j in range(L):
                if j != (i - 1) % L:
                    rows.append(np.outer(Z[i], Z[(i - 1) % L] - Z[j]).ravel())
    return np.array(rows)


@pytest.mark.parametrize("V, L", SIZES)
def test_flat_directions_are_the_null_space_of_the_attention_map(V, L):
    derived = flat_directions()
    values = {V_: V, L_: L}
    rows = _logit_difference_map(V, L)
    N = V + L
    assert null_space(rows).shape[1] == int(derived["flat_total"].subs(values))
    assert null_space(rows).shape[1] != 2 * (V + L)  # the softmax gauge alone misses the logit-null directions
    token_columns = np.zeros((N, N), dtype=bool)
    token_columns[:, :V] = True
    for kind, columns in (("key_token", token_columns.ravel()), ("key_position", ~token_columns.ravel())):
        # the flat subspace splits by column type, so its part in these columns is the null space restricted to them
        assert null_space(rows[:, columns]).shape[1] == int(derived[kind]["flat"].subs(values)), kind
    # the numerics' basis spans exactly the brute-force null space
    basis = np.concatenate(list(flat_direction_basis(V, L).values()), axis=1)
    null = null_space(rows)
    assert np.allclose(basis @ basis.T, null @ null.T, atol=1e-10)


@pytest.mark.parametrize("V, L", SIZES)
def test_numerics_entropy_counts_are_the_derived_ones(V, L):
    values = {V_: V, L_: L}
    for trial in theory.TRIALS:
        entropy = sp.expand(theory.trial_entropy(trial))
        derived = tuple(int(sp.expand(-2 * entropy.coeff(sp.log(ratio))).subs(values)) for ratio in (theory.t_u, theory.t_v))
        assert trial_entropy_counts(trial, L, V) == derived, trial


def test_a_shift_along_a_flat_direction_leaves_the_torch_attention_unchanged():
    V, L, P = 4, 6, 40
    model = CopyAttentionModel(1, L, V, SOFTMAX)
    batch = copy_task_batch([P], L, V, seeds=[3])
    generator = torch.Generator().manual_seed(0)
    start = torch.randn(V + L, V + L, generator=generator, dtype=torch.float64)
    attention = attention_at(model, batch)
    reference = attention(start)
    eps = torch.finfo(torch.float64).eps
    for kind, basis in flat_direction_basis(V, L).items():
        for column in basis.T:
            direction = torch.as_tensor(column).reshape(V + L, V + L)
            moved = attention(start + 3.0 * direction)
            # logits O(5) shifted by O(3): softmax rows agree to a few ulps of the logits
            assert float((moved - reference).abs().max()) <= 64 * eps * 8, kind
    flat = np.concatenate(list(flat_direction_basis(V, L).values()), axis=1)
    other = np.random.default_rng(1).standard_normal((V + L) ** 2)
    other -= flat @ (flat.T @ other)
    other /= np.linalg.norm(other)
    moved = attention(start + 3.0 * torch.as_tensor(other).reshape(V + L, V + L))
    assert float((moved - reference).abs().max()) > 1e-2  # an informative direction changes the attention


def _gaussian_kl_from_prior(mean, covariance, s):
    """KL(N(mean, covariance) || N(0, s I)), dense."""
    n = mean.size
    _, logdet = np.linalg.slogdet(covariance / s)
    return 0.5 * (np.trace(covariance) / s + mean @ mean / s - n - logdet)


def _trial_moments(V, L, g, t_u, t_v, s):
    """The product trial: mean g (S - J/L) in the position block, variance t_u s / t_v s by key column; flattened."""
    N = V + L
    mean = np.zeros((N, N))
    shift = np.roll(np.eye(L), 1, axis=0)  # S[i, i - 1] = 1
    mean[V:, V:] = g * (shift - 1.0 / L)
    variance = np.empty((N, N))
    variance[:, :V], variance[:, V:] = t_u * s, t_v * s
    return mean.ravel(), np.diag(variance.ravel())


@pytest.mark.parametrize("g, t_u, t_v", [(2.5, 0.41, 0.75), (0.3, 0.92, 0.99), (1.0, 1.7, 0.3)])
def test_gauge_trial_lowers_F_by_the_dense_kl_of_the_released_directions(g, t_u, t_v):
    V, L, P = 4, 6, 120.0
    numerics = {trial: PosteriorTheory(L, V, draws=10, trial=trial) for trial in theory.TRIALS}
    s = numerics["gauge"].s
    averages = {"square": 0.35, "target": 0.4}
    shift = (numerics["gauge"].free_energy(g, t_u, t_v, P, averages)
             - numerics["product"].free_energy(g, t_u, t_v, P, averages))
    flat = null_space(_logit_difference_map(V, L))
    projector = flat @ flat.T
    informative = np.eye(projector.shape[0]) - projector
    mean, covariance = _trial_moments(V, L, g, t_u, t_v, s)
    gauge_mean, gauge_covariance = informative @ mean, informative @ covariance @ informative + s * projector
    # the product trial factorises over the flat subspace and its complement, and the two trials agree on the complement
    assert np.allclose(covariance @ projector, projector @ covariance, atol=1e-12)
    assert np.allclose(gauge_mean, mean, atol=1e-12)
    assert np.allclose(informative @ gauge_covariance @ informative, informative @ covariance @ informative, atol=1e-12)
    dense = _gaussian_kl_from_prior(gauge_mean, gauge_covariance, s) - _gaussian_kl_from_prior(mean, covariance, s)
    assert shift == pytest.approx(dense, rel=1e-9, abs=1e-9)
    # the same from the SymPy derivation
    symbolic = float(theory.gauge_trial_shift().subs({theory.t_u: t_u, theory.t_v: t_v, V_: V, L_: L}))
    assert symbolic == pytest.approx(dense, rel=1e-9, abs=1e-9)
    # planted: only the 2(V + L) softmax-gauge directions released
    gauge_only = -(V + L) * (entropy_rate(t_u) + entropy_rate(t_v))
    assert gauge_only != pytest.approx(dense, rel=1e-3)


def test_sympy_free_energy_of_either_trial_is_the_numerics():
    L, V, P, g, t_u, t_v = 16, 4, 300.0, 2.0, 0.7, 0.9
    for trial in theory.TRIALS:
        F = theory.posterior_free_energy(trial=trial)
        numerics = PosteriorTheory(L, V, draws=10, trial=trial)
        values = {sp.Symbol("g", real=True): g, theory.t_u: t_u, theory.t_v: t_v, theory.row_square: 0.35,
                  theory.row_target: 0.4, P_: P, L_: L, V_: V, theory.s_entry: numerics.s, lam_: numerics.lam,
                  beta_: numerics.beta}
        assert numerics.free_energy(g, t_u, t_v, P, {"square": 0.35, "target": 0.4}) == pytest.approx(
            float(F.subs(values)), rel=1e-10), trial
