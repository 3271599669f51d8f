"""Step 7, the posterior-level reduced theory of softmax model T: each step against brute force.

- entropy: the SymPy KL of the mean-field law against a Monte Carlo KL;
- noise split: logit differences of the training model (model T, W_QK drawn from the
  mean-field law) have the variances the blocks predict (2 t_u s + 2 t_v s, or 2 t_v s for keys
  sharing a token);
- effective invariants: tr C and tr B of the training model's readout statistics equal
  L Q_Phi and L M_Phi of the row Monte Carlo;
- data action and loss: NumPy forms equal the SymPy population action and loss;
- quadrature: converged in nodes and tau points, and equal to the Monte Carlo;
- Monte Carlo: converged in the number of draws;
- noiseless limit: the free energy without entropy is the saddle's reduced action (kernel).
Each check is also run with one coefficient changed and must fail.
"""

import numpy as np
import pytest
import sympy as sp
import torch

from emergence.numerics.copy_head.posterior import (
    PosteriorTheory, RowNoise, data_action, effective_invariants, phi_moments_iid, posterior_mean_loss,
    row_averages_iid, row_averages_monte_carlo, row_averages_quadrature, token_noise_nodes,
)
from emergence.base.errors import EmergenceError
from emergence.numerics.copy_head.posterior_action import posterior_coexistence
from emergence.numerics.copy_head.reduced_action import generated_kernels
from emergence.theory.copy_head import loss as loss_theory
from emergence.theory.copy_head import posterior as theory
from emergence.theory.copy_head.population import population_action
from emergence.theory.copy_head.symbols import L as L_, P as P_, V as V_, beta as beta_, lam as lam_, m as m_, n as n_, q as q_, r as r_
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.models import CopyAttentionModel

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_mean_field_entropy_matches_monte_carlo_kl():
    rng = np.random.default_rng(0)
    mu, t, s = 0.7, 0.4, 1.3
    w = mu + np.sqrt(t * s) * rng.standard_normal(400_000)
    log_ratio = (-(w - mu) ** 2 / (2 * t * s) - 0.5 * np.log(t * s)) - (-(w**2) / (2 * s) - 0.5 * np.log(s))
    mc, error = log_ratio.mean(), log_ratio.std() / np.sqrt(w.size)
    kl = float(theory.mean_field_entropy_cost().subs({theory.mu: mu, theory.t_var: t, theory.s_entry: s}))
    assert abs(kl - mc) < 4 * error
    wrong = float((mu**2 / (2 * s) + (t - 1 - np.log(t))).real)  # without the 1/2
    assert abs(wrong - mc) > 10 * error


def _mean_field_weights(runs, L, V, s, t_u, t_v, g, seed):
    """W_QK drawn from the mean-field law: key-token blocks t_u s, key-position blocks t_v s, mean g on W_pp along S."""
    generator = torch.Generator().manual_seed(seed)
    W = torch.randn(runs, V + L, V + L, generator=generator, dtype=torch.float64)
    scale = torch.empty(V + L, V + L, dtype=torch.float64)
    scale[:, :V] = np.sqrt(t_u * s)  # columns = key token (W_tt, W_pt)
    scale[:, V:] = np.sqrt(t_v * s)  # columns = key position (W_tp, W_pp)
    W = W * scale
    W[:, V + torch.arange(L), V + (torch.arange(L) - 1) % L] += g
    return W


def test_logit_noise_blocks_match_the_training_model():
    L, V, s, t_u, t_v = 6, 3, 0.8, 0.5, 1.7
    runs = 4000
    blocks = theory.logit_noise_blocks()
    var_u = float(blocks["key_token"]["variance"].subs({theory.s_entry: s, theory.t_u: t_u}))
    var_v = float(blocks["key_position"]["variance"].subs({theory.s_entry: s, theory.t_v: t_v}))
    convention = CopyTaskConvention(architecture="T", attention="softmax")
    model = CopyAttentionModel(runs, L, V, convention)
    with torch.no_grad():
        model.logit_weights.copy_(_mean_field_weights(runs, L, V, s, t_u, t_v, 0.0, 1))
    batch = copy_task_batch([1] * runs, L, V, seeds=[5] * runs)  # one fixed sequence, many weight draws
    tokens = batch.one_hot()[0].argmax(-1)
    G = model.logits(batch).detach()
    i = 2
    pairs = {"different": None, "same": None}
    for j in range(L):
        for k in range(L):
            if j != k:
                key = "same" if tokens[j] == tokens[k] else "different"
                pairs[key] = pairs[key] or (j, k)
    assert pairs["different"] and pairs["same"], tokens
    j, k = pairs["different"]
    measured = float((G[:, i, j] - G[:, i, k]).var())
    assert measured == pytest.approx(2 * var_u + 2 * var_v, rel=0.08)
    assert measured != pytest.approx(var_u + var_v, rel=0.08)  # one block per noise would be wrong
    j, k = pairs["same"]
    assert float((G[:, i, j] - G[:, i, k]).var()) == pytest.approx(2 * var_v, rel=0.08)


