"""Replica exchange (parallel tempering over SGLD) samples the right law and crosses barriers.

What is shown: on a tilted 1-D double well with mode weights known by quadrature, replica exchange
recovers the weight of the upper mode within statistical error while plain SGLD started in one
well does not; on a Gaussian potential mean and variance match the exact values (the cold rung,
and the hot rung's T-scaled variance).  The copy-task comparison with an exact reference is in
tests/test_replica_exchange_copy_task.py.
"""

import pytest
import torch

from emergence.validation.samplers.diagnostics import mean_and_standard_error
from emergence.validation.samplers.replica_exchange import ReplicaExchange, ReplicaExchangeSettings, geometric_ladder

pytestmark = pytest.mark.usefixtures("one_torch_thread")

BARRIER, TILT = 10.0, 0.5


def double_well(x):
    r""":math:`U(x) = b(x^2-1)^2 + c\,x`: wells at :math:`x \approx \pm 1`, barrier ~ b, the right well higher by ~2c."""
    return BARRIER * (x**2 - 1) ** 2 + TILT * x


def exact_right_weight() -> float:
    grid = torch.linspace(-3, 3, 200_001, dtype=torch.float64)
    weight = torch.exp(-double_well(grid))
    return float(weight[grid > 0].sum() / weight.sum())


def right_mode_indicator(chains=128, rungs=4, hottest=10.0, burn_in=1000, draws=400, thin=10, seed=1):
    """(chains, draws) indicator x > 0 of the cold rung, every chain started in the left well."""
    temperatures = geometric_ladder(rungs, hottest)
    x = torch.nn.Parameter(-torch.ones(chains * rungs, 1, dtype=torch.float64))
    sampler = ReplicaExchange([x], lambda: double_well(x).sum(dim=1),
                              ReplicaExchangeSettings(temperatures.tolist(), chains, swap_every=5),
                              step_sizes=0.002 * temperatures.repeat(chains), generator=torch.Generator().manual_seed(seed))
    state = sampler.run(sampler.init(), burn_in)
    records = []
    for _ in range(draws):
        state = sampler.run(state, thin)
        records.append((x.detach()[sampler.cold_runs(), 0] > 0).double())
    return torch.stack(records, dim=1).numpy(), sampler.swap_acceptance()


def test_replica_exchange_recovers_double_well_mode_weights_plain_sgld_does_not():
    exact = exact_right_weight()
    assert 0.2 < exact < 0.35  # the tilt makes the weights unequal, and the test informative
    indicator, acceptance = right_mode_indicator()
    weight, error = mean_and_standard_error(indicator)
    assert abs(weight - exact) < 4 * error, (weight, error, exact)
    assert error < 0.03
    assert bool((acceptance > 0.2).all()), acceptance
    # one ladder of a single rung is plain SGLD: it stays in the starting well
    plain, _ = right_mode_indicator(rungs=1)
    plain_weight, plain_error = mean_and_standard_error(plain)
    assert abs(plain_weight - exact) > 4 * max(plain_error, error), (plain_weight, plain_error, exact)


def test_ladder_without_the_hot_rungs_fails_the_weight_check():
    """The check can fail: a ladder capped at T = 1.5 does not cross the barrier in the same budget."""
    exact = exact_right_weight()
    indicator, _ = right_mode_indicator(rungs=2, hottest=1.5)
    weight, error = mean_and_standard_error(indicator)
    assert abs(weight - exact) > 4 * error


def test_gaussian_potential_mean_and_variance_are_exact_on_every_rung():
    """U = sum_i x_i^2 / (2 v_i): the rung at T samples N(0, T v_i) (SGLD bias 1/(1 - eps h/4) corrected)."""
    variances = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    chains, rungs = 200, 3
    temperatures = geometric_ladder(rungs, 4.0)
    x = torch.nn.Parameter(torch.zeros(chains * rungs, 3, dtype=torch.float64))
    kappa = 0.1  # eps h = kappa for the stiffest coordinate on every rung
    step = kappa * variances.min() * temperatures.repeat(chains)
    sampler = ReplicaExchange([x], lambda: (x**2 / (2 * variances)).sum(dim=1),
                              ReplicaExchangeSettings(temperatures.tolist(), chains, swap_every=3),
                              step_sizes=step, generator=torch.Generator().manual_seed(3))
    state = sampler.run(sampler.init(), 300)
    records = []
    for _ in range(300):
        state = sampler.run(state, 5)
        records.append(x.detach().clone().reshape(chains, rungs, 3))
    samples = torch.stack(records, dim=1).numpy()  # (chains, draws, rungs, 3)
    for k, T in enumerate(temperatures.tolist()):
        for i, v in enumerate(variances.tolist()):
            eps_h = kappa * variances.min().item() / v
            exact_variance = T * v / (1 - eps_h / 4)
            values = samples[:, :, k, i]
            mean, mean_error = mean_and_standard_error(values)
            second, second_error = mean_and_standard_error(values**2)
            assert abs(mean) < 4 * mean_error, (k, i, mean, mean_error)
            assert abs(second - exact_variance) < 4 * second_error, (k, i, second, exact_variance, second_error)
    assert bool((sampler.swap_acceptance() > 0.1).all())


