"""HMC (validation/samplers/hmc.py): exact Gaussian moments, and a wrong acceptance rule that fails them."""

import math
import re

import numpy as np
import pytest
import torch

from emergence.validation.samplers.diagnostics import mean_and_standard_error
from emergence.validation.samplers.adaptation import StoppingRule, adapt_and_sample
from emergence.validation.samplers.hmc import HMC, HMCSettings

VARIANCES = torch.tensor([0.01, 1.0, 25.0], dtype=torch.float64)
"""An anisotropic Gaussian (condition number 2500): the step size alone cannot fit every direction."""


def gaussian_draws(sampler_class=HMC, chains=8, warmup=200, draws=400, seed=0, step_size=0.05):
    theta = torch.nn.Parameter(torch.zeros(chains, 3, dtype=torch.float64))
    sampler = sampler_class([theta], lambda: 0.5 * (theta**2 / VARIANCES).sum(-1),
                            HMCSettings(step_size=step_size, leapfrog_steps=10), generator=torch.Generator().manual_seed(seed))
    result = adapt_and_sample(sampler, warmup, draws, lambda: {"x": theta.detach().clone()})
    return result["x"].numpy(), result  # (chains, draws, 3)


def variance_z_scores(x):
    """z of each coordinate's sample variance against the truth, with the ESS-based error of x^2's mean."""
    scores = []
    for k, truth in enumerate(VARIANCES.tolist()):
        mean, error = mean_and_standard_error(x[..., k] ** 2)
        scores.append((mean - truth) / error)
    return np.array(scores)


def test_hmc_samples_an_anisotropic_gaussian_exactly():
    x, result = gaussian_draws()
    scores = variance_z_scores(x)
    assert np.all(np.abs(scores) < 4.5), scores
    # the mass matrix learnt the scales: the adapted step size is O(1) in whitened units, acceptance near 0.8
    assert 0.6 < float(result["acceptance"].mean()) < 0.97


class AlwaysAccept(HMC):
    """A broken sampler: every leapfrog proposal is accepted (no Metropolis test)."""

    def log_acceptance(self, start_energy, end_energy):
        return torch.zeros_like(start_energy)


class WrongSignAcceptance(HMC):
    """A broken sampler: the energy difference enters with the wrong sign."""

    def log_acceptance(self, start_energy, end_energy):
        return (end_energy - start_energy).clamp(max=0.0)


@pytest.mark.parametrize("broken", [AlwaysAccept, WrongSignAcceptance])
def test_a_wrong_acceptance_rule_fails_the_gaussian_moments(broken):
    # whitened coordinates, fixed large step 1.2 (leapfrog stable below 2): the always-accepted
    # leapfrog law has variance 1/(1 - eps^2/4) ≈ 1.56x; only the Metropolis test keeps the exact law
    theta = torch.nn.Parameter(torch.zeros(8, 3, dtype=torch.float64))
    x_right, x_wrong = [], []
    for sampler_class, out in ((HMC, x_right), (broken, x_wrong)):
        theta.data.zero_()
        sampler = sampler_class([theta], lambda: 0.5 * (theta**2 / VARIANCES).sum(-1),
                                HMCSettings(step_size=1.2, leapfrog_steps=10), inverse_mass=[VARIANCES.expand(8, 3).clone()],
                                generator=torch.Generator().manual_seed(1))
        state = sampler.init()
        for _ in range(600):
            state, _ = sampler.step(state)
            out.append(theta.detach().clone())
    right = torch.stack(x_right, 1)[:, 100:].numpy()
    wrong = torch.stack(x_wrong, 1)[:, 100:].numpy()
    assert np.all(np.abs(variance_z_scores(right)) < 4.5)
    assert np.max(np.abs(variance_z_scores(wrong))) > 6


def test_non_finite_energies_are_rejected():
    theta = torch.nn.Parameter(torch.ones(2, 1, dtype=torch.float64))
    sampler = HMC([theta], lambda: torch.where(theta[:, 0] > 1.0, math.inf, 0.5 * theta[:, 0] ** 2),
                  HMCSettings(step_size=0.1, leapfrog_steps=3), generator=torch.Generator().manual_seed(0))
    state, info = sampler.step(sampler.init())
    assert info.acceptance_probability.shape == (2,)
    assert torch.all(torch.isfinite(theta)) and torch.all(torch.isfinite(state.potential))


def test_each_trajectory_takes_leapfrog_steps_gradients_and_keeps_the_one_it_ends_with():
    """The state's gradient is the recomputed one, bit for bit, so a trajectory needs no gradient at its start."""
    start = torch.randn(4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2)) * VARIANCES.sqrt()
    theta = torch.nn.Parameter(start)
    calls = []

    def potential():
        calls.append(1)
        return 0.5 * (theta**2 / VARIANCES).sum(-1) + 0.05 * torch.cos(theta / VARIANCES.sqrt()).sum(-1)

    # whitened by the mass, step 1.2 (stable below 2): about half the trajectories accepted
    sampler = HMC([theta], potential, HMCSettings(step_size=1.2, leapfrog_steps=7),
                  inverse_mass=[VARIANCES.expand(4, 3).clone()], generator=torch.Generator().manual_seed(4))
    state = sampler.init()
    accepted = []
    for _ in range(20):
        state, info = sampler.step(state)
        accepted.append(info.accepted)
        fresh = sampler.init()  # a recomputation at the parameters the step left
        assert torch.equal(state.potential, fresh.potential) and torch.equal(state.gradients[0], fresh.gradients[0])
    accepted = torch.stack(accepted)
    assert accepted.any() and not accepted.all()  # both branches of the kept state were exercised
    assert len(calls) == 1 + 20 * 7 + 20 and sampler.gradient_evaluations == len(calls)  # init, 7 per step, checks