def test_effective_invariants_equal_the_training_models_readout_statistics():
    """tr C / P = L Q_Phi and tr B / P = L M_Phi, averaged over weights drawn from the mean-field law."""
    L, V, s, t_u, t_v, g = 8, 4, 1.0, 0.6, 0.9, 2.0
    runs, P = 300, 20
    convention = CopyTaskConvention(architecture="T", attention="softmax")
    model = CopyAttentionModel(runs, L, V, convention)
    with torch.no_grad():
        model.logit_weights.copy_(_mean_field_weights(runs, L, V, s, t_u, t_v, g, 2))
    batch = copy_task_batch([P] * runs, L, V, seeds=list(range(runs)))
    with torch.no_grad():
        C, B, _ = model.readout_statistics(batch)
    trace_C = (torch.diagonal(C, dim1=-2, dim2=-1).sum(-1) / (P * L)).numpy()
    trace_B = (torch.diagonal(B, dim1=-2, dim2=-1).sum(-1) / (P * L)).numpy()
    blocks = theory.logit_noise_blocks()
    var_u = float(blocks["key_token"]["variance"].subs({theory.s_entry: s, theory.t_u: t_u}))
    var_v = float(blocks["key_position"]["variance"].subs({theory.s_entry: s, theory.t_v: t_v}))
    rows = row_averages_monte_carlo(g, var_u, var_v, RowNoise.draw(L, V, 200_000, 0), V)
    for measured, key in ((trace_C, "square"), (trace_B, "target")):
        mean, error = measured.mean(), measured.std(ddof=1) / np.sqrt(runs)
        predicted, predicted_error = rows[key]
        assert abs(mean - predicted) < 4 * np.hypot(error, predicted_error), (key, mean, predicted)
    # the token-structured noise matters: without it the prediction is rejected
    plain = row_averages_monte_carlo(g, 0.0, var_v, RowNoise.draw(L, V, 200_000, 0), V)
    assert abs(trace_C.mean() - plain["square"][0]) > 6 * trace_C.std() / np.sqrt(runs)
    # and the SymPy effective invariants are the numerics'
    effective = theory.effective_invariants()
    values = {theory.row_square: 0.3, theory.row_target: 0.4, L_: L, V_: V}
    assert effective_invariants(0.3, 0.4, L, V) == pytest.approx(
        (float(effective["q"].subs(values)), float(effective["m"].subs(values))), rel=1e-12)


def test_data_action_and_loss_equal_the_sympy_derivation():
    symbols = (q_, m_, r_, n_, P_, V_, lam_, beta_, L_)
    action = sp.lambdify(symbols, population_action("cyclic", "raw"), "numpy")
    loss = sp.lambdify(symbols, loss_theory.posterior_mean_loss("cyclic", "raw"), "numpy")
    rng = np.random.default_rng(1)
    for _ in range(5):
        point = (rng.uniform(0.5, 3), rng.uniform(0.1, 2), 7.0, 7.0, rng.uniform(10, 500), 5.0,
                 rng.uniform(0.2, 2), rng.uniform(0.05, 1), 7.0)
        assert data_action(*point) == pytest.approx(action(*point), rel=1e-11)
        assert posterior_mean_loss(*point) == pytest.approx(loss(*point), rel=1e-11)


