"""The copy-task free-energy pieces: a_G as a differentiable collective variable, the theory's profile,
the readout-marginal HMC against the joint one, and the verdict's failure modes."""

import math

import numpy as np
import pytest
import torch

from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.copy_task.posterior_free_energy import free_energy_agreement, root_in_log_P

pytestmark = pytest.mark.usefixtures("one_torch_thread")
SOFTMAX = CopyTaskConvention.parse("", attention="softmax")


def _model(runs=3, L=5, V=3, P=7, seed=0):
    batch = copy_task_batch([P] * runs, L, V, list(range(runs)))
    model = CopyAttentionModel(runs, L, V, SOFTMAX)
    with torch.no_grad():
        model.logit_weights.copy_(torch.randn(model.logit_weights.shape, generator=torch.Generator().manual_seed(seed),
                                              dtype=torch.float64))
    return model, batch


def test_previous_token_attention_matches_the_dense_attention_and_its_gradient():
    model, batch = _model()
    L = model.L
    fast = model.previous_token_attention(batch)
    rows = torch.arange(L)
    A = model.attention(batch)  # dense (N, L, L)
    dense = torch.zeros(model.runs, dtype=A.dtype).index_add(0, batch.run, A[:, rows, (rows - 1) % L].mean(-1)) / batch.counts
    eps = torch.finfo(torch.float64).eps
    # O(1) entries from a softmax over L keys and a mean of P*L of them: 8 L ulps is ample
    assert torch.allclose(fast, dense, rtol=0, atol=8 * L * eps)
    g_fast = torch.autograd.grad(fast.sum(), model.logit_weights)[0]
    g_dense = torch.autograd.grad(dense.sum(), model.logit_weights)[0]
    assert torch.allclose(g_fast, g_dense, rtol=0, atol=64 * L * eps * float(g_dense.abs().max()))


def test_previous_token_attention_refuses_other_models():
    from emergence.base.errors import EmergenceError

    model = CopyAttentionModel(1, 4, 2, CopyTaskConvention.parse("", attention="linear"))
    with pytest.raises(EmergenceError):
        model.previous_token_attention(copy_task_batch([3], 4, 2, [0]))


def test_theory_profile_meets_its_constraint_and_its_minimum_is_the_mode():
    from emergence.numerics.copy_head.posterior import PosteriorTheory

    theory = PosteriorTheory(8, 4, draws=2000)
    P = 130.0
    mode = theory.minimise(P, "uniform")
    grid = mode.aG + np.array([-0.04, 0.0, 0.04])
    profile = theory.profile(P, grid)
    for a, g, t_u, t_v in zip(grid, profile["g"], profile["t_u"], profile["t_v"]):
        assert abs(theory.row_averages(g, t_u, t_v)["aG"] - a) < 1e-5  # brentq's xtol on g, times d aG / d g < 1
    # the unconstrained mode sits at the middle grid point: the profile is lowest there, and its F is the mode's
    assert np.argmin(profile["F"]) == 1
    raw = theory.free_energy(profile["g"][1], profile["t_u"][1], profile["t_v"][1], P)
    assert abs(raw - mode.free_energy) < 0.02  # Nelder-Mead's fatol and the mode's own optimiser tolerance


@pytest.mark.slow  # 60-90 s on 2 cores
def test_readout_marginal_hmc_matches_the_joint_posterior_at_the_smallest_size():
    """HMC on S_r(W_QK) (readout integrated out) and on the joint U(W_QK, W): the same a_G moments."""
    from emergence.validation.samplers.diagnostics import mean_and_standard_error
    from emergence.validation.samplers.adaptation import adapt_and_sample
    from emergence.validation.samplers.hmc import HMC, HMCSettings

    L, V, P, chains = 4, 2, 6, 8
    batch = copy_task_batch([P] * chains, L, V, [5] * chains)
    results = {}
    for objective in ("marginal", "joint"):
        model = CopyAttentionModel(chains, L, V, SOFTMAX)
        parameters = [model.logit_weights] + ([model.readout] if objective == "joint" else [])
        potential = model.marginal_potential if objective == "marginal" else model.potential
        sampler = HMC(parameters, lambda: potential(batch), HMCSettings(step_size=0.2, leapfrog_steps=10),
                      generator=torch.Generator().manual_seed(11))
        draws = adapt_and_sample(sampler, 150, 700,
                                 lambda: {"aG": model.previous_token_attention(batch).detach()})
        results[objective] = mean_and_standard_error(draws["aG"].numpy())
    (m1, e1), (m2, e2) = results["marginal"], results["joint"]
    assert abs(m1 - m2) < 4 * math.hypot(e1, e2), results
    assert math.hypot(e1, e2) < 0.02


