"""Replica exchange between umbrella windows (validation/samplers/window_exchange.py) and window placement from the
measured overlaps (validation/samplers/window_placement.py)."""

import math

import numpy as np
import pytest
import tilted_double_well
import torch

from emergence.validation.samplers import window_exchange
from emergence.validation.samplers.diagnostics import rhat_and_bulk_ess
from emergence.validation.samplers.adaptation import adapt_and_sample
from emergence.validation.samplers.hmc import HMC, HMCSettings
from emergence.validation.samplers.umbrella import free_energy_profile
from emergence.validation.samplers.window_exchange import WindowExchange, WindowExchangeSettings
from emergence.validation.samplers.window_placement import PlacementSettings, place_windows, refine_windows

pytest.importorskip("pymbar", reason="umbrella sampling needs the bayes extra")
pytest.importorskip("arviz", reason="R-hat needs the bayes extra")

BARRIER, COUPLING, TILT = 12.0, 2.0, 1.0
CENTRES = np.linspace(-2.0, 2.0, 17)
KAPPA = 30.0
CHAINS = 8


def potential(x, y, exp=np.exp):
    r"""A double well in a hidden coordinate :math:`y`, the windows on :math:`x`:
    :math:`U = 2x^2 + t x + (1 + (B - 1)e^{-x^2})(y^2 - 1)^2 + g x y`.  The barrier between :math:`y = \pm 1`
    is about 11 nats where :math:`|x| < 0.5` and 2 nats at the end windows :math:`|x| = 2`; the coupling makes the
    well :math:`y = -\operatorname{sign} x` the lower one, so a chain held in the wrong well shifts the profile."""
    return 2 * x**2 + TILT * x + (1 + (BARRIER - 1) * exp(-x**2)) * (y**2 - 1) ** 2 + COUPLING * x * y


def exact_delta_F() -> float:
    """-ln(P(x >= 0) / P(x < 0)) by quadrature of e^{-U} (trapezoid, 2001 x 2001 points on [-5, 5] x [-3, 3])."""
    x, y = np.linspace(-5.0, 5.0, 2001), np.linspace(-3.0, 3.0, 2001)
    marginal = np.trapezoid(np.exp(-potential(x[:, None], y[None, :])), y, axis=1)
    return float(-np.log(np.trapezoid(marginal * (x >= 0), x) / np.trapezoid(marginal * (x < 0), x)))


def wrong_well_mass(centre: float) -> float:
    """P(y < 0) in the window at ``centre`` (exact, by quadrature): the mass of the well the chains do not start in."""
    x, y = np.linspace(-5.0, 5.0, 1001), np.linspace(-3.0, 3.0, 1201)
    weight = np.exp(-potential(x[:, None], y[None, :]) - 0.5 * KAPPA * (x[:, None] - centre) ** 2)
    return float(weight[:, y < 0].sum() / weight.sum())


def sample_hidden_double_well(exchange_every: int | None, seed: int = 3, hidden: bool = False,
                              draws: int = 1000, centres: np.ndarray = CENTRES) -> tuple[np.ndarray, WindowExchange | None]:
    """HMC in every window (``centres``, stiffness ``KAPPA``), each chain started at (its window's centre, y = +1),
    with or without window exchange: draws of x (or, with ``hidden``, of y), shape (K, chains, draws)."""
    runs = torch.tensor(np.repeat(centres, CHAINS), dtype=torch.float64)
    theta = torch.nn.Parameter(torch.stack([runs, torch.ones_like(runs)], dim=1))

    def biased():
        return potential(theta[:, 0], theta[:, 1], torch.exp) + 0.5 * KAPPA * (theta[:, 0] - runs) ** 2

    exchange = None
    if exchange_every:
        exchange = WindowExchange([theta], lambda: theta[:, 0], WindowExchangeSettings(centres, KAPPA, CHAINS, exchange_every),
                                  generator=torch.Generator().manual_seed(seed + 1))
    sampler = HMC([theta], biased, HMCSettings(step_size=0.1, leapfrog_steps=8), generator=torch.Generator().manual_seed(seed))
    result = adapt_and_sample(sampler, warmup=200, draws=draws,
                              record=lambda: {"x": theta[:, 0].detach().clone(), "y": theta[:, 1].detach().clone()},
                              after_trajectory=exchange.after_trajectory if exchange else None)
    return result["y" if hidden else "x"].numpy().reshape(len(centres), CHAINS, -1), exchange


