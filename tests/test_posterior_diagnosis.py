"""The posterior theory's data term on its own trial distribution (validation/copy_task/posterior_diagnosis.py)."""

from __future__ import annotations

import numpy as np
import torch

from emergence.numerics.order_parameters import cyclic_shift
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.free_energy import bulk_variance_ratios
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.copy_task.posterior_diagnosis import theory_data_action, trial_data_action, trial_weights
from emergence.validation.samplers.umbrella import delta_F_of_profile

SOFTMAX = CopyTaskConvention.parse("", attention="softmax")


def test_trial_weights_have_the_trial_mean_and_block_variances():
    V, L, s = 4, 8, 1.0
    draws = trial_weights(4000, V, L, g=1.5, t_u=0.5, t_v=0.8, s=s, generator=torch.Generator().manual_seed(0))
    ratios = bulk_variance_ratios(draws, V, s)
    # means over 4000 draws of chi-square ratios with >= 36 degrees of freedom: standard errors < 0.004 t
    assert abs(float(ratios["t_u"].mean()) - 0.5) < 0.01 and abs(float(ratios["t_v"].mean()) - 0.8) < 0.02
    assert abs(float(ratios["g"].mean()) - 1.5) < 0.02  # each g-hat has standard error sqrt(0.8 / (L - 1)) / sqrt(4000)


def test_a_vanishing_trial_gives_the_data_action_at_its_mean():
    L, V, P, g = 6, 3, 20, 2.0
    profile = {"g": [g], "t_u": [1e-30], "t_v": [1e-30]}
    trial = trial_data_action(L, V, P, profile, SOFTMAX, draws=3)
    model = CopyAttentionModel(1, L, V, SOFTMAX)
    with torch.no_grad():
        model.logit_weights[0, V:, V:] = g * torch.as_tensor(cyclic_shift(L), dtype=torch.float64)
    batch = copy_task_batch([P], L, V, [7919 * P], SOFTMAX.shift, SOFTMAX.targets)
    with torch.no_grad():
        at_mean = float(model.marginal_potential(batch) - model.logit_prior_energy())
    # noise of 1e-15 in the logits moves an action of O(10) by O(1e-14)
    assert abs(trial["mean"][0] - at_mean) <= 1e-12 * abs(at_mean)
    shifted = trial_data_action(L, V, P, {"g": [g + 0.1], "t_u": [1e-30], "t_v": [1e-30]}, SOFTMAX, draws=3)
    assert abs(shifted["mean"][0] - at_mean) > 1e-3  # the mean pattern matters


def test_the_theory_data_term_is_its_free_energy_less_the_trial_kl():
    from emergence.numerics.copy_head.posterior import PosteriorTheory, entropy_rate

    theory = PosteriorTheory(8, 4, SOFTMAX, draws=2000, trial="gauge")
    profile = {"g": [0.3, 2.0], "t_u": [0.9, 0.6], "t_v": [0.95, 0.7]}
    data = theory_data_action(theory, 200.0, profile)
    for value, g, t_u, t_v in zip(data, profile["g"], profile["t_u"], profile["t_v"]):
        kl = (theory.L - 1) * g**2 / (2 * theory.s) + theory.token_directions * entropy_rate(t_u) \
            + theory.position_directions * entropy_rate(t_v)
        total = theory.free_energy(g, t_u, t_v, 200.0)
        assert abs(value + kl - total) <= 1e-12 * abs(total)


def test_delta_F_of_a_profile_is_the_log_mass_ratio():
    grid = np.linspace(0.0, 1.0, 201)
    well = 200 * (grid - 0.2) ** 2
    mirrored = 200 * (grid - 0.8) ** 2
    F = np.minimum(well, mirrored)
    assert abs(delta_F_of_profile(grid, F, 0.5)) < 1e-9  # symmetric wells, symmetric grid
    lifted = np.where(grid >= 0.5, F + 3.0, F)
    assert abs(delta_F_of_profile(grid, lifted, 0.5) - 3.0) < 1e-9


def test_importance_sampling_recovers_the_prior_normalisation_without_data():
    """With the data switched off (beta_0 = 1e-12) the posterior is the prior: Z = 1, so F_IS -> 0, and the
    trial's F_Q is KL(Q || prior) in closed form.  A wrong normaliser of Q or of the prior fails both."""
    from types import SimpleNamespace

    from emergence.numerics.copy_head.posterior import entropy_rate
    from emergence.validation.copy_task.posterior_diagnosis import importance_sampled_free_energy

    L, V, P, draws = 5, 3, 4, 4000
    convention = CopyTaskConvention.parse("beta0=1e-12", attention="softmax")
    mode = SimpleNamespace(g=1.2, t_u=0.7, t_v=0.85)
    s = 1.0  # the default logit prior variance sigma_G^2 L^-a with a = 0
    copy_cost = (L - 1) * mode.g**2 / (2 * s)
    # the product trial pays for every entry; the gauge-correct one for the (V + L - 1)(V - 1), (V + L - 1)(L - 1)
    # informative directions only (the 3(V + L) - 2 flat ones at the prior's variance)
    closed_forms = {"product": (V + L) * V * entropy_rate(mode.t_u) + (V + L) * L * entropy_rate(mode.t_v),
                    "gauge": (V + L - 1) * ((V - 1) * entropy_rate(mode.t_u) + (L - 1) * entropy_rate(mode.t_v))}
    for trial, kl in closed_forms.items():
        result = importance_sampled_free_energy(L, V, P, mode, convention, draws=draws, seed=1, trial=trial)
        # F_Q is a mean over 4000 draws of -ln w, whose spread is reported: 4 standard errors
        assert abs(result["F_trial"] - kl - copy_cost) < 4 * result["log_weight_sd"] / np.sqrt(draws), trial
        assert abs(result["F_IS"]) < 4 * result["F_IS_error"] + 0.05, trial
        assert result["F_trial"] > result["F_IS"], trial  # Jensen