def test_swaps_keep_the_product_law_on_a_ladder_of_copies():
    """Equal temperatures: every swap is accepted (log ratio 0), and states are exchanged, not lost."""
    x = torch.nn.Parameter(torch.arange(6, dtype=torch.float64)[:, None])
    sampler = ReplicaExchange([x], lambda: (x**2).sum(dim=1),
                              ReplicaExchangeSettings((1.0, 1.0 + 1e-12, 1.0 + 2e-12), chains=2, swap_every=1),
                              step_sizes=1e-30)
    state, moved = sampler.swap(sampler.init())
    assert moved and torch.equal(state.tempered, (x.detach() ** 2).sum(dim=1))  # the state follows the swap
    assert sorted(x.detach()[:, 0].round().tolist()) == [0, 1, 2, 3, 4, 5]
    assert x.detach()[:, 0].round().tolist() == [1, 0, 2, 4, 3, 5]
    assert sampler.swap_acceptance()[0].item() == 1.0  # exact by design: accepted / proposed counts


def test_invalid_ladders_are_rejected():
    x = torch.nn.Parameter(torch.zeros(4, 1))
    with pytest.raises(ValueError):
        ReplicaExchangeSettings((2.0, 1.0), chains=2)
    with pytest.raises(ValueError):
        ReplicaExchange([x], lambda: x.sum(dim=1), ReplicaExchangeSettings((1.0, 2.0), chains=3), step_sizes=0.1)
    with pytest.raises(ValueError):
        geometric_ladder(3, 0.5)


def test_likelihood_tempering_samples_prior_times_tempered_likelihood():
    """U_0 = x^2/2 (prior), U_1 = 2 (x - 1)^2 (likelihood): rung T samples N(mean, 1/(1 + 4/T)), T < 1 included."""
    chains = 300
    temperatures = torch.tensor([0.5, 1.0, 2.0, 4.0], dtype=torch.float64)
    rungs = temperatures.numel()
    x = torch.nn.Parameter(torch.zeros(chains * rungs, 1, dtype=torch.float64))
    sampler = ReplicaExchange([x], lambda: (0.5 * (x**2).sum(1), 2.0 * ((x - 1) ** 2).sum(1)),
                              ReplicaExchangeSettings(temperatures.tolist(), chains, swap_every=3),
                              step_sizes=0.01, generator=torch.Generator().manual_seed(5))
    state = sampler.run(sampler.init(), 400)
    records = []
    for _ in range(200):
        state = sampler.run(state, 5)
        records.append(x.detach().clone().reshape(chains, rungs))
    samples = torch.stack(records, dim=1).numpy()
    for k, T in enumerate(temperatures.tolist()):
        precision = 1 + 4 / T
        mean, error = mean_and_standard_error(samples[:, :, k])
        assert abs(mean - (4 / T) / precision) < 4 * error + 0.01, (T, mean)
        second, second_error = mean_and_standard_error((samples[:, :, k] - (4 / T) / precision) ** 2)
        assert abs(second - 1 / precision) < 4 * second_error + 0.01 / precision, (T, second)
    assert sampler.cold_runs().tolist()[:2] == [1, 5]


def test_a_ladder_without_the_target_temperature_is_rejected():
    with pytest.raises(ValueError):
        ReplicaExchangeSettings((1.5, 2.0), chains=2)


def test_the_state_is_the_recomputed_one_and_each_move_takes_one_gradient():
    """After every step (moves and swaps) the state's potentials and gradient equal a recomputation at the
    parameters, bit for bit; a move takes one gradient and a swap round that moved a configuration one more."""
    chains, temperatures = 4, geometric_ladder(3, 4.0)
    x = torch.nn.Parameter(torch.randn(chains * 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))
    sampler = ReplicaExchange([x], lambda: (0.5 * (x**2).sum(1), ((x**2 - 1) ** 2).sum(1)),
                              ReplicaExchangeSettings(temperatures.tolist(), chains, swap_every=2),
                              step_sizes=0.05, generator=torch.Generator().manual_seed(1))
    state = sampler.init()
    taken, swapped = 1, 0
    for _ in range(20):
        state, info = sampler.step(state)
        taken, swapped = taken + info.gradients, swapped + info.swapped
        fresh = ReplicaExchange([x], sampler.potential, sampler.settings, step_sizes=0.05).init()
        assert torch.equal(state.tempered, fresh.tempered) and torch.equal(state.untempered, fresh.untempered)
        assert torch.equal(state.gradients[0], fresh.gradients[0])
    assert swapped > 0 and sampler.gradient_evaluations == taken == 1 + 20 + swapped