@pytest.mark.parametrize("g, variance", [(0.0, 2.0), (3.0, 2.0), (5.0, 4.0)])
def test_laplace_quadrature_converges_and_equals_monte_carlo(g, variance):
    L, V = 32, 8
    coarse = row_averages_iid(g, variance, L, nodes=60, tau_points=1000)
    fine = row_averages_iid(g, variance, L, nodes=120, tau_points=3000)
    for key in ("aG", "square_sum"):
        assert coarse[key] == pytest.approx(fine[key], rel=1e-6, abs=1e-9)
    mc = row_averages_monte_carlo(g, 0.0, variance, RowNoise.draw(L, V, 100_000, 3), V)
    for key in ("aG", "square_sum"):
        assert abs(fine[key] - mc[key][0]) < 4 * mc[key][1], (key, fine[key], mc[key])
    moments = phi_moments_iid(fine["aG"], fine["square_sum"], V)
    for key in ("square", "target"):
        assert abs(moments[key] - mc[key][0]) < 4 * mc[key][1], (key, moments[key], mc[key])
    # the (L - 1) cross term of E sum A^2 is needed: drop it and the check fails
    alone = row_averages_iid(g, variance, 2, nodes=120, tau_points=3000)["square_sum"]
    assert abs(alone - mc["square_sum"][0]) > 10 * mc["square_sum"][1]


def test_token_noise_nodes_integrate_symmetric_polynomials_exactly():
    """The reduced product rule: weights sum to 1, E xi^4 = 3, E xi_1^2 xi_2^2 = 1, E xi^6 = 15 (5 nodes are exact to degree 9)."""
    x, counts, weights = token_noise_nodes(3, 5)
    assert counts.sum(axis=1).tolist() == [3.0] * len(weights) and len(weights) == 35  # C(5 + 3 - 1, 3)
    assert weights.sum() == pytest.approx(1.0, rel=1e-14)
    power_sums = {k: counts @ x**k / 3 for k in (2, 4, 6)}  # (1/V) sum_a xi_a^k on each multiset
    assert weights @ power_sums[4] == pytest.approx(3.0, rel=1e-13)
    assert weights @ power_sums[6] == pytest.approx(15.0, rel=1e-13)
    pair = (9 * power_sums[2] ** 2 - 3 * power_sums[4]) / 6  # mean of xi_a^2 xi_b^2 over the 3 pairs a < b
    assert weights @ pair == pytest.approx(1.0, rel=1e-13)
    assert weights @ power_sums[6] != pytest.approx(14.0, rel=1e-3)  # a wrong moment is told apart


def test_quadrature_row_averages_reduce_to_the_iid_quadrature_without_token_noise():
    """Same tau rule: aG and square_sum to rounding; target and square to the rule's accuracy (phi_moments_iid
    uses rows summing to one, the quadrature integrates the other keys' share, 1 - a_G to about 1e-8)."""
    for g, L in ((0.0, 8), (4.0, 40)):
        iid = row_averages_iid(g, 1.5, L, nodes=24, tau_points=200)
        quadrature = row_averages_quadrature(g, 0.0, 1.5, L, 4)
        moments = phi_moments_iid(iid["aG"], iid["square_sum"], 4)
        for key, value in {**iid, **moments}.items():
            assert quadrature[key] == pytest.approx(value, rel=1e-12 if key in iid else 1e-7), key


@pytest.mark.parametrize("g, token_variance, position_variance, L, V",
                         [(0.3, 1.8, 2.0, 8, 4), (3.3, 0.6, 1.3, 8, 4), (2.0, 1.2, 0.5, 6, 3)])
def test_quadrature_row_averages_equal_monte_carlo_and_need_the_token_sharing(g, token_variance, position_variance, L, V):
    """Within 4 standard errors of 400 000 Monte Carlo rows, converged in the token nodes (6 against 10), and the
    shared token noise matters: read as independent key noise of the same variance (no sharing) the class
    sums miss the Monte Carlo by more than 10 standard errors."""
    quadrature = row_averages_quadrature(g, token_variance, position_variance, L, V)
    fine = row_averages_quadrature(g, token_variance, position_variance, L, V, token_nodes=10, nodes=64,
                                   tau_points=1200)
    mc = row_averages_monte_carlo(g, token_variance, position_variance, RowNoise.draw(L, V, 400_000, 11), V)
    for key, (mean, error) in mc.items():
        assert quadrature[key] == pytest.approx(fine[key], rel=2e-5), key
        assert abs(quadrature[key] - mean) < 4 * error, (key, quadrature[key], mean, error)
    unshared = row_averages_iid(g, token_variance + position_variance, L, nodes=24, tau_points=200)
    unshared = {**unshared, **phi_moments_iid(unshared["aG"], unshared["square_sum"], V)}
    assert max(abs(unshared[key] - mc[key][0]) / mc[key][1] for key in ("square", "target")) > 10


