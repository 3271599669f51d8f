r"""Hamiltonian replica exchange between neighbouring umbrella windows, batched over chains.

Window :math:`k` samples :math:`\pi_k(\theta) \propto e^{-U(\theta) - w_k(\xi(\theta))}` with the harmonic
bias :math:`w_k(\xi) = \tfrac{\kappa_k}{2}(\xi - \xi_k)^2` (:mod:`~emergence.validation.samplers.umbrella`).
A window on a barrier whose bias is softer than the barrier's curvature is itself bistable, and its
chains split between the two sides.  Exchange lets configurations walk along the windows to the
ends of the ladder, where the bias removes the barrier, and back: every ``every`` HMC trajectories
(:meth:`WindowExchange.after_trajectory`, which says whether a configuration moved, so that the sampler
recomputes the gradients it keeps) the pairs :math:`(k, k+1)` with :math:`k` even (then, at the
next exchange, :math:`k` odd) propose to swap their configurations :math:`\theta_k, \theta_{k+1}`, and
accept with

.. math::
    \alpha_k = \min\big(1, e^{-\Delta_k}\big), \qquad
    \Delta_k = w_k(\xi_{k+1}) + w_{k+1}(\xi_k) - w_k(\xi_k) - w_{k+1}(\xi_{k+1}),

the Metropolis rule of the product law :math:`\prod_k \pi_k` (the posterior potential :math:`U` is the
same in every window and cancels).  That law is invariant, so after the swap window :math:`k` still holds
a draw of :math:`\pi_k` and MBAR's input is unchanged in kind.  For equal stiffness
:math:`\Delta_k = \kappa\,(\xi_{k+1} - \xi_k)(c_{k+1} - c_k)` with :math:`c` the centres
(:func:`swap_energy_change`; ``tests/test_window_exchange.py`` checks the acceptance against its exact
value on Gaussian windows, and shows a flipped sign failing it).

Batched layout: run :math:`r = kC + c` is chain :math:`c` of window :math:`k` (``C`` chains per window, the
layout of :func:`~emergence.validation.copy_task.free_energy.run_free_energy_point`); chain :math:`c` of
window :math:`k` swaps with chain :math:`c` of window :math:`k+1`, so the ``C`` chains form ``C`` independent
ladders.  Each run slot keeps its own bias, step size and mass matrix (only configurations move).

>>> import torch
>>> x = torch.zeros(3 * 2, 1, dtype=torch.float64)
>>> settings = WindowExchangeSettings(centres=(-1.0, 0.0, 1.0), kappa=4.0, chains=2)
>>> exchange = WindowExchange([x], lambda: x[:, 0], settings, generator=torch.Generator().manual_seed(0))
>>> exchange.swap()  # equal xi everywhere: every proposal has Delta = 0 and is accepted
True
>>> exchange.acceptance().tolist()
[1.0, nan]
>>> WindowExchangeSettings(centres=(0.0, 1.0), kappa=4.0, chains=2, every=0)
Traceback (most recent call last):
...
ValueError: need every >= 1 trajectory between exchanges, got 0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch


def swap_energy_change(xi_low: torch.Tensor, xi_high: torch.Tensor, centre_low, centre_high, kappa_low,
                       kappa_high) -> torch.Tensor:
    r""":math:`\Delta = w_k(\xi_{k+1}) + w_{k+1}(\xi_k) - w_k(\xi_k) - w_{k+1}(\xi_{k+1})` of swapping the
    configurations of windows :math:`k` (``low``) and :math:`k+1` (``high``), elementwise over chains."""

    def bias(xi, centre, kappa):
        return 0.5 * kappa * (xi - centre) ** 2

    return (bias(xi_high, centre_low, kappa_low) + bias(xi_low, centre_high, kappa_high)
            - bias(xi_low, centre_low, kappa_low) - bias(xi_high, centre_high, kappa_high))


@dataclass(frozen=True)
class WindowExchangeSettings:
    r"""The windows' biases, centres :math:`\xi_k` ``(K,)`` and stiffness :math:`\kappa` (a float or ``(K,)``,
    non-negative, finite), the chains (ladders) per window, and the trajectories between exchanges (``every``)."""

    centres: tuple[float, ...]
    kappa: float | tuple[float, ...]
    chains: int
    every: int = 1

    def __post_init__(self):
        object.__setattr__(self, "centres", tuple(float(c) for c in self.centres))
        stiffness = np.broadcast_to(np.asarray(self.kappa, dtype=float), (len(self.centres),))
        object.__setattr__(self, "kappa", float(self.kappa) if np.ndim(self.kappa) == 0 else tuple(stiffness.tolist()))
        if not all(math.isfinite(c) for c in self.centres) or not all(math.isfinite(k) and k >= 0 for k in stiffness):
            raise ValueError(f"window exchange needs finite centres and stiffness >= 0, got {self.centres}, {self.kappa}")
        if self.chains < 1:
            raise ValueError(f"window exchange needs chains >= 1, got {self.chains}")
        if self.every < 1:
            raise ValueError(f"need every >= 1 trajectory between exchanges, got {self.every}")


class WindowExchange:
    r"""Even/odd neighbour swaps of configurations between umbrella windows (module docstring).

    ``parameters``: tensors with a leading run axis of ``K * chains`` (window-major); ``collective()``
    returns :math:`\xi` of every run, ``(K * chains,)``; ``settings`` the windows' biases, chains and period.  :meth:`after_trajectory` is the hook :func:`~emergence.validation.samplers.adaptation.adapt_and_sample`
    calls after every trajectory (it returns whether a configuration moved); :meth:`acceptance` is the accepted fraction per pair, ``(K-1,)``.
    """

    def __init__(self, parameters: Sequence[torch.Tensor], collective: Callable[[], torch.Tensor],
                 settings: WindowExchangeSettings, generator: torch.Generator | None = None):
        self.parameters = list(parameters)
        self.collective = collective
        self.settings = settings
        self.centres = torch.as_tensor(np.asarray(settings.centres, dtype=float), dtype=torch.float64)
        self.windows = int(self.centres.numel())
        self.kappa = torch.as_tensor(np.broadcast_to(np.asarray(settings.kappa, dtype=float), (self.windows,)).copy(),
                                     dtype=torch.float64)
        self.chains, self.every = settings.chains, settings.every
        if any(p.shape[0] != self.windows * self.chains for p in self.parameters):
            raise ValueError(f"every parameter needs a leading axis of windows * chains = {self.windows * self.chains}")
        self.generator = generator
        self.trajectories = 0
        self.exchanges = 0
        self.attempted = torch.zeros(max(self.windows - 1, 0), dtype=torch.float64)
        self.accepted = torch.zeros(max(self.windows - 1, 0), dtype=torch.float64)

    def after_trajectory(self) -> bool:
        """Count one trajectory; every ``every``-th, :meth:`swap`.  Whether a configuration moved."""
        self.trajectories += 1
        return self.trajectories % self.every == 0 and self.swap()

    @torch.no_grad()
    def swap(self) -> bool:
        """Propose the even (or odd, alternating) pairs of every ladder; accept each by the Metropolis rule.
        Whether any pair swapped (the parameters moved)."""
        first = self.exchanges % 2
        self.exchanges += 1
        low = torch.arange(first, self.windows - 1, 2)
        if low.numel() == 0:
            return False
        xi = self.collective().detach().to(torch.float64).cpu().reshape(self.windows, self.chains)
        change = swap_energy_change(xi[low], xi[low + 1], self.centres[low, None], self.centres[low + 1, None],
                                    self.kappa[low, None], self.kappa[low + 1, None])  # (pairs, chains)
        uniform = torch.rand(change.shape, generator=self.generator, dtype=torch.float64)
        accept = torch.log(uniform) < -change  # a NaN collective variable is never swapped
        self.attempted[low] += self.chains
        self.accepted[low] += accept.sum(dim=1).to(torch.float64)
        permutation = torch.arange(self.windows * self.chains).reshape(self.windows, self.chains)
        pair, chain = torch.nonzero(accept, as_tuple=True)
        k = low[pair]
        permutation[k, chain] = (k + 1) * self.chains + chain
        permutation[k + 1, chain] = k * self.chains + chain
        permutation = permutation.flatten().to(self.parameters[0].device)
        for parameter in self.parameters:
            parameter.copy_(parameter[permutation])
        return bool(accept.any())

    def acceptance(self) -> torch.Tensor:
        """Accepted fraction of the proposed swaps per neighbour pair :math:`(k, k+1)`, ``(K-1,)`` (NaN if none proposed)."""
        return self.accepted / self.attempted
