r"""Replica exchange (parallel tempering) with SGLD moves, batched over chains, in the ``step(state) -> (state, info)``
shape.

Each of ``chains`` independent chains is a ladder of ``K`` replicas at temperatures
:math:`T_0 < T_1 < \dots < T_{K-1}`, one of which is the target :math:`T = 1`; replica
:math:`k` samples :math:`e^{-U/T_k}` (full tempering) or :math:`e^{-U_0 - U_1/T_k}` when the
potential is split into an untempered part :math:`U_0` (a prior) and a tempered part
:math:`U_1` (a likelihood; rungs with :math:`T < 1` then act like more data).
All :math:`R = \text{chains}\cdot K` replicas live in one parameter tensor with a leading
run axis, run :math:`r = cK + k` (chain :math:`c`, rung :math:`k`), so one potential call
and one backward pass move every replica.  See :class:`ReplicaExchange` for the update and
swap equations.  Its settings are a frozen :class:`ReplicaExchangeSettings`; its state
(:class:`ReplicaExchangeState`) carries the positions, both parts of the potential and the gradient of the
tempered potential there, so a move takes one gradient (at the point it moves to) and a swap reads the
energies it compares from the state.

>>> import torch
>>> x = torch.nn.Parameter(torch.zeros(2 * 3, 1, dtype=torch.float64))
>>> settings = ReplicaExchangeSettings(geometric_ladder(3, 4.0).tolist(), chains=2)
>>> sampler = ReplicaExchange([x], lambda: 0.5 * (x**2).sum(dim=1), settings, step_sizes=0.1,
...                           generator=torch.Generator().manual_seed(0))
>>> state = sampler.run(sampler.init(), 200)
>>> tuple(state.potential.shape), tuple(sampler.swap_acceptance().shape)
((6,), (2,))
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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from emergence.validation.samplers.sgld import SGLDSettings, block_normal, check_step_size, langevin_update

LANGEVIN = SGLDSettings()
"""The moves' SGLD settings: unit noise, no weight decay or localization, ``nbeta`` 1 (the tempered potential
carries everything)."""


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


@dataclass(frozen=True)
class ReplicaExchangeState:
    r"""Every replica's positions (the sampler's parameters, moved in place, ``(R, ...)`` each), its untempered
    :math:`U_{0,r}` ``(R,)`` (``None`` under full tempering) and tempered :math:`U_{1,r}` ``(R,)`` potentials there,
    and the gradients of :math:`E_r = U_{0,r} + U_{1,r}/T_{k(r)}` (one per position tensor)."""

    positions: tuple[torch.Tensor, ...]
    untempered: torch.Tensor | None
    tempered: torch.Tensor
    gradients: tuple[torch.Tensor, ...]

    @property
    def potential(self) -> torch.Tensor:
        """:math:`U_0 + U_1` per replica, ``(R,)``: the untempered posterior potential."""
        return self.tempered if self.untempered is None else self.untempered + self.tempered


@dataclass(frozen=True)
class ReplicaExchangeInfo:
    """One move of every replica: whether a swap round followed and moved a configuration, and the gradients
    the step took (1, plus 1 where a swap moved configurations and the state was recomputed)."""

    swapped: bool
    gradients: int


class ReplicaExchange:
    r"""Batched parallel tempering with SGLD moves and deterministic even–odd swaps.

    **Move.**  Every replica takes an SGLD step (:func:`~emergence.validation.samplers.sgld.langevin_update`)
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
    SGLD moves'.  :meth:`init` is the state at the current parameters (one gradient), :meth:`step` one move with
    its scheduled swap, :meth:`run` several; :meth:`swap_acceptance` reports the accepted fraction per rung pair,
    ``(K-1,)``, and :attr:`gradient_evaluations` counts the gradients taken.
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
        check_step_size(step_sizes)
        step_shape = (-1,) + (1,) * (self.parameters[0].dim() - 1)
        self.step_size = step_sizes.to(device).reshape(step_shape)
        self.moves = 0
        self.swaps = 0
        self.gradient_evaluations = 0
        self.attempted = torch.zeros(max(self.rungs - 1, 0), dtype=torch.float64)
        self.accepted = torch.zeros(max(self.rungs - 1, 0), dtype=torch.float64)

    def cold_runs(self) -> torch.Tensor:
        """Run indices of the target (:math:`T = 1`) replicas, one per chain, ``(chains,)``."""
        return torch.arange(self.chains) * self.rungs + self.target_rung

    def _split(self) -> tuple[torch.Tensor | None, torch.Tensor]:
        energy = self.potential()
        if isinstance(energy, tuple):
            return energy
        return None, energy

    def init(self) -> ReplicaExchangeState:
        r"""The state at the current parameters: :math:`U_0, U_1` and the gradient of :math:`U_0 + U_1/T` (one
        gradient evaluation)."""
        self.gradient_evaluations += 1
        with torch.enable_grad():
            untempered, tempered = self._split()
            total = tempered / self.run_temperature.to(tempered.dtype)
            if untempered is not None:
                total = total + untempered
            gradients = torch.autograd.grad(total.sum(), self.parameters)
        return ReplicaExchangeState(tuple(self.parameters), None if untempered is None else untempered.detach(),
                                    tempered.detach(), tuple(g.detach() for g in gradients))

    def step(self, state: ReplicaExchangeState) -> tuple[ReplicaExchangeState, ReplicaExchangeInfo]:
        """One SGLD move of every replica on :math:`U_0 + U_1/T` from ``state`` (which must be at the current
        parameters), then, every ``swap_every`` moves, a swap round (:meth:`swap`)."""
        for position, gradient in zip(self.parameters, state.gradients):
            langevin_update(position, gradient, self.step_size, LANGEVIN,
                            lambda: block_normal(position.shape, [self.generator], None, position.device,
                                                 position.dtype))
        self.moves += 1
        state, swapped = self.init(), False
        if self.moves % self.swap_every == 0:
            state, swapped = self.swap(state)
        return state, ReplicaExchangeInfo(swapped, 1 + int(swapped))

    @torch.no_grad()
    def swap(self, state: ReplicaExchangeState) -> tuple[ReplicaExchangeState, bool]:
        """Propose the even (or odd) neighbour swaps in every chain, on the tempered potentials of ``state``; accept
        by the Metropolis rule.  The state after it (recomputed, one gradient, where a configuration moved) and
        whether one did."""
        if self.rungs < 2:
            return state, False
        first = self.swaps % 2
        self.swaps += 1
        lower = torch.arange(first, self.rungs - 1, 2)
        if lower.numel() == 0:
            return state, False
        energy = state.tempered.to(torch.float64).cpu().reshape(self.chains, self.rungs)
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
        if not bool(accept.any()):
            return state, False
        return self.init(), True

    def run(self, state: ReplicaExchangeState, moves: int) -> ReplicaExchangeState:
        """``moves`` steps (with their scheduled swaps) from ``state``; the state after the last."""
        for _ in range(moves):
            state, _ = self.step(state)
        return state

    def swap_acceptance(self) -> torch.Tensor:
        """Accepted fraction of the proposed swaps per rung pair :math:`(k, k+1)`, ``(K-1,)`` (NaN if none proposed)."""
        return self.accepted / self.attempted