def test_posterior_theory_rejects_unknown_row_averages():
    with pytest.raises(EmergenceError, match="unknown row averages"):
        PosteriorTheory(8, 4, averages="exact")
    with pytest.raises(EmergenceError, match="Monte Carlo only"):
        PosteriorTheory(8, 4, trial="row", averages="quadrature")


def test_monte_carlo_row_averages_converge():
    L, V = 16, 8
    small = row_averages_monte_carlo(2.0, 1.5, 1.5, RowNoise.draw(L, V, 4_000, 1), V)
    large = row_averages_monte_carlo(2.0, 1.5, 1.5, RowNoise.draw(L, V, 64_000, 2), V)
    for key in small:
        assert abs(small[key][0] - large[key][0]) < 4 * np.hypot(small[key][1], large[key][1])
        assert small[key][1] / large[key][1] == pytest.approx(4.0, rel=0.2)


def test_noiseless_free_energy_is_the_saddle_action():
    """t_u = t_v = 1 carries no entropy cost; with the noiseless row averages F is the step-5 action."""
    L, V, P = 32, 8, 700.0
    theory_numerics = PosteriorTheory(L, V, draws=10, trial="gauge")
    kernels = generated_kernels()
    for g in (0.5, 3.0, 6.0):
        a = np.exp(g) / (np.exp(g) + L - 1)
        square_sum = a**2 + (1 - a) ** 2 / (L - 1)
        averages = phi_moments_iid(a, square_sum, V)
        F = theory_numerics.free_energy(g, 1.0, 1.0, P, averages)
        saddle = kernels.softmax.softmax_action(a, P, L, V, theory_numerics.s, theory_numerics.lam, theory_numerics.beta)
        assert F == pytest.approx(float(saddle), rel=1e-10)
        wrong = F + (g**2 / (2 * theory_numerics.s))  # an L g^2 copy cost instead of (L - 1) g^2
        assert wrong != pytest.approx(float(saddle), rel=1e-6)


def test_posterior_free_energy_assembles_the_steps():
    """The SymPy F equals the numerics' F at a point (same row averages)."""
    F = theory.posterior_free_energy()
    L, V, P, g, t_u, t_v = 16, 4, 300.0, 2.0, 0.7, 0.9
    numerics = PosteriorTheory(L, V, draws=10, trial="gauge")
    averages = {"square": 0.35, "target": 0.4}
    values = {sp.Symbol("g", real=True): g, theory.t_u: t_u, theory.t_v: t_v, theory.row_square: 0.35,
              theory.row_target: 0.4, P_: P, L_: L, V_: V, theory.s_entry: numerics.s, lam_: numerics.lam,
              beta_: numerics.beta}
    assert numerics.free_energy(g, t_u, t_v, P, averages) == pytest.approx(float(F.subs(values)), rel=1e-10)


SGLD_UNIFORM_AG_L32 = {1014: 0.036, 1500: 0.036}
"""SGLD posterior means of a_G in the uniform mode at L = 32, V = 8 (docs/notes/validation_copy_head.md,
"SGLD on the marginal" and "posterior theory against the SGLD measurements"), printed to 3 digits."""