def hidden_double_well_profile(draws: np.ndarray, ladders: bool):
    return free_energy_profile(draws[:, :, ::4], CENTRES, KAPPA, divide=0.0, bins=np.linspace(-2.6, 2.6, 27),
                               bootstrap=40, ladders=ladders)


HALF_LADDER = np.linspace(0.0, 2.0, 9)
"""The windows of CENTRES on x >= 0: the same spacing and stiffness, the barrier high at 0, 0.25, 0.5 and low at 2,
where the well y = -1 holds nearly all the mass; a configuration walks the 9 windows in far fewer exchanges."""


def exchange_on_the_half_ladder_errors(seed: int = 3) -> list[str]:
    """What departs from a working exchange on HALF_LADDER (500 draws after 200 warmup, chains started at y = +1):
    configurations must cross the barrier in the three high-barrier windows (their mean mass of y < 0 at least 0.3 of
    the exact mean; plain windows stay at about 0) and no window may hold more mass at y < 0 than its exact law plus
    0.1: the chains start at y = +1, so a correct run that has not yet mixed falls short of the exact mass, while a
    wrong swap rule (a flipped sign of the bias difference) puts nearly all of every window's mass at y < 0."""
    hidden, exchange = sample_hidden_double_well(1, seed=seed, hidden=True, draws=500, centres=HALF_LADDER)
    found = (hidden < 0).mean(axis=(1, 2))
    exact = np.array([wrong_well_mass(c) for c in HALF_LADDER])
    errors = []
    if float(exchange.acceptance().min()) <= 0.2:
        errors.append(f"swap acceptance {exchange.acceptance().numpy().round(3)}")
    if found[:3].mean() < 0.3 * exact[:3].mean():
        errors.append(f"no crossing: mass at y < 0 {found[:3].round(3)} in the high-barrier windows, exact {exact[:3].round(3)}")
    errors += [f"window {c}: mass at y < 0 {f:.3f} above the exact {e:.3f}"
               for c, f, e in zip(HALF_LADDER, found, exact) if f > e + 0.1]
    return errors


def test_window_exchange_carries_configurations_over_the_hidden_barrier_that_traps_plain_windows():
    """The default, fast form of the test below (marked slow): on the half ladder, plain windows stay trapped in the
    well they start in, and exchange carries configurations over the barrier without overshooting the exact law."""
    plain_y, _ = sample_hidden_double_well(None, hidden=True, draws=300, centres=HALF_LADDER)
    for k in (0, 1):  # centres 0 and 0.25: about 11 nats of barrier, exact masses 0.47 and 0.68 at y < 0
        found, exact_mass = float((plain_y[k] < 0).mean()), wrong_well_mass(HALF_LADDER[k])
        rhat = rhat_and_bulk_ess(plain_y[k])[0]
        assert exact_mass > 0.4 and (abs(found - exact_mass) > 0.2 or rhat > 1.1), (HALF_LADDER[k], found, exact_mass, rhat)
    assert exchange_on_the_half_ladder_errors() == []