def _theory_point(delta_F, uniform=0.07, copy=0.55, coexistence=True, aG_mean=0.3):
    return {"delta_F": delta_F, "basin_aG": {"uniform": uniform, "copy": copy}, "coexistence": coexistence,
            "aG_mean": aG_mean}


def _measured(delta_F, basins=((0.08, 0.54),) * 3, converged=(True,) * 3, error=0.3, aG_mean=(0.3,) * 3):
    P = [200, 400, 800]
    value = root_in_log_P(P, delta_F)
    return {"P": P, "delta_F": list(delta_F), "delta_F_error": [error] * 3, "delta_F_bound": [None] * 3,
            "converged": list(converged),
            "basin_aG": [{"uniform": u, "copy": c} for u, c in basins], "aG_mean": list(aG_mean),
            "P_star": None if value is None else {"value": value, "error": 10.0}}


PREDICTED = {"P_star": 400.0, "points": [_theory_point(2.0), _theory_point(0.0), _theory_point(-2.0)]}


def test_free_energy_agreement_passes_on_matching_profiles():
    agreement = free_energy_agreement(_measured([2.2, 0.1, -1.8]), PREDICTED)
    assert agreement["passes"], agreement["reasons"]
    assert 1.0 < agreement["P_star_ratio"] < 1.1


@pytest.mark.parametrize("measured, reason", [
    (_measured([2.2, 0.1, -1.8], converged=(True, False, True)), "diagnostics not met"),
    (_measured([2.2, 0.1, -1.8], basins=((0.08, 0.54), (None, 0.54), (0.08, 0.54))), "no measured uniform basin"),
    (_measured([2.2, 0.1, -1.8], basins=((0.15, 0.54),) * 3), "basin a_G off"),
    (_measured([4.0, 0.1, -1.8]), "Delta F 4.0"),
    (_measured([5.0, 4.0, 2.5]), "no measured P*"),
    (_measured([5.0, 3.0, -1.0]), "Delta F"),
])
def test_free_energy_agreement_fails_with_a_reason(measured, reason):
    agreement = free_energy_agreement(measured, PREDICTED)
    assert not agreement["passes"]
    assert any(reason in text for text in agreement["reasons"]), agreement["reasons"]


def test_a_planted_wrong_P_star_fails():
    planted = {**PREDICTED, "P_star": 400.0 * 1.5}
    agreement = free_energy_agreement(_measured([2.2, 0.1, -1.8]), planted)
    assert not agreement["passes"] and any("P* ratio" in text for text in agreement["reasons"])


def test_a_continuous_crossover_compares_the_posterior_means():
    continuous = {"P_star": 400.0, "points": [_theory_point(d, coexistence=False, aG_mean=m)
                                              for d, m in ((2.0, 0.15), (0.0, 0.4), (-2.0, 0.6))]}
    good = _measured([2.2, 0.1, -1.8], aG_mean=(0.16, 0.42, 0.58))
    assert free_energy_agreement(good, continuous)["passes"]
    bad = _measured([2.2, 0.1, -1.8], aG_mean=(0.16, 0.52, 0.58))
    assert any("posterior mean a_G" in text for text in free_energy_agreement(bad, continuous)["reasons"])


