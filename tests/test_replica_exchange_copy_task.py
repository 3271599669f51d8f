"""Replica exchange on a small copy-task posterior agrees with an exact reference.

Reference: the readout-marginal posterior exp(-S(G)) of model M (linear attention A = G, L = 2,
V = 3, P = 12, beta = 1, unit priors) integrated over the four entries of G by importance
sampling (exact_marginal.posterior_expectations, itself checked against the dense PL x PL
log-evidence).  This is an exact, sampler-independent reference for a 4-dimensional posterior;
we use it instead of NUTS (Pyro) because it needs no extra framework and has no mixing error
of its own (its importance ESS is checked).  The replica-exchange side samples the model's own
readout-marginal action (objective="marginal") with a 3-rung ladder.
"""

import pytest
import torch

from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.exact_marginal import posterior_expectations
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.copy_task.tempering import sample_replica_exchange
from emergence.validation.samplers.diagnostics import mean_and_standard_error
from emergence.validation.samplers.replica_exchange import geometric_ladder

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _z_scores(chains, burn_in, draws, thin, temperatures, tempering="full", sampled_beta0=1.0):
    L, V, P = 2, 3, 12
    convention = CopyTaskConvention(architecture="M", attention="linear", normalisation="G", d=0.0)
    sampled = CopyTaskConvention(architecture="M", attention="linear", normalisation="G", d=0.0, beta0=sampled_beta0)
    data = copy_task_batch([P], L, V, seeds=[3])
    exact = posterior_expectations(data.one_hot(), data.targets, convention, samples=200_000)
    assert exact["ess"][0] > 10_000
    rungs = temperatures.numel()
    batch = copy_task_batch([P] * chains * rungs, L, V, seeds=[3] * chains * rungs)
    model = CopyAttentionModel(chains * rungs, L, V, sampled)
    model.initialise(["uniform"] * chains * rungs, list(range(chains * rungs)), noise=0.3)
    tempered = sample_replica_exchange(model, batch, batch, temperatures, burn_in=burn_in, draws=draws,
                                       thin=thin, step_fraction=0.03, seed=1, tempering=tempering)
    z_scores = {}
    for key in ("c1", "cG", "coverage"):
        mean, error = mean_and_standard_error(getattr(tempered.cold, key).numpy())
        reference, reference_error = exact[key]
        z_scores[key] = (mean - reference) / (error**2 + reference_error**2) ** 0.5
    return z_scores, tempered, exact


def test_replica_exchange_matches_the_exact_copy_task_posterior():
    z_scores, tempered, exact = _z_scores(chains=96, burn_in=1000, draws=40, thin=25,
                                          temperatures=geometric_ladder(3, 4.0))
    assert max(abs(z) for z in z_scores.values()) < 4.0, (z_scores, exact)
    assert exact["cG"][0] > 0.4
    assert bool((tempered.swap_acceptance > 0.1).all()), tempered.swap_acceptance
    assert tuple(tempered.cold.cG.shape) == (96, 40)


def test_likelihood_tempering_with_rungs_below_one_matches_too():
    z_scores, tempered, exact = _z_scores(chains=96, burn_in=1000, draws=40, thin=25,
                                          temperatures=torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64),
                                          tempering="likelihood")
    assert max(abs(z) for z in z_scores.values()) < 4.0, (z_scores, exact)


def test_the_comparison_fails_for_a_sampler_of_the_wrong_law():
    """Sampling at half the inverse temperature (beta0 = 0.5, exp(-S) of another model) must be rejected."""
    z_scores, _, _ = _z_scores(chains=96, burn_in=1000, draws=40, thin=25,
                               temperatures=geometric_ladder(3, 4.0), sampled_beta0=0.5)
    assert max(abs(z) for z in z_scores.values()) > 4.0, z_scores