@pytest.mark.slow
def test_window_exchange_converges_where_the_hidden_barrier_traps_plain_windows():
    exact = exact_delta_F()
    plain_y, _ = sample_hidden_double_well(None, hidden=True)
    # plain windows fail where the barrier is high (centres 0.25, 0.5: about 11 nats; the exact window puts 0.68
    # and 0.84 of its mass in the well the chains do not start in): their chains stay trapped (the well's mass
    # far from exact) or split between the wells (R-hat of y far above 1).  Which of the two happens, and so the
    # profile's error, depends on the machine's kernels: all chains trapped and Delta F off by 1.4 nats (17 of
    # its own errors) with one set, 3 of 8 chains crossed and 1.1 nats (5 errors) with another.
    for k in np.flatnonzero(np.isin(CENTRES, [0.25, 0.5])):
        found, exact_mass = float((plain_y[k] < 0).mean()), wrong_well_mass(CENTRES[k])
        rhat = rhat_and_bulk_ess(plain_y[k])[0]
        assert exact_mass > 0.6 and (abs(found - exact_mass) > 0.2 or rhat > 1.1), (CENTRES[k], found, exact_mass, rhat)
    # exchange: a configuration crosses the barrier in the end windows and walks back through 17 windows, so the
    # run must be long: with 1000 draws Delta F came out 2.3, -0.3, 3.1 and 5.0 of its own errors from the exact
    # value over seeds 3, 5, 7, 11 (still carrying the start well), with 4000 draws 0.1 and 1.0 (seeds 7, 11)
    exchanged, exchange = sample_hidden_double_well(1, draws=4000)
    diagnostics = [rhat_and_bulk_ess(window) for window in exchanged]
    assert max(r for r, _ in diagnostics) < 1.05 and min(e for _, e in diagnostics) > 400, diagnostics
    assert float(exchange.acceptance().min()) > 0.2, exchange.acceptance()
    profile = hidden_double_well_profile(exchanged, ladders=True)
    assert abs(profile.delta_F - exact) < 3 * profile.delta_F_error + 0.02, (profile.delta_F, profile.delta_F_error, exact)
    assert profile.delta_F_error < 0.2


GAUSSIAN_CENTRES = [-1.0, 0.0, 1.0, 2.0]
GAUSSIAN_KAPPA = 4.0
"""U(x) = x^2 / 2 with harmonic windows: window k is exactly N(kappa c_k / (1 + kappa), 1 / (1 + kappa))."""


def exact_window_draws(chains: int, seed: int) -> torch.Tensor:
    """Independent exact draws of every Gaussian window, runs window-major, shape (K * chains, 1)."""
    generator = torch.Generator().manual_seed(seed)
    centres = torch.tensor(GAUSSIAN_CENTRES, dtype=torch.float64)
    means = GAUSSIAN_KAPPA * centres / (1 + GAUSSIAN_KAPPA)
    draws = means[:, None] + torch.randn(len(centres), chains, generator=generator, dtype=torch.float64) / math.sqrt(
        1 + GAUSSIAN_KAPPA)
    return draws.reshape(-1, 1)


def exact_swap_acceptance() -> float:
    r"""E[min(1, e^{-Delta})] for Gaussian windows spaced d apart: Delta = kappa d (x_{k+1} - x_k) is normal with
    variance s^2 = 2 kappa^2 d^2 / (1 + kappa) and mean s^2 / 2, so the mean acceptance is erfc(s / (2 sqrt 2))."""
    s = math.sqrt(2 * GAUSSIAN_KAPPA**2 / (1 + GAUSSIAN_KAPPA))
    return math.erfc(s / (2 * math.sqrt(2)))


