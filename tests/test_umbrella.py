"""Umbrella sampling + MBAR (validation/samplers/umbrella.py) on a double well with a known free-energy difference."""

import numpy as np
import pytest
import tilted_double_well

from emergence.validation.samplers.umbrella import free_energy_profile

pytest.importorskip("pymbar", reason="umbrella sampling needs the bayes extra")

HEIGHT, TILT = 6.0, 0.8
"""U(x) = h (x^2 - 1)^2 + t x: barrier about 6 nats, the left well lower by about 2t = 1.6 nats."""
CENTRES = np.linspace(-1.5, 1.5, 11)
KAPPA = 40.0
"""Stiffer than the barrier top (U''(0) = -4h = -24), so no window is itself bistable."""
CHAINS = 8


CLOSE = np.union1d(CENTRES, np.linspace(-0.45, 0.45, 4))
STIFF = np.where(np.abs(CLOSE) < 0.5, 4 * KAPPA, KAPPA)
"""Stiffer, closer windows: four times stiffer and at half the spacing on the barrier top, as placed where a
profile bends down faster than a soft bias holds."""


def _window_draws(windows: np.ndarray, kappa: np.ndarray) -> np.ndarray:
    """HMC in each window ``windows (K,)`` (windows x chains batched as runs) of stiffness ``kappa (K,)``: draws of
    x, shape (K, chains, draws), every third kept."""
    draws = tilted_double_well.window_draws(HEIGHT, TILT, windows, kappa, CHAINS, warmup=200, draws=600, step_size=0.1,
                                            seed=3)
    # every draw near the windows (the largest |x| is 1.53 for windows at |xi| <= 1.5): a broken sampler's draws
    # (|x| ~ 1e50 with the Metropolis test's sign flipped) fail here instead of keeping MBAR's solver for minutes
    assert np.all(np.abs(draws) < 3), np.abs(draws).max()
    return draws[:, :, ::3]


@pytest.fixture(scope="module")
def window_draws():
    return _window_draws(CENTRES, np.full(len(CENTRES), KAPPA))


@pytest.fixture(scope="module")
def stiff_window_draws():
    return _window_draws(CLOSE, STIFF)


def test_umbrella_mbar_recovers_the_double_well_free_energy_difference(window_draws):
    profile = free_energy_profile(window_draws, CENTRES, KAPPA, divide=0.0, bins=np.linspace(-1.8, 1.8, 25), bootstrap=20)
    exact = tilted_double_well.exact_delta_F(HEIGHT, TILT)
    assert abs(profile.delta_F - exact) < 3 * profile.delta_F_error + 0.02, (profile.delta_F, profile.delta_F_error, exact)
    assert profile.delta_F_error < 0.3
    assert profile.overlap_min > 0.03
    assert abs(profile.basin_minimum(-2, 0) + 1) < 0.15 and abs(profile.basin_minimum(0, 2) - 1) < 0.15


def test_a_wrong_window_centre_breaks_the_estimate(window_draws):
    planted = CENTRES.copy()
    planted[6] += 0.15  # MBAR told the wrong bias of one window right of the barrier (half a spacing)
    profile = free_energy_profile(window_draws, planted, KAPPA, divide=0.0, bins=np.linspace(-1.8, 1.8, 25), bootstrap=20)
    assert abs(profile.delta_F - tilted_double_well.exact_delta_F(HEIGHT, TILT)) > 3 * profile.delta_F_error + 0.02


@pytest.mark.parametrize("seed", range(4))
def test_a_basin_without_draws_has_no_mass_not_the_rounding_of_the_other(seed):
    """Every draw above the divide: Delta F is -inf and the copy mass 1 exactly (one minus a sum of 3200
    normalised weights is rounding, about 1e-14, and read as mass gave a finite Delta F near -31)."""
    rng = np.random.default_rng(seed)
    centres, kappa = np.array([0.5, 0.6, 0.7, 0.8]), 200.0
    draws = np.array([rng.normal(c, 0.07, size=(4, 200)) for c in centres])
    profile = free_energy_profile(draws, centres, kappa, divide=float(draws.min()) - 0.01, bins=np.linspace(0, 1, 21),
                                  bootstrap=5, seed=seed)
    assert profile.delta_F == -np.inf and profile.mass_high == 1.0


def test_windows_of_their_own_stiffness_recover_the_free_energy_difference_and_one_stiffness_for_all_does_not(
        stiff_window_draws):
    """MBAR told each window's own stiffness recovers the exact Delta F; told one stiffness for all (KAPPA for the
    stiff windows on the barrier too) it weighs their draws by the wrong bias and misses."""
    bins, exact = np.linspace(-1.8, 1.8, 25), tilted_double_well.exact_delta_F(HEIGHT, TILT)
    profile = free_energy_profile(stiff_window_draws, CLOSE, STIFF, divide=0.0, bins=bins, bootstrap=20)
    assert abs(profile.delta_F - exact) < 3 * profile.delta_F_error + 0.02, (profile.delta_F, profile.delta_F_error, exact)
    assert profile.overlap_min > 0.03
    wrong = free_energy_profile(stiff_window_draws, CLOSE, KAPPA, divide=0.0, bins=bins, bootstrap=20)
    assert abs(wrong.delta_F - exact) > 3 * wrong.delta_F_error + 0.02, (wrong.delta_F, wrong.delta_F_error, exact)
