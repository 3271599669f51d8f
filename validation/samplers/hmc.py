r"""Metropolis-adjusted Hamiltonian Monte Carlo, batched over chains, in the ``step(state) -> (state, info)`` shape.

:class:`HMC` samples :math:`\pi(\theta) \propto e^{-U(\theta)}` exactly (the Metropolis test removes the
leapfrog discretisation bias that SGLD keeps).  Its settings are a frozen :class:`HMCSettings`; its state
(:class:`~emergence.validation.samplers.leapfrog.ChainState`) carries the potential and its gradient at the current positions, so a trajectory starts
from the gradient the previous one ended with and costs ``leapfrog_steps`` gradients, not one more; each
:meth:`HMC.step` returns the new state and an :class:`HMCInfo` (acceptance, energy error).  The integrator is
:func:`~emergence.validation.samplers.leapfrog.leapfrog`; the warm-up that tunes each chain's step size and
diagonal mass matrix drives this kernel from outside
(:func:`~emergence.validation.samplers.adaptation.adapt_and_sample`).

Batched chains: every parameter has a leading chain axis ``(R, ...)`` and the potential returns the potentials
``(R,)`` of ``R`` independent chains (their sum's gradient is each chain's own gradient), so chains and umbrella
windows are one tensor program.

>>> theta = torch.nn.Parameter(torch.zeros(2, 1))
>>> sampler = HMC([theta], lambda: 0.5 * (theta**2).sum(-1), HMCSettings(step_size=0.5, leapfrog_steps=5),
...               generator=torch.Generator().manual_seed(0))
>>> state, info = sampler.step(sampler.init())
>>> tuple(info.acceptance_probability.shape), info.gradients
((2,), 5)
>>> HMCSettings(leapfrog_steps=0)
Traceback (most recent call last):
...
ValueError: HMC needs leapfrog_steps >= 1, got 0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from emergence.validation.samplers.leapfrog import ChainState, leapfrog, per_chain, potential_and_gradient


@dataclass(frozen=True)
class HMCSettings:
    r"""What an :class:`HMC` run is set to: the first step size :math:`\epsilon` (the warm-up tunes it per chain),
    the leapfrog steps :math:`n` per trajectory, and the acceptance the warm-up aims for (:math:`\delta`)."""

    step_size: float = 0.1
    leapfrog_steps: int = 20
    target_acceptance: float = 0.8

    def __post_init__(self):
        if not (isinstance(self.step_size, (int, float)) and math.isfinite(self.step_size) and self.step_size > 0):
            raise ValueError(f"HMC needs a positive finite step size, got {self.step_size}")
        if isinstance(self.leapfrog_steps, bool) or not isinstance(self.leapfrog_steps, int) or self.leapfrog_steps < 1:
            raise ValueError(f"HMC needs leapfrog_steps >= 1, got {self.leapfrog_steps}")
        if not 0 < self.target_acceptance < 1:
            raise ValueError(f"HMC needs a target acceptance in (0, 1), got {self.target_acceptance}")


@dataclass(frozen=True)
class HMCInfo:
    r"""One trajectory of every chain: :math:`\min(1, e^{H_0 - H_n})` ``(R,)`` (0 for a non-finite :math:`H_n`),
    whether it was accepted ``(R,)``, the energy error :math:`H_n - H_0` ``(R,)``, and the gradients it took."""

    acceptance_probability: torch.Tensor
    accepted: torch.Tensor
    energy_error: torch.Tensor
    gradients: int


class HMC:
    r"""One Hamiltonian trajectory per chain per :meth:`step`, accepted or rejected chain by chain.

    With inverse mass :math:`M^{-1}` (diagonal, per chain), step size :math:`\epsilon` and :math:`n` leapfrog
    steps (:func:`~emergence.validation.samplers.leapfrog.leapfrog`), from :math:`\theta_0` with momentum
    :math:`p_0 \sim \mathcal N(0, M)`, the proposal :math:`(\theta_n, p_n)` is accepted with probability
    :math:`\min(1, e^{H_0 - H_n})`, :math:`H = U(\theta) + \tfrac12 p^\top M^{-1} p`.  Leapfrog is volume
    preserving and reversible, so this leaves :math:`e^{-U}` invariant for any :math:`\epsilon` and :math:`M`
    (a wrong acceptance rule does not: ``tests/test_hmc.py`` shows it failing a Gaussian's moments).  Each
    chain's :math:`\epsilon` is jittered uniformly in :math:`[0.9, 1.1]\epsilon` per trajectory, which breaks
    periodic orbits.

    ``parameters``: the positions, each ``(R, ...)``; ``potential()`` returns the potentials ``(R,)`` at them
    (no ``backward`` needed).  :attr:`step_size` ``(R,)`` and :attr:`inverse_mass` (one tensor per parameter,
    broadcastable to it; default 1) are what the warm-up adapts; :attr:`gradient_evaluations` counts the
    gradients taken.  :meth:`init` is the state at the current parameters (one gradient); call it again after
    anything else moves the parameters (a window exchange).
    """

    def __init__(self, parameters: Sequence[torch.Tensor], potential: Callable[[], torch.Tensor],
                 settings: HMCSettings, inverse_mass: list[torch.Tensor] | None = None,
                 generator: torch.Generator | None = None):
        self.parameters = list(parameters)
        self.potential = potential
        self.settings = settings
        self.runs = self.parameters[0].shape[0]
        reference = self.parameters[0]
        self.step_size = torch.full((self.runs,), float(settings.step_size), dtype=reference.dtype,
                                    device=reference.device)
        self.inverse_mass = inverse_mass or [torch.ones_like(p) for p in self.parameters]
        self.generator = generator
        self.gradient_evaluations = 0

    def _potential_and_gradient(self) -> tuple[torch.Tensor, list[torch.Tensor]]:
        self.gradient_evaluations += 1
        return potential_and_gradient(self.potential, self.parameters)

    def init(self) -> ChainState:
        """The state at the current parameters: the potential and its gradient (one gradient evaluation)."""
        potential, gradients = self._potential_and_gradient()
        return ChainState(tuple(self.parameters), potential, tuple(gradients))

    def _kinetic(self, momenta) -> torch.Tensor:
        return sum(0.5 * (p * p * m).flatten(1).sum(1) for p, m in zip(momenta, self.inverse_mass))

    def log_acceptance(self, start_energy: torch.Tensor, end_energy: torch.Tensor) -> torch.Tensor:
        r""":math:`\ln\min(1, e^{H_0 - H_n})` per chain (non-finite :math:`H_n` gives :math:`-\infty`)."""
        log_ratio = (start_energy - end_energy).clamp(max=0.0)
        return torch.where(torch.isfinite(end_energy), log_ratio, torch.full_like(log_ratio, -math.inf))

    def _draw(self, shape) -> torch.Tensor:
        reference = self.parameters[0]
        return torch.rand(shape, generator=self.generator, dtype=reference.dtype, device="cpu").to(reference.device)

    @torch.no_grad()
    def step(self, state: ChainState) -> tuple[ChainState, HMCInfo]:
        """One trajectory of every chain from ``state`` (which must be at the current parameters)."""
        device, dtype = self.parameters[0].device, self.parameters[0].dtype
        start = [p.detach().clone() for p in self.parameters]
        momenta = [torch.randn(p.shape, generator=self.generator, dtype=dtype, device="cpu").to(device)
                   / m.sqrt() for p, m in zip(self.parameters, self.inverse_mass)]
        epsilon = self.step_size * (0.9 + 0.2 * self._draw(self.runs))
        start_energy = state.potential + self._kinetic(momenta)
        potential, gradients = leapfrog(self.parameters, momenta, state.gradients, self._potential_and_gradient,
                                        epsilon, self.inverse_mass, self.settings.leapfrog_steps)
        end_energy = potential + self._kinetic(momenta)
        log_accept = self.log_acceptance(start_energy, end_energy)
        rejected = ~(torch.log(self._draw(self.runs)) < log_accept)
        for theta, theta_0 in zip(self.parameters, start):
            theta.copy_(torch.where(per_chain(rejected, theta), theta_0, theta))
        kept = ChainState(state.positions, torch.where(rejected, state.potential, potential),
                        tuple(torch.where(per_chain(rejected, g), g_0, g) for g_0, g in zip(state.gradients, gradients)))
        info = HMCInfo(log_accept.exp(), ~rejected, end_energy - start_energy, self.settings.leapfrog_steps)
        return kept, info
