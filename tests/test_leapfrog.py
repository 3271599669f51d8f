"""The leapfrog integrator (validation/samplers/leapfrog.py) against a scalar transcription of Störmer–Verlet,
reversible, with an O(eps^2) energy error; a full last momentum step (a broken integrator) fails reversibility."""

import math

import pytest
import torch

from emergence.validation.samplers import leapfrog as integrator
from emergence.validation.samplers.leapfrog import leapfrog, potential_and_gradient

EPS64 = torch.finfo(torch.float64).eps


def quartic(theta):
    """U = sum(theta^2 / 2 + theta^4 / 4) per chain, for theta (R, d)."""
    return (0.5 * theta**2 + 0.25 * theta**4).sum(-1)


def scalar_verlet(x, p, eps, mass_inverse, steps):
    """Störmer–Verlet for U(x) = x^2/2 + x^4/4 written out for one coordinate: half kick, drifts and kicks, half kick."""
    force = lambda y: -(y + y**3)  # noqa: E731
    for _ in range(steps):
        p += 0.5 * eps * force(x)
        x += eps * mass_inverse * p
        p += 0.5 * eps * force(x)
    return x, p


def _grad(theta):
    leaf = theta.detach().requires_grad_(True)
    return potential_and_gradient(lambda: quartic(leaf), [leaf])


def run(theta0, p0, eps, mass_inverse, steps, integrate=leapfrog):
    theta, p = theta0.clone(), p0.clone()
    _, start_gradients = _grad(theta)
    potential, _ = integrate([theta], [p], start_gradients, lambda: _grad(theta), eps, [mass_inverse], steps)
    return theta, p, potential


def draws(chains=5, d=2, seed=0):
    generator = torch.Generator().manual_seed(seed)
    theta0 = torch.randn(chains, d, generator=generator, dtype=torch.float64)
    p0 = torch.randn(chains, d, generator=generator, dtype=torch.float64)
    eps = 0.05 + 0.1 * torch.rand(chains, generator=generator, dtype=torch.float64)
    mass_inverse = 0.5 + torch.rand(chains, d, generator=generator, dtype=torch.float64)
    return theta0, p0, eps, mass_inverse


def test_leapfrog_is_the_scalar_stormer_verlet_chain_by_chain():
    theta0, p0, eps, mass_inverse = draws()
    theta, p, _ = run(theta0, p0, eps, mass_inverse, steps=12)
    for r in range(theta0.shape[0]):
        for k in range(theta0.shape[1]):
            x, q = scalar_verlet(float(theta0[r, k]), float(p0[r, k]), float(eps[r]), float(mass_inverse[r, k]), 12)
            # the same operations in another grouping (kicks merged): a few rounding units of O(1) values
            assert abs(float(theta[r, k]) - x) < 64 * EPS64 and abs(float(p[r, k]) - q) < 64 * EPS64


def test_leapfrog_is_reversible_and_its_energy_error_is_second_order():
    theta0, p0, eps, mass_inverse = draws(seed=1)
    theta, p, _ = run(theta0, p0, eps, mass_inverse, steps=20)
    back, p_back, _ = run(theta, -p, eps, mass_inverse, steps=20)
    assert torch.allclose(back, theta0, rtol=0, atol=256 * EPS64) and torch.allclose(-p_back, p0, rtol=0, atol=256 * EPS64)

    def energy_error(scale):  # the same trajectory length, step size scaled
        steps = round(20 / scale)
        theta, p, potential = run(theta0, p0, eps * scale, mass_inverse, steps)
        start = quartic(theta0) + 0.5 * (p0 * p0 * mass_inverse).sum(-1)
        return (potential + 0.5 * (p * p * mass_inverse).sum(-1) - start).abs().max().item()

    ratio = energy_error(1.0) / energy_error(0.5)
    assert 3.0 < ratio < 5.0, ratio  # halving eps quarters the error


def test_a_full_last_momentum_step_breaks_reversibility():
    """Mutation: the last kick a full step (what the half step at the trajectory's end is there for)."""
    def broken(positions, momenta, gradients, potential_and_gradient, step_size, inverse_mass, steps):
        for p, g in zip(momenta, gradients):
            p -= 0.5 * integrator.per_chain(step_size, p) * g
        for _ in range(steps):
            for theta, p, m in zip(positions, momenta, inverse_mass):
                theta += integrator.per_chain(step_size, p) * m * p
            potential, gradients = potential_and_gradient()
            for p, g in zip(momenta, gradients):
                p -= integrator.per_chain(step_size, p) * g
        return potential, gradients

    theta0, p0, eps, mass_inverse = draws(seed=1)
    theta, p, _ = run(theta0, p0, eps, mass_inverse, steps=20, integrate=broken)
    back, _, _ = run(theta, -p, eps, mass_inverse, steps=20, integrate=broken)
    assert (back - theta0).abs().max() > 1e-3


@pytest.mark.parametrize("steps", [1, 3])
def test_leapfrog_takes_one_gradient_per_step(steps):
    theta0, p0, eps, mass_inverse = draws()
    calls = []

    def counted():
        calls.append(1)
        return _grad(theta)

    theta, p = theta0.clone(), p0.clone()
    leapfrog([theta], [p], _grad(theta)[1], counted, eps, [mass_inverse], steps)
    assert len(calls) == steps and math.isfinite(float(theta.sum()))
