"""The tilted double well U(x) = h (x^2 - 1)^2 + t x shared by the umbrella and window-placement tests: its exact
free-energy difference by quadrature, and HMC draws in harmonic windows on x.
"""

import numpy as np
import torch

from emergence.validation.samplers.adaptation import adapt_and_sample
from emergence.validation.samplers.hmc import HMC, HMCSettings


def exact_delta_F(height: float, tilt: float) -> float:
    """-ln(P(x >= 0) / P(x < 0)) by quadrature of e^{-U} (trapezoid, 200,001 points on [-4, 4])."""
    x = np.linspace(-4.0, 4.0, 200_001)
    density = np.exp(-(height * (x**2 - 1) ** 2 + tilt * x))
    return float(-np.log(np.trapezoid(density * (x >= 0), x) / np.trapezoid(density * (x < 0), x)))


def window_draws(height: float, tilt: float, windows, kappa, chains: int, warmup: int, draws: int, step_size: float,
                 seed: int) -> np.ndarray:
    """HMC (8 leapfrog steps) in each window ``windows (K,)`` of stiffness ``kappa (K,)``, windows x chains batched
    as runs, each chain started at its centre: draws of x, shape (K, chains, draws)."""
    centres = torch.tensor(np.repeat(windows, chains), dtype=torch.float64)
    stiffness = torch.tensor(np.repeat(kappa, chains), dtype=torch.float64)
    x = torch.nn.Parameter(centres.clone()[:, None])

    def potential():
        return height * (x[:, 0] ** 2 - 1) ** 2 + tilt * x[:, 0] + 0.5 * stiffness * (x[:, 0] - centres) ** 2

    sampler = HMC([x], potential, HMCSettings(step_size=step_size, leapfrog_steps=8),
                  generator=torch.Generator().manual_seed(seed))
    recorded = adapt_and_sample(sampler, warmup=warmup, draws=draws, record=lambda: {"x": x[:, 0].detach().clone()})
    return recorded["x"].numpy().reshape(len(windows), chains, -1)
