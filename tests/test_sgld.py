"""SGLD: the pinned SGD equivalence and exact Gaussian posterior moments (z-tests with ESS)."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.validation.samplers.diagnostics import effective_sample_size, mean_and_standard_error
from emergence.validation.samplers.sgld import SGLD, Langevin, SGLDSettings


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _quadratic_loss(w, target):
    """A quadratic with a bounded sine ripple: with lr <= 0.1 its gradient steps contract, so no draw overflows to
    inf/NaN (a quartic here diverged at lr = 0.1 for some seeds, and NaN != NaN failed the exact comparison)."""
    return ((w - target) ** 2).sum() + (w * target).sin().sum()


@settings(max_examples=15)
@given(st.floats(1e-4, 0.1), st.integers(1, 6), st.integers(0, 2**16))
def test_noiseless_sgld_with_double_step_equals_sgd(eta, size, seed):
    generator = torch.Generator().manual_seed(seed)
    start = torch.randn(size, generator=generator)
    target = torch.randn(size, generator=generator)
    w_sgd = torch.nn.Parameter(start.clone())
    w_sgld = torch.nn.Parameter(start.clone())
    sgd = torch.optim.SGD([w_sgd], lr=eta)
    sgld = SGLD([w_sgld], lr=2 * eta, noise_level=0.0, localization=0.0, nbeta=1.0)
    for _ in range(5):
        for w, optimiser in ((w_sgd, sgd), (w_sgld, sgld)):
            optimiser.zero_grad()
            _quadratic_loss(w, target).backward()
            optimiser.step()
        # exact by design: both are p.add_(grad, alpha=-eta) on equal operands (0.5 * (2 eta) and grad * 1.0 are exact)
        assert torch.equal(w_sgd, w_sgld)


def test_nbeta_weight_decay_and_localization_enter_the_drift():
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0], dtype=torch.float64))
    sampler = SGLD([w], lr=0.2, noise_level=0.0, weight_decay=0.5, localization=3.0, nbeta=4.0)
    w.grad = torch.tensor([0.25, 1.0], dtype=torch.float64)
    sampler.step()  # w0 = w, so the localization term vanishes on the first step
    expected = torch.tensor([1.0, -2.0]) - 0.1 * (4.0 * torch.tensor([0.25, 1.0]) + 0.5 * torch.tensor([1.0, -2.0]))
    torch.testing.assert_close(w.detach(), expected.double())
    w.grad = torch.zeros(2, dtype=torch.float64)
    before = w.detach().clone()
    sampler.step()
    drift = 0.5 * before + 3.0 * (before - torch.tensor([1.0, -2.0], dtype=torch.float64))
    torch.testing.assert_close(w.detach(), before - 0.1 * drift)


def test_per_chain_step_sizes_match_separate_samplers_without_noise():
    start = torch.randn(3, 4)
    lrs = torch.tensor([0.1, 0.01, 0.3]).reshape(3, 1)
    batched = torch.nn.Parameter(start.clone())
    sampler = SGLD([batched], lr=lrs, noise_level=0.0)
    (0.5 * batched.pow(2).sum()).backward()
    sampler.step()
    for r in range(3):
        single = torch.nn.Parameter(start[r].clone())
        one = SGLD([single], lr=float(lrs[r]), noise_level=0.0)
        (0.5 * single.pow(2).sum()).backward()
        one.step()
        torch.testing.assert_close(batched[r].detach(), single.detach())


def test_gaussian_potential_samples_the_exact_posterior():
    """U(w) = (w-mu)^T H (w-mu)/2 -> N(mu, H^{-1}); z-tests on mean and covariance with ESS."""
    generator = torch.Generator().manual_seed(1234)
    mu = torch.tensor([0.7, -1.2], dtype=torch.float64)
    H = torch.tensor([[1.5, 0.4], [0.4, 1.0]], dtype=torch.float64)
    covariance = torch.linalg.inv(H)
    chains, lr, burn_in, draws, thin = 1000, 0.004, 2000, 200, 10
    w = torch.nn.Parameter(torch.zeros(chains, 2, dtype=torch.float64))
    sampler = SGLD([w], lr=lr, generator=generator)
    samples = []
    for step in range(burn_in + draws * thin):
        sampler.zero_grad()
        delta = w - mu
        (0.5 * (delta @ H * delta).sum()).backward()
        sampler.step()
        if step >= burn_in and (step - burn_in) % thin == 0:
            samples.append(w.detach().clone())
    x = torch.stack(samples, dim=1).numpy()  # (chains, draws, 2)
    z_scores = []
    for i in range(2):
        mean, error = mean_and_standard_error(x[..., i])
        z_scores.append((mean - mu[i].item()) / error)
        for j in range(i, 2):
            product = (x[..., i] - mu[i].item()) * (x[..., j] - mu[j].item())
            mean, error = mean_and_standard_error(product)
            z_scores.append((mean - covariance[i, j].item()) / error)
    # discretisation bias of the variance is ~ lr*h/4 <= 0.2 %, well under one standard error
    assert max(abs(z) for z in z_scores) < 4.0, z_scores
    assert effective_sample_size(x[..., 0]) > 1000


def test_the_kernel_and_the_optimiser_are_one_update():
    """The Langevin kernel (its state keeps the gradient) and the optimiser (``p.grad`` from ``backward``) move the
    same chains to the same bits, every setting on; the kernel takes one gradient per step, plus one at init."""
    settings = dict(noise_level=0.7, weight_decay=0.3, localization=2.0, nbeta=5.0)
    lr = torch.tensor([0.001, 0.01, 0.02], dtype=torch.float64).reshape(3, 1)
    start = torch.randn(3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    w_optimiser, w_kernel = torch.nn.Parameter(start.clone()), torch.nn.Parameter(start.clone())
    optimiser = SGLD([w_optimiser], lr=lr, generator=torch.Generator().manual_seed(9), **settings)
    calls = []

    def quartic(w):
        return ((w - 0.5) ** 4).sum(-1)

    def counted():
        calls.append(1)
        return quartic(w_kernel)

    kernel = Langevin([w_kernel], counted, SGLDSettings(**settings), lr, generator=torch.Generator().manual_seed(9))
    state = kernel.init()
    for _ in range(40):
        optimiser.zero_grad()
        quartic(w_optimiser).sum().backward()
        optimiser.step()
        state, info = kernel.step(state)
    assert torch.equal(w_optimiser, w_kernel)
    assert torch.equal(state.potential, quartic(w_kernel).detach())
    assert len(calls) == 1 + 40 and info.gradients == 1


@pytest.mark.parametrize("bad", [{"noise_level": -1.0}, {"noise_level": math.nan}, {"nbeta": 0.0},
                                 {"weight_decay": math.inf}])
def test_settings_refuse_values_that_cannot_run(bad):
    with pytest.raises(ValueError):
        SGLDSettings(**bad)
    with pytest.raises(ValueError):
        SGLD([torch.nn.Parameter(torch.zeros(2))], lr=0.1, **bad)
    with pytest.raises(ValueError, match="positive step size"):
        SGLD([torch.nn.Parameter(torch.zeros(2))], lr=0.0)


def test_effective_sample_size_of_an_ar1_chain():
    rng = np.random.default_rng(5)
    rho, n = 0.9, 20000
    x = np.empty((4, n))
    x[:, 0] = rng.normal(size=4) / math.sqrt(1 - rho**2)
    for t in range(1, n):
        x[:, t] = rho * x[:, t - 1] + rng.normal(size=4)
    expected = 4 * n * (1 - rho) / (1 + rho)
    assert effective_sample_size(x) == pytest.approx(expected, rel=0.15)