def swap_statistics(chains: int = 20_000, rounds: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Swap acceptance per pair, and each window's draws after ``rounds`` exchanges (no other moves) of exact draws."""
    x = exact_window_draws(chains, seed)
    exchange = WindowExchange([x], lambda: x[:, 0], WindowExchangeSettings(GAUSSIAN_CENTRES, GAUSSIAN_KAPPA, chains),
                              generator=torch.Generator().manual_seed(seed + 1))
    for _ in range(rounds):
        exchange.swap()
    return exchange.acceptance().numpy(), x[:, 0].numpy().reshape(len(GAUSSIAN_CENTRES), chains)


def stationarity_errors(acceptance: np.ndarray, after: np.ndarray) -> list[str]:
    """What departs from the exact law: swap acceptance against erfc(s / 2 sqrt 2) (binomial errors, 5 sigma), and the
    windows' means and variances after the swaps against N(kappa c / (1 + kappa), 1 / (1 + kappa)) (5 standard errors)."""
    errors = []
    chains = after.shape[1]
    expected = exact_swap_acceptance()
    for k, value in enumerate(acceptance):
        attempts = chains * 3  # 6 rounds alternate even and odd pairs: 3 proposals per chain for each pair
        if abs(value - expected) > 5 * math.sqrt(expected * (1 - expected) / attempts):
            errors.append(f"pair {k}: acceptance {value:.4f} against {expected:.4f}")
    variance = 1 / (1 + GAUSSIAN_KAPPA)
    for k, centre in enumerate(GAUSSIAN_CENTRES):
        mean = GAUSSIAN_KAPPA * centre / (1 + GAUSSIAN_KAPPA)
        if abs(after[k].mean() - mean) > 5 * math.sqrt(variance / chains):
            errors.append(f"window {k}: mean {after[k].mean():.4f} against {mean:.4f}")
        if abs(after[k].var() - variance) > 5 * variance * math.sqrt(2 / chains):
            errors.append(f"window {k}: variance {after[k].var():.4f} against {variance:.4f}")
    return errors


def test_swaps_keep_each_gaussian_window_exact_and_accept_at_the_exact_rate():
    acceptance, after = swap_statistics()
    assert stationarity_errors(acceptance, after) == []


def test_a_flipped_sign_of_the_bias_difference_fails_the_exact_law(monkeypatch):
    exact = window_exchange.swap_energy_change
    monkeypatch.setattr(window_exchange, "swap_energy_change", lambda *args: -exact(*args))
    acceptance, after = swap_statistics()
    errors = stationarity_errors(acceptance, after)
    assert any("acceptance" in e for e in errors) and any("mean" in e for e in errors), errors


def test_exchange_refuses_a_wrong_layout():
    with pytest.raises(ValueError):
        WindowExchange([torch.zeros(5, 1)], lambda: torch.zeros(5), WindowExchangeSettings((0.0, 1.0), 1.0, chains=2))
    for bad in ({"every": 0}, {"chains": 0}, {"kappa": -1.0}, {"centres": (0.0, math.nan)}):
        with pytest.raises(ValueError):
            WindowExchangeSettings(**{"centres": (0.0, 1.0), "kappa": 1.0, "chains": 2, **bad})
    with pytest.raises(ValueError):
        PlacementSettings(minimum=1.0)
    with pytest.raises(ValueError):
        PlacementSettings(maximum_windows=1)


def gaussian_pass(chains: int = 8, draws: int = 400):
    """A 'pass' on U = x^2 / 2 with exact draws of every window: returns the profile and its neighbour overlaps."""
    rng = np.random.default_rng(0)

    def run_pass(centres, kappa):
        kappa = np.asarray(kappa)
        means, scale = kappa * np.asarray(centres) / (1 + kappa), (1 + kappa) ** -0.5
        samples = means[:, None, None] + scale[:, None, None] * rng.normal(size=(len(centres), chains, draws))
        profile = free_energy_profile(samples, centres, kappa, divide=0.0, bins=np.linspace(-2.5, 2.5, 11), bootstrap=10)
        return profile, np.array([profile.overlap[k, k + 1] for k in range(len(centres) - 1)]), np.zeros(len(centres), bool)

    return run_pass


def test_refine_windows_adds_a_midpoint_only_where_the_overlap_is_short():
    centres, kappa = refine_windows([0.0, 1.0, 1.5, 3.0], [10.0, 20.0, 10.0, 40.0], [0.02, 0.3, 0.09], minimum=0.1)
    assert centres == [0.0, 0.5, 1.0, 1.5, 2.25, 3.0]
    assert kappa == [10.0, 20.0, 20.0, 10.0, 40.0, 40.0]


def test_placement_adds_windows_where_the_overlap_is_low_until_every_overlap_reaches_the_target():
    run_pass = gaussian_pass()
    centres = [-2.0, -1.0, 0.0, 0.5, 1.0, 2.0]  # spacing 1 at kappa 10 (width 0.3): the outer pairs do not overlap
    first, first_overlaps, _ = run_pass(centres, [10.0] * len(centres))
    assert first_overlaps[0] < 0.1 and first_overlaps[-1] < 0.1 and first_overlaps[2] > 0.1
    profile, record = place_windows(run_pass, centres, 10.0, PlacementSettings(minimum=0.1, maximum_windows=20))
    assert record["met"] and record["message"] is None and record["passes"] >= 2
    assert set(centres) < set(record["centres"])
    added = sorted(set(record["centres"]) - set(centres))
    assert not any(0 < c < 1 for c in added), added  # only where the spacing was 1, none where it was 0.5
    assert min(profile.overlap[k, k + 1] for k in range(len(record["centres"]) - 1)) >= 0.1
    assert abs(profile.delta_F) < 3 * profile.delta_F_error + 0.02  # symmetric law: Delta F = 0


def test_placement_stops_at_the_cap_and_says_where_the_overlap_is_short():
    _, record = place_windows(gaussian_pass(), [-2.0, 0.0, 2.0], 10.0, PlacementSettings(minimum=0.1, maximum_windows=4))
    assert not record["met"] and "window cap 4" in record["message"] and "-2-0" in record["message"]


STEEP, STEEP_TILT = 12.0, 0.5
"""U(x) = STEEP (x^2 - 1)^2 + STEEP_TILT x: U''(0) = -48, so a window of stiffness 16 on the barrier top has two
modes with 5.3 nats of barrier between them, and one of stiffness 64 (four times stiffer) a single mode."""
STEEP_CENTRES = np.linspace(-1.5, 1.5, 7)
SPLIT_RHAT = 1.1


def steep_double_well_pass(chains: int = 8, warmup: int = 150, draws: int = 450, seed: int = 5):
    """A pass of HMC windows on the steep double well: returns (profile, R-hat per window), the neighbour overlaps
    and the windows whose chains split (R-hat above :data:`SPLIT_RHAT`; short chains' noise reaches 1.02-1.05 here,
    the split window on the top 1.6)."""
    def run_pass(centres, kappa):
        samples = tilted_double_well.window_draws(STEEP, STEEP_TILT, centres, kappa, chains, warmup, draws, step_size=0.05,
                                                  seed=seed)
        rhat = np.array([rhat_and_bulk_ess(window)[0] for window in samples])
        profile = free_energy_profile(samples[:, :, ::3], centres, kappa, divide=0.0, bins=np.linspace(-1.8, 1.8, 25),
                                      bootstrap=10)
        overlaps = np.array([profile.overlap[k, k + 1] for k in range(len(centres) - 1)])
        return (profile, rhat), overlaps, rhat > SPLIT_RHAT

    return run_pass


def test_placement_stiffens_a_window_whose_chains_split_on_the_barrier_top_until_none_does():
    """A soft window (stiffness 16 < -U''(0) = 48) on the barrier top has two modes and its chains split (R-hat
    1.33-1.39 over seeds 5-7); the placement makes it four times stiffer with windows half-way to its neighbours, no
    window splits any more, and the profile gives the exact Delta F (0.02, 2.0 and 1.1 of its errors off over seeds
    5-7).  Without the stiffening (``stiffen`` 1) the split window stays."""
    run_pass = steep_double_well_pass()
    (_, rhat), _, split = run_pass(STEEP_CENTRES, np.full(len(STEEP_CENTRES), 16.0))
    assert split[STEEP_CENTRES == 0.0].all(), rhat  # the window on the barrier top splits
    (profile, rhat), record = place_windows(run_pass, STEEP_CENTRES, 16.0,
                                            PlacementSettings(minimum=0.03, maximum_windows=40, stiffen=4.0))
    assert record["met"] and record["passes"] >= 2 and max(rhat) <= SPLIT_RHAT, (record, rhat)
    kappa = dict(zip(record["centres"], record["kappa"]))
    assert kappa[0.0] == 64.0 and kappa[0.25] == 64.0 and kappa[1.5] == 16.0, kappa  # stiff on the top only
    exact = tilted_double_well.exact_delta_F(STEEP, STEEP_TILT)
    assert abs(profile.delta_F - exact) < 3 * profile.delta_F_error + 0.05, (profile.delta_F, profile.delta_F_error, exact)
    (_, unstiffened_rhat), unstiffened = place_windows(run_pass, STEEP_CENTRES, 16.0,
                                                       PlacementSettings(minimum=0.03, maximum_windows=40, stiffen=1.0))
    assert max(unstiffened_rhat) > SPLIT_RHAT and set(unstiffened["kappa"]) == {16.0}


def test_placement_at_its_cap_names_the_windows_that_still_split():
    _, record = place_windows(steep_double_well_pass(draws=150), STEEP_CENTRES, 16.0,
                              PlacementSettings(minimum=0.0, maximum_windows=7, stiffen=4.0))
    assert not record["met"] and "chains split in the windows at" in record["message"] and " 0," in record["message"] + ","