def test_bulk_variance_ratios_are_one_under_the_prior_and_blind_to_gauge_and_copy_pattern():
    from emergence.numerics.order_parameters import cyclic_shift
    from emergence.validation.copy_task.free_energy import bulk_variance_ratios

    V, L, R, s = 4, 8, 4000, 2.0
    W = math.sqrt(s) * torch.randn(R, V + L, V + L, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    prior = bulk_variance_ratios(W, V, s)
    # each mean over 4000 draws of a chi-square ratio with >= 36 degrees of freedom: standard error < 0.004
    assert abs(float(prior["t_u"].mean()) - 1) < 0.02 and abs(float(prior["t_v"].mean()) - 1) < 0.02
    # the copy diagonal: L - 1 = 7 degrees of freedom per draw, standard error of the mean 0.0085
    assert abs(float(prior["t_copy"].mean()) - 1) < 0.04
    shifted = W.clone()
    shifted[:, V:, V:] += 3.0 * torch.as_tensor(cyclic_shift(L), dtype=W.dtype)
    shifted[:, :V, :] += 5.0  # a constant per query row: a softmax gauge
    moved = bulk_variance_ratios(shifted, V, s)
    eps = torch.finfo(torch.float64).eps
    for key in ("t_u", "t_v", "t_copy"):
        assert torch.allclose(moved[key], prior[key], rtol=0, atol=1e3 * eps)  # sums of ~150 squares of O(10) entries
    assert abs(float(moved["g"].mean() - prior["g"].mean()) - 3.0) < 1e-12
    halved = bulk_variance_ratios(W / math.sqrt(2), V, s)
    assert abs(float(halved["t_u"].mean()) - 0.5) < 0.01  # a variance change is seen
    loose_diagonal = W.clone()
    rows = torch.arange(L)
    loose_diagonal[:, V + rows, V + (rows - 1) % L] *= math.sqrt(2)  # only the copy diagonal doubles its variance
    loose = bulk_variance_ratios(loose_diagonal, V, s)
    # row centring spreads the doubled entry over its row: Var d_i = s (L - 1)(2L - 1)/L^2, t_copy = (2L - 1)/L
    # while t_v, where those L entries are 8 of 95 degrees of freedom, hardly sees it: why t_copy is measured apart
    assert abs(float(loose["t_copy"].mean()) - (2 * L - 1) / L) < 0.08 and float(loose["t_v"].mean()) < 1.1


def test_the_fused_pass_gives_the_marginal_action_and_a_G_of_the_separate_ones():
    model, batch = _model(seed=3)
    action, aG = model.marginal_potential_and_previous_attention(batch)
    eps = torch.finfo(torch.float64).eps
    # the same operations in the same order on the same tables: equal up to a few ulps of the O(100) action
    separate = model.marginal_potential(batch)
    assert torch.allclose(action, separate, rtol=16 * eps, atol=0)
    assert torch.allclose(aG, model.previous_token_attention(batch), rtol=0, atol=4 * eps)


def test_an_empty_basin_bounds_delta_F_and_the_theory_must_lie_beyond_the_bound():
    far = {"P_star": 400.0, "points": [_theory_point(2.0), _theory_point(0.0), _theory_point(-56.6)]}
    near = {"P_star": 400.0, "points": [_theory_point(2.0), _theory_point(0.0), _theory_point(-3.0)]}
    measured = _measured([2.2, 0.1, -math.inf])
    measured["delta_F_bound"][2] = math.log(4000)  # 4000 draws: |Delta F| > 8.3
    assert free_energy_agreement(measured, far)["passes"]
    failed = free_energy_agreement(measured, near)
    assert not failed["passes"] and any("Delta F -inf" in reason for reason in failed["reasons"])


@pytest.mark.parametrize("multiple", [2, 3])
def test_the_self_averaging_probe_is_a_likelihood_temperature(multiple):
    """k copies of the same P sequences at beta_0 / k give the marginal action of the P sequences at beta_0:
    the identity behind ``data_multiple`` (validation/copy_task/free_energy.py).  A wrong power of the weight fails."""
    from dataclasses import replace

    from emergence.validation.copy_task.data import CopyTaskBatch

    model, batch = _model(seed=5)
    repeated = CopyTaskBatch(batch.tokens.repeat(multiple, 1), batch.targets.repeat(multiple, 1, 1),
                             batch.run.repeat(multiple), batch.counts * multiple, batch.V)
    tempered = CopyAttentionModel(model.runs, model.L, model.V, replace(SOFTMAX, beta0=SOFTMAX.beta0 / multiple))
    with torch.no_grad():
        tempered.logit_weights.copy_(model.logit_weights)
    exact, probe = model.marginal_potential(batch), tempered.marginal_potential(repeated)
    eps = torch.finfo(torch.float64).eps
    # actions of O(10-100) from sums of O(P L V) terms and one Cholesky factor of a 3 x 3 matrix
    assert torch.allclose(probe, exact, rtol=1e3 * eps, atol=0)
    wrong = CopyAttentionModel(model.runs, model.L, model.V, replace(SOFTMAX, beta0=SOFTMAX.beta0 / multiple**2))
    with torch.no_grad():
        wrong.logit_weights.copy_(model.logit_weights)
    assert not torch.allclose(wrong.marginal_potential(repeated), exact, rtol=1e-3, atol=0)


def test_the_stopping_rule_holds_only_where_every_window_meets_the_diagnostics():
    from emergence.validation.copy_task.free_energy import diagnostics_stopping_rule, windows_converged

    rng = np.random.default_rng(0)
    independent = torch.as_tensor(rng.normal(size=(3 * 4, 400)))  # 3 windows x 4 chains: ESS about 1600 each
    assert windows_converged(independent, 3)
    split = independent.clone()
    split[4] += 1.0  # window 1's first chain sits apart: R-hat > 1.01
    assert not windows_converged(split, 3)
    assert not windows_converged(independent[:, :90], 3)  # 4 x 90 draws cannot reach ESS 400
    softmax = {"attention": "softmax", "first_draws": 200, "draws": 400}
    assert diagnostics_stopping_rule(softmax, 3).first == 200
    for off in ({"first_draws": 0}, {"first_draws": 400}, {"attention": "linear"}):
        assert diagnostics_stopping_rule({**softmax, **off}, 3) is None


def test_a_point_that_misses_the_diagnostics_draws_to_its_cap_and_is_not_converged():
    from emergence.validation.copy_task.free_energy import run_free_energy_point, umbrella_point_config

    config = umbrella_point_config(4, 2, 6, SOFTMAX, seed=3, centres=[0.1, 0.3, 0.5], chains=2, warmup=10, draws=24,
                                   first_draws=4, leapfrog=4, min_overlap=0.0)
    result = run_free_energy_point(config)
    assert result["draws"] == 24 and result["samples"] == 3 * 2 * 24
    assert not result["converged"]


def test_each_window_keeps_its_own_stiffness_and_its_centre():
    """``kappa`` one per window: the pairs are sorted by centre together, a stiff window holds a_G at its centre
    and a soft one lets it spread; a list of the wrong length is refused."""
    from emergence.validation.copy_task.free_energy import sample_windows, umbrella_point_config, window_stiffness

    config = umbrella_point_config(4, 2, 6, SOFTMAX, seed=3, centres=[0.5, 0.2], kappa=[1.0, 1e4], chains=2,
                                   warmup=30, draws=30, first_draws=0, leapfrog=4, min_overlap=0.0)
    assert config["centres"] == [0.2, 0.5] and config["kappa"] == [1e4, 1.0]
    sampled = sample_windows(config, config["centres"], config["kappa"])
    aG = sampled["samples"]["aG"].numpy().reshape(2, -1)  # (windows, chains * draws)
    stiff, soft = aG
    assert abs(stiff.mean() - 0.2) < 0.02 and stiff.std() < 0.02, (stiff.mean(), stiff.std())  # 1/sqrt(1e4) = 0.01
    assert soft.std() > 2 * stiff.std(), (soft.std(), stiff.std())
    with pytest.raises(ValueError, match="one stiffness per window"):
        window_stiffness([1.0, 2.0], 3)
