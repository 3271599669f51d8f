r"""Which assumption of the posterior theory breaks: its data term on its own trial distribution.

The posterior theory (:mod:`emergence.numerics.copy_head.posterior`) is a variational
(Gibbs–Bogoliubov) free energy over a Gaussian trial :math:`Q_{g, t_u, t_v}` for model T's
:math:`W_{QK}`: mean :math:`g S` in the position block, independent entries of variance
:math:`t_u s` (key-token columns) and :math:`t_v s` (key-position columns),

.. math::
    F(g, t_u, t_v; P) = \mathrm{KL}(Q \,\|\, \text{prior}) + S_{\rm data}\big(q_{\rm eff}(\mathbb E_Q Q_\Phi),
    m_{\rm eff}(\mathbb E_Q M_\Phi); P\big),

with two approximations beyond the variational bound itself: the data term is the population
action (the data statistics self-average; the measurement's ``data_multiple`` probe tests that), and
it is evaluated at the trial's *averaged* row statistics instead of averaged over the trial.
:func:`trial_data_action` measures the second one exactly: it draws :math:`W_{QK} \sim Q` and
averages the model's own readout-marginal data action (``marginal_potential`` minus the logit
prior) on real sequences,

.. math::
    \mathbb E_Q\big[S_r(W_{QK}) - \|W_{QK}\|^2/2s\big] \quad\text{against}\quad
    S_{\rm data}(q_{\rm eff}, m_{\rm eff}; P).

Replacing the theory's data term by this average along the profile gives the free energy of the
same trial without the second approximation, hence its :math:`\Delta F`
(:func:`~emergence.validation.copy_task.posterior_free_energy.delta_F_of_profile`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from emergence.numerics.order_parameters import cyclic_shift
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.models import CopyAttentionModel


def trial_weights(draws: int, V: int, L: int, g: float, t_u: float, t_v: float, s: float,
                  generator: torch.Generator) -> torch.Tensor:
    r"""``draws`` samples of :math:`W_{QK} \sim Q_{g, t_u, t_v}`, shape ``(draws, V + L, V + L)``."""
    scale = torch.empty(V + L, V + L, dtype=torch.float64)
    scale[:, :V], scale[:, V:] = math.sqrt(t_u * s), math.sqrt(t_v * s)
    weights = torch.randn(draws, V + L, V + L, generator=generator, dtype=torch.float64) * scale
    weights[:, V:, V:] += g * torch.as_tensor(cyclic_shift(L), dtype=torch.float64)
    return weights


def trial_data_action(L: int, V: int, P: int, profile: dict[str, list[float]], convention: CopyTaskConvention,
                      draws: int = 300, data_multiple: int = 1, seed: int = 0) -> dict[str, Any]:
    r"""The model's data action averaged over the theory's trial at each point of ``profile``.

    ``profile``: :meth:`~emergence.numerics.copy_head.posterior.PosteriorTheory.profile` (its ``g``,
    ``t_u``, ``t_v`` per :math:`a_G`).  The data are :math:`kP` sequences at :math:`\beta_0/k`
    (``data_multiple`` :math:`k`; see :mod:`~emergence.validation.copy_task.free_energy`).  Returns
    ``mean`` and ``error`` (standard error over the draws) per profile point, ``(len(profile["aG"]),)`` each.
    """
    tempered = replace(convention.with_attention("softmax"), beta0=convention.beta0 / data_multiple)
    batch = copy_task_batch([data_multiple * P] * draws, L, V, [7919 * P + seed] * draws, tempered.shift,
                            tempered.targets, torch.float64, "cpu")
    model = CopyAttentionModel(draws, L, V, tempered)
    generator = torch.Generator().manual_seed(seed)
    mean, error = [], []
    for g, t_u, t_v in zip(profile["g"], profile["t_u"], profile["t_v"]):
        with torch.no_grad():
            model.logit_weights.copy_(trial_weights(draws, V, L, g, t_u, t_v, model.logit_prior_variance, generator))
            action = (model.marginal_potential(batch) - model.logit_prior_energy()).numpy()
        mean.append(float(action.mean()))
        error.append(float(action.std(ddof=1) / np.sqrt(draws)))
    return {"mean": mean, "error": error}


def theory_data_action(theory, P: float, profile: dict[str, list[float]]) -> list[float]:
    r"""The theory's own data term :math:`S_{\rm data}(q_{\rm eff}, m_{\rm eff}; P)` at each profile point."""
    from emergence.numerics.copy_head.posterior import data_action, effective_invariants

    values = []
    for g, t_u, t_v in zip(profile["g"], profile["t_u"], profile["t_v"]):
        averages = theory.row_averages(g, t_u, t_v)
        q_eff, m_eff = effective_invariants(averages["square"], averages["target"], theory.L, theory.V)
        values.append(float(data_action(q_eff, m_eff, theory.L, theory.L, P, theory.V, theory.lam, theory.beta, theory.L)))
    return values


def data_term_check(L: int, V: int, P: int, convention: CopyTaskConvention, divide: float = 0.3,
                    theory_draws: int = 4000, draws: int = 300, data_multiple: int = 1, seed: int = 0) -> dict[str, Any]:
    r"""The theory's profile at ``P`` with its data term and with the exact trial average in its place.

    Returns the profile grid, ``F_theory``, ``data_theory``, ``data_trial`` (mean, error) and the two
    :math:`\Delta F` by the measurement's estimator: where they agree, evaluating the data term at the
    averaged row statistics is not what breaks.
    """
    from emergence.numerics.copy_head.posterior import PosteriorTheory
    from emergence.validation.copy_task.posterior_free_energy import PROFILE_POINTS, PROFILE_RANGE, delta_F_of_profile

    theory = PosteriorTheory(L, V, convention.with_attention("softmax"), draws=theory_draws)
    grid = np.linspace(*PROFILE_RANGE, PROFILE_POINTS)
    profile = theory.profile(P, grid)
    data_theory = np.asarray(theory_data_action(theory, P, profile))
    trial = trial_data_action(L, V, P, profile, convention, draws, data_multiple, seed)
    F_theory = np.asarray(profile["F"])
    F_trial = F_theory - data_theory + np.asarray(trial["mean"])
    return {"L": L, "V": V, "P": P, "aG": grid.tolist(), "F_theory": F_theory.tolist(),
            "data_theory": data_theory.tolist(), "data_trial": trial,
            "delta_F_theory": delta_F_of_profile(grid, F_theory, divide),
            "delta_F_trial_average": delta_F_of_profile(grid, F_trial, divide)}