def test_posterior_theory_uniform_branch_carries_the_sampled_bulk_excess_at_L32():
    r"""Uniform pooling alone gives :math:`a_G = 1/L = 0.03125`; SGLD samples 0.036, an excess of 0.0048 that
    the bulk of :math:`W_{QK}` (the posterior theory's noise) has to produce.  The theory must land closer to
    the sample than 80 % of that excess: a uniform branch without the bulk (:math:`a_G = 1/L`) fails, as any
    value off by more than 0.0038.  (The old check, ``abs=0.02`` around 0.033, admitted 1/L itself.)
    Measured 2026-12-05: the theory gives 0.0327 and 0.0334 (within 0.0033 and 0.0026)."""
    L = 32
    numerics = PosteriorTheory(L, 8, draws=20_000, trial="gauge")
    for P, measured in SGLD_UNIFORM_AG_L32.items():
        tolerance = 0.8 * (measured - 1 / L)
        assert numerics.minimise(P, "uniform").aG == pytest.approx(measured, abs=tolerance), P


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="measured 2026-12-05: the theory has no copy mode at P = 1500 (its copy branch is "
                   "born between 1500 and 2200; transition() gives a_G 0.0334 from both starts there), while SGLD found one "
                   "at a_G 0.51; the copy branch at P >= 2200 (0.634, 0.733) does agree. Strict: a "
                   "theory that recovers the P = 1500 copy mode makes this test fail until the mark is removed.")
def test_posterior_theory_reproduces_the_sampled_copy_branch_at_L32():
    """SGLD on the marginal (docs/notes/validation_copy_head.md, L = 32, V = 8): copy mode 0.51, 0.62, 0.71 at
    P = 1500, 2200, 3300 (coverage 0.17 uniform); the uniform branch has its own test above."""
    numerics = PosteriorTheory(32, 8, draws=20_000, trial="gauge")
    for P, measured in ((1500, 0.51), (2200, 0.62), (3300, 0.71)):
        assert numerics.minimise(P, "copy").aG == pytest.approx(measured, abs=0.03)
    assert numerics.minimise(1014, "uniform").coverage == pytest.approx(0.17, abs=0.02)


def test_posterior_P_star_is_the_equal_free_energy_point_not_the_copy_mode_birth():
    """A coarse scan that steps over the coexistence window (the copy mode born between two grid
    points, already above the uniform one) must still return the equal-F point: at L = 12, V = 4 the
    birth is near P = 440 with F_copy - F_uniform about +7 nats there."""
    theory = PosteriorTheory(12, 4, draws=4000, trial="gauge")
    coarse = posterior_coexistence(theory, np.geomspace(20, 20_000, 16))
    fine = posterior_coexistence(theory, np.geomspace(380, 620, 14))
    assert fine == pytest.approx(coarse, rel=0.02)  # the Monte Carlo's branches followed from two grids
    uniform, copy = theory.minimise(coarse, "uniform"), theory.minimise(coarse, "copy")
    assert copy.aG - uniform.aG > 0.2  # two coexisting modes at P*
    assert abs(copy.free_energy - uniform.free_energy) < 0.5  # equal free energy (optimiser tolerances on F ~ 200)


@pytest.mark.slow
def test_quadrature_P_star_is_the_root_of_the_brute_force_free_energy_gap_at_L12():
    """The solver core's P* (start grid, Newton, the copy branch's birth, Brent) against a brute force: on a fine grid around it the
    uniform mode from its cold start and the copy mode followed down from the top point's cold start, the gap
    F_copy - F_uniform linear in ln P between the two points that bracket its sign change.  (L = 12: the copy
    mode is born about 1.5 % below P*, at L = 8 closer still.)  Agree within 0.1 % (the gap's slope is about
    -90 nats per unit ln P, so that is 0.09 nats); P* moved by 1 % would fail."""
    theory = PosteriorTheory(12, 4, averages="quadrature", trial="gauge")
    P_star = posterior_coexistence(theory, np.geomspace(20, 20_000, 16))
    grid = np.geomspace(P_star / 1.01, P_star * 1.01, 5)
    copy, gaps = None, {}
    for P in grid[::-1]:
        copy = theory.minimise(P, "copy", x0=None if copy is None else [copy.g, np.log(copy.t_u), np.log(copy.t_v)])
        uniform = theory.minimise(P, "uniform")
        assert copy.aG - uniform.aG > 0.2  # both modes exist across the grid
        gaps[P] = copy.free_energy - uniform.free_energy
    gap = [gaps[P] for P in grid]
    i = int(np.flatnonzero(np.diff(np.sign(gap)))[0])
    root = np.exp(np.interp(0.0, [gap[i + 1], gap[i]], [np.log(grid[i + 1]), np.log(grid[i])]))
    assert P_star == pytest.approx(root, rel=1e-3)
    assert P_star * 1.01 != pytest.approx(root, rel=1e-3)
