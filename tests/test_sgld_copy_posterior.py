"""SGLD on the copy task samples the exact posterior: compare with the integrated marginal S(G).

Model M, linear attention A = G, L = 2, V = 3, P = 12 sequences, beta = 1, unit priors.  The
readout is integrated out exactly (dense linear algebra) and exp(-S(G)) integrated over the four
entries of G by importance sampling; SGLD samples (G, W) jointly (the default objective), or G
alone from the model's own readout-marginal action (``objective="marginal"``).
"""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.exact_marginal import marginal_action, marginal_action_dense, posterior_expectations
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.copy_task.training import sample_sgld
from emergence.validation.samplers.diagnostics import mean_and_standard_error


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@settings(max_examples=10)
@given(
    st.integers(2, 4), st.integers(2, 4), st.integers(1, 6),
    st.floats(0.2, 3), st.floats(0.2, 3), st.floats(0.1, 3), st.sampled_from(["G", "G/L"]),
)
def test_woodbury_action_equals_dense_log_evidence_up_to_a_constant(L, V, P, sigma_G2, sigma_W2, beta0, normalisation):
    convention = CopyTaskConvention(architecture="M", attention="linear", sigma_G2=sigma_G2, sigma_W2=sigma_W2,
                                    beta0=beta0, d=0.0, normalisation=normalisation)
    data = copy_task_batch([P], L, V, seeds=[L + V + P])
    G = torch.randn(6, L, L, dtype=torch.float64, generator=torch.Generator().manual_seed(P))
    difference = marginal_action(G, data.one_hot(), data.targets, convention) - marginal_action_dense(
        G, data.one_hot(), data.targets, convention)
    torch.testing.assert_close(difference - difference[0], torch.zeros(6, dtype=torch.float64), atol=1e-9, rtol=0)


def test_marginal_matches_the_joint_potential_integrated_over_W():
    """U(G, W) of the training model is quadratic in W; its exact Gaussian integral
    (value, gradient and Hessian at W = 0 by autograd) reproduces S(G) up to one constant."""
    convention = CopyTaskConvention(architecture="M", attention="linear", normalisation="G/L",
                                    sigma_W2=0.7, beta0=1.3, d=0.0)
    L, V, P = 3, 2, 5
    data = copy_task_batch([P], L, V, seeds=[0])
    model = CopyAttentionModel(1, L, V, convention)
    generator = torch.Generator().manual_seed(4)
    differences = []
    for _ in range(3):
        G = torch.randn(L, L, generator=generator, dtype=torch.float64)
        def potential(readout):
            parameters = {"attention_logits.weights": G[None], "head.readout": readout.reshape(1, V, V)}
            return torch.func.functional_call(model, parameters, (data,))[0]

        zero = torch.zeros(V * V, dtype=torch.float64)
        U0 = potential(zero)
        gradient = torch.autograd.functional.jacobian(potential, zero)
        hessian = torch.autograd.functional.hessian(potential, zero)
        log_integral = (-U0 + 0.5 * gradient @ torch.linalg.solve(hessian, gradient)
                        - 0.5 * torch.linalg.slogdet(hessian)[1])
        S = marginal_action(G[None], data.one_hot(), data.targets, convention)[0]
        differences.append((-log_integral - S).item())
    assert differences[1] == pytest.approx(differences[0], abs=1e-9)
    assert differences[2] == pytest.approx(differences[0], abs=1e-9)


def _compare(chains, burn_in, draws, thin, objective="joint"):
    L, V, P = 2, 3, 12
    convention = CopyTaskConvention(architecture="M", attention="linear", normalisation="G", d=0.0)
    data = copy_task_batch([P], L, V, seeds=[3])
    exact = posterior_expectations(data.one_hot(), data.targets, convention, samples=200_000)
    assert exact["ess"][0] > 10_000
    batch = copy_task_batch([P] * chains, L, V, seeds=[3] * chains)
    model = CopyAttentionModel(chains, L, V, convention)
    model.initialise(["uniform", "copy"] * (chains // 2), list(range(chains)), noise=0.3)
    samples = sample_sgld(model, batch, batch, burn_in=burn_in, draws=draws, thin=thin, step_fraction=0.03, seed=1,
                          objective=objective)
    z_scores = {}
    for key in ("c1", "cG", "coverage"):
        mean, error = mean_and_standard_error(getattr(samples, key).numpy())
        reference, reference_error = exact[key]
        z_scores[key] = (mean - reference) / (error**2 + reference_error**2) ** 0.5
    assert max(abs(z) for z in z_scores.values()) < 4.0, (z_scores, exact)
    return exact


def test_sgld_posterior_mean_of_order_parameters_matches_exact_marginal():
    exact = _compare(chains=256, burn_in=1500, draws=60, thin=25)
    # the instance is informative: a clear copy component, not the prior's zero
    assert exact["cG"][0] > 0.4


def test_sgld_on_the_readout_marginal_samples_the_same_posterior():
    _compare(chains=256, burn_in=1500, draws=60, thin=25, objective="marginal")


@pytest.mark.slow
def test_sgld_posterior_mean_matches_exact_marginal_long_chains():
    _compare(chains=2000, burn_in=3000, draws=200, thin=30)
