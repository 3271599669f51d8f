r"""Replica exchange (parallel tempering) on top of the SGLD optimiser, batched over chains.

Each of ``chains`` independent chains is a ladder of ``K`` replicas at temperatures
:math:`T_0 < T_1 < \dots < T_{K-1}`, one of which is the target :math:`T = 1`; replica
:math:`k` samples :math:`e^{-U/T_k}` (full tempering) or :math:`e^{-U_0 - U_1/T_k}` when the
potential is split into an untempered part :math:`U_0` (a prior) and a tempered part
:math:`U_1` (a likelihood; rungs with :math:`T < 1` then act like more data).
All :math:`R = \text{chains}\cdot K` replicas live in one parameter tensor with a leading
run axis, run :math:`r = cK + k` (chain :math:`c`, rung :math:`k`), so one potential call
and one backward pass move every replica.  See :class:`ReplicaExchange` for the update and
swap equations.

>>> import torch
>>> x = torch.nn.Parameter(torch.zeros(2 * 3, 1, dtype=torch.float64))
>>> settings = ReplicaExchangeSettings(geometric_ladder(3, 4.0).tolist(), chains=2)
>>> sampler = ReplicaExchange([x], lambda: 0.5 * (x**2).sum(dim=1), settings, step_sizes=0.1,
...                           generator=torch.Generator().manual_seed(0))
>>> sampler.run(200)
>>> tuple(sampler.swap_acceptance().shape)
(2,)
>>> sampler.cold_runs().tolist()
[0, 3]
>>> split = ReplicaExchange([x], lambda: (0.5 * (x**2).sum(dim=1), (x**2).sum(dim=1)),
...                         ReplicaExchangeSettings((0.5, 1.0, 2.0), chains=2), step_sizes=0.1)
>>> split.cold_runs().tolist()
[1, 4]
>>> ReplicaExchangeSettings((2.0, 1.0), chains=2)
Traceback (most recent call last):
...
ValueError: temperatures must increase along the ladder, got (2.0, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import torch

from emergence.validation.samplers.sgld import SGLD


def geometric_ladder(rungs: int, hottest: float) -> torch.Tensor:
    r"""Temperatures :math:`T_k = T_{\max}^{k/(K-1)}`, :math:`k = 0..K-1` (``(K,)`` float64; ``[1.]`` for K = 1).

    >>> geometric_ladder(3, 4.0).tolist()
    [1.0, 2.0, 4.0]
    """
    if rungs < 1 or not hottest >= 1.0:
        raise ValueError(f"need rungs >= 1 and hottest temperature >= 1, got {rungs}, {hottest}")
    if rungs == 1:
        return torch.ones(1, dtype=torch.float64)
    return torch.tensor(float(hottest), dtype=torch.float64) ** (torch.arange(rungs, dtype=torch.float64) / (rungs - 1))


@dataclass(frozen=True)
class ReplicaExchangeSettings:
    r"""The ladder :math:`T_0 < \dots < T_{K-1}` (``temperatures``, containing the target 1 once), the number of
    independent ladders (``chains``) and the moves between swap rounds (``swap_every``)."""

    temperatures: tuple[float, ...]
    chains: int
    swap_every: int = 10

    def __post_init__(self):
        object.__setattr__(self, "temperatures", tuple(float(t) for t in self.temperatures))
        ladder = self.temperatures
        if any(high <= low for low, high in zip(ladder, ladder[1:])):
            raise ValueError(f"temperatures must increase along the ladder, got {ladder}")
        if ladder.count(1.0) != 1:
            raise ValueError(f"the ladder must contain the target temperature 1 exactly once, got {ladder}")
        if self.chains < 1:
            raise ValueError(f"replica exchange needs chains >= 1, got {self.chains}")
        if self.swap_every < 1:
            raise ValueError(f"swap_every must be >= 1, got {self.swap_every}")


class ReplicaExchange:
    r"""Batched parallel tempering with SGLD moves and deterministic even–odd swaps.

    **Move.**  Every replica takes an SGLD step (:class:`~emergence.validation.samplers.sgld.SGLD`)
    on its tempered potential :math:`E_r = U_0 + U_1/T_{k(r)}` (full tempering: :math:`U_0 = 0`,
    :math:`U_1 = U`),

    .. math::
        \theta_r \leftarrow \theta_r - \frac{\epsilon_r}{2}\,\nabla E_r(\theta_r)
        + \sqrt{\epsilon_r}\,\xi_r, \qquad \xi_r \sim \mathcal N(0, I),

    whose stationary law is :math:`\propto e^{-E_r}` up to the :math:`O(\epsilon h)`
    discretisation bias of SGLD.  Step sizes are per replica (``step_sizes``, shape ``(R,)`` or
    a float); with curvature :math:`h` of :math:`U` the tempered curvature is :math:`h/T`, so
    :math:`\epsilon_r = \kappa T_{k(r)}/h_r` keeps the same relative step on every rung.

    **Swap.**  Every ``swap_every`` moves, in every chain, the neighbouring pairs
    :math:`(k, k+1)` with :math:`k` even (then, at the next swap, :math:`k` odd) propose to
    exchange their states.  The pair is accepted with the Metropolis probability

    .. math::
        \alpha_k = \min\Big\{1,\ \exp\big[(T_k^{-1} - T_{k+1}^{-1})\,
        (U_1(\theta_k) - U_1(\theta_{k+1}))\big]\Big\},

    which keeps the product law :math:`\prod_k e^{-U_0(\theta_k) - U_1(\theta_k)/T_k}` invariant
    (:math:`U_0` cancels), so the target rung :math:`T = 1` samples :math:`e^{-U_0 - U_1}` while
    the other rungs carry it across barriers.

    ``potential()`` returns :math:`U_r` for every run, shape ``(R,)`` (full tempering), or the
    pair :math:`(U_{0,r}, U_{1,r})`, from the current ``parameters`` (each of shape ``(R, ...)``).  The ladder,
    ladders and swap period are a :class:`ReplicaExchangeSettings`; ``step_sizes`` (a float or ``(R,)``) are the
    SGLD moves'.  :meth:`swap_acceptance` reports the accepted fraction per rung pair, ``(K-1,)``.
    """

    def __init__(
        self,
        parameters: Sequence[torch.Tensor],
        potential: Callable[[], torch.Tensor],
        settings: ReplicaExchangeSettings,
        step_sizes: float | torch.Tensor,
        generator: torch.Generator | None = None,
    ):
        self.parameters = list(parameters)
        self.potential = potential
        self.settings = settings
        self.temperatures = torch.tensor(settings.temperatures, dtype=torch.float64)
        self.rungs = len(settings.temperatures)
        self.chains = settings.chains
        runs = self.chains * self.rungs
        if any(p.shape[0] != runs for p in self.parameters):
            raise ValueError(f"every parameter needs a leading axis of chains * rungs = {runs}")
        self.target_rung = settings.temperatures.index(1.0)
        self.swap_every = settings.swap_every
        self.generator = generator
        device = self.parameters[0].device
        self.run_temperature = self.temperatures.to(device).repeat(self.chains)
        if not isinstance(step_sizes, torch.Tensor):
            step_sizes = torch.full((runs,), float(step_sizes), dtype=torch.float64)
        step_shape = (-1,) + (1,) * (self.parameters[0].dim() - 1)
        self.sgld = SGLD(self.parameters, lr=step_sizes.to(device).reshape(step_shape), generator=generator)
        self.moves = 0
        self.swaps = 0
        self.attempted = torch.zeros(max(self.rungs - 1, 0), dtype=torch.float64)
        self.accepted = torch.zeros(max(self.rungs - 1, 0), dtype=torch.float64)
        self.last_potential: torch.Tensor | None = None

    def cold_runs(self) -> torch.Tensor:
        """Run indices of the target (:math:`T = 1`) replicas, one per chain, ``(chains,)``."""
        return torch.arange(self.chains) * self.rungs + self.target_rung

    def _split(self) -> tuple[torch.Tensor | None, torch.Tensor]:
        energy = self.potential()
        if isinstance(energy, tuple):
            return energy
        return None, energy

    def move(self) -> torch.Tensor:
        """One SGLD move of every replica on :math:`U_0 + U_1/T`; returns :math:`U_0 + U_1` before the move, ``(R,)``."""
        self.sgld.zero_grad(set_to_none=True)
        untempered, tempered = self._split()
        total = tempered / self.run_temperature.to(tempered.dtype)
        if untempered is not None:
            total = total + untempered
        total.sum().backward()
        energy = tempered if untempered is None else untempered + tempered
        self.sgld.step()
        self.moves += 1
        self.last_potential = energy.detach()
        if self.moves % self.swap_every == 0:
            self.swap()
        return self.last_potential

    @torch.no_grad()
    def swap(self) -> None:
        """Propose the even (or odd) neighbour swaps in every chain; accept by the Metropolis rule."""
        if self.rungs < 2:
            return
        first = self.swaps % 2
        self.swaps += 1
        lower = torch.arange(first, self.rungs - 1, 2)
        if lower.numel() == 0:
            return
        energy = self._split()[1].detach().to(torch.float64).cpu().reshape(self.chains, self.rungs)
        beta = 1.0 / self.temperatures
        log_ratio = (beta[lower] - beta[lower + 1]) * (energy[:, lower] - energy[:, lower + 1])
        uniform = torch.rand(log_ratio.shape, generator=self.generator, dtype=torch.float64,
                             device=self.generator.device if self.generator is not None else "cpu").cpu()
        accept = torch.log(uniform) < log_ratio  # NaN energies are never accepted
        self.attempted[lower] += self.chains
        self.accepted[lower] += accept.sum(dim=0).to(torch.float64)
        permutation = torch.arange(self.chains * self.rungs).reshape(self.chains, self.rungs)
        chain_index, pair_index = torch.nonzero(accept, as_tuple=True)
        k = lower[pair_index]
        permutation[chain_index, k] = chain_index * self.rungs + k + 1
        permutation[chain_index, k + 1] = chain_index * self.rungs + k
        permutation = permutation.flatten().to(self.parameters[0].device)
        for parameter in self.parameters:
            parameter.copy_(parameter[permutation])

    def run(self, moves: int) -> None:
        """``moves`` moves (with their scheduled swaps)."""
        for _ in range(moves):
            self.move()

    def swap_acceptance(self) -> torch.Tensor:
        """Accepted fraction of the proposed swaps per rung pair :math:`(k, k+1)`, ``(K-1,)`` (NaN if none proposed)."""
        return self.accepted / self.attempted