def test_info_reports_the_energy_error_behind_the_acceptance():
    theta = torch.nn.Parameter(torch.ones(6, 3, dtype=torch.float64))
    sampler = HMC([theta], lambda: 0.5 * (theta**2 / VARIANCES).sum(-1), HMCSettings(step_size=0.05, leapfrog_steps=5),
                  generator=torch.Generator().manual_seed(0))
    _, info = sampler.step(sampler.init())
    expected = torch.exp(-info.energy_error).clamp(max=1.0)
    assert torch.allclose(info.acceptance_probability, expected, rtol=4 * torch.finfo(torch.float64).eps, atol=0)
    assert info.gradients == 5


@pytest.mark.parametrize("settings, message", [
    ({"step_size": 0.0}, "positive finite step size"),
    ({"step_size": math.nan}, "positive finite step size"),
    ({"leapfrog_steps": 0}, "leapfrog_steps >= 1"),
    ({"leapfrog_steps": 2.5}, "leapfrog_steps >= 1"),
    ({"target_acceptance": 1.0}, "target acceptance in (0, 1)"),
])
def test_settings_refuse_values_that_cannot_run(settings, message):
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        HMCSettings(**settings)
    assert "\n" not in str(error.value)


def _draws_taken(stop, draws=300):
    theta = torch.nn.Parameter(torch.zeros(2, 1, dtype=torch.float64))
    sampler = HMC([theta], lambda: 0.5 * (theta**2).sum(-1), HMCSettings(step_size=0.5, leapfrog_steps=3),
                  generator=torch.Generator().manual_seed(0))
    return adapt_and_sample(sampler, 10, draws, lambda: {"x": theta[:, 0].detach().clone()}, stop=stop)["x"].shape[1]


def test_a_stopping_rule_stops_at_its_first_look_that_holds_and_never_past_the_draws():
    looked = []

    def after_150(recorded):
        looked.append(recorded["x"].shape[1])
        return recorded["x"].shape[1] >= 150

    assert _draws_taken(StoppingRule(100, 25, after_150)) == 150
    assert looked == [100, 125, 150]  # the rule sees every draw recorded so far, at its looks only
    assert _draws_taken(StoppingRule(100, 25, lambda recorded: False)) == 300  # never met: the full run
    assert _draws_taken(StoppingRule(100, 25, lambda recorded: True), draws=80) == 80  # first look past the end
    assert _draws_taken(None) == 300
    with pytest.raises(ValueError, match="first >= 1"):
        StoppingRule(0, 25, after_150)


PREVIOUS_CHAIN = [  # the last of 30 trajectories by the sampler before the kernel (it recomputed each start gradient)
    ["-0x1.51113a300dd54p-4", "0x1.3aee831d4ba40p-1", "-0x1.d8dfa1555a28ep+2"],
    ["0x1.4d05b033f734fp-5", "0x1.6bff5e3bd2950p-1", "-0x1.3301e3ccbe840p+2"],
    ["-0x1.d8b7a7901bf27p-4", "0x1.ee22efe20f943p-2", "-0x1.575367d61a40cp+1"],
    ["-0x1.b768b954cedbbp-4", "-0x1.840f0deb7b3cep-2", "0x1.55816cb3bcf9ep+1"],
]


def test_the_saved_gradient_leaves_the_chain_bit_for_bit_and_saves_one_gradient_per_trajectory():
    """30 trajectories of 12 leapfrog steps from a fixed seed: the same draws, to the last bit, as the sampler that
    recomputed the start gradient of every trajectory (it took 1 + 12 = 13 gradients a trajectory, 390 in all; the
    kernel takes 12, plus one at init).  The potential is a quartic summed in a fixed order (elementwise operations
    only), so the draws do not depend on a machine's reduction kernels."""
    theta = torch.nn.Parameter(torch.randn(4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
                               * VARIANCES.sqrt())
    calls = []

    def potential():
        calls.append(1)
        x = theta / VARIANCES.sqrt()
        return 0.5 * (x[:, 0] ** 2 + x[:, 1] ** 2 + x[:, 2] ** 2) + 0.05 * (x[:, 0] ** 4 + x[:, 1] ** 4 + x[:, 2] ** 4)

    sampler = HMC([theta], potential, HMCSettings(step_size=1.0, leapfrog_steps=12),
                  inverse_mass=[VARIANCES.expand(4, 3).clone()], generator=torch.Generator().manual_seed(4))
    state = sampler.init()
    accepted = []
    for _ in range(30):
        state, info = sampler.step(state)
        accepted.append(info.accepted)
    assert [[value.hex() for value in row] for row in theta.detach().tolist()] == PREVIOUS_CHAIN
    assert torch.stack(accepted).any() and not torch.stack(accepted).all()
    assert len(calls) == 1 + 30 * 12  # the previous sampler: 30 * 13 = 390
