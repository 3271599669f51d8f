r"""Metropolis-adjusted Hamiltonian Monte Carlo as a ``torch.optim.Optimizer``, batched over chains.

:class:`HMC` samples :math:`\pi(\theta) \propto e^{-U(\theta)}` exactly (the Metropolis test
removes the leapfrog discretisation bias that SGLD keeps).  One :meth:`HMC.step` is one
trajectory of every chain; :func:`adapt_and_sample` adds the warm-up that tunes each chain's
step size (dual averaging, target acceptance 0.8) and diagonal mass matrix (the draws'
variances), as Stan's windowed adaptation does.

Batched chains: every parameter has a leading chain axis ``(R, ...)`` and the closure returns
the potentials ``(R,)`` of ``R`` independent chains (their sum's gradient is each chain's own
gradient), so chains and umbrella windows are one tensor program.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from emergence.base.progress import report_steps


class HMC(torch.optim.Optimizer):
    r"""One Hamiltonian trajectory per chain per :meth:`step`, accepted or rejected chain by chain.

    With inverse mass :math:`M^{-1}` (diagonal, per chain), step size :math:`\epsilon` and
    :math:`n` leapfrog steps, from :math:`\theta_0` with momentum :math:`p_0 \sim \mathcal N(0, M)`:

    .. math::
        p_{1/2} = p_0 - \tfrac{\epsilon}{2}\nabla U(\theta_0),\quad
        \theta_{k+1} = \theta_k + \epsilon M^{-1} p_{k+1/2},\quad
        p_{k+3/2} = p_{k+1/2} - \epsilon\nabla U(\theta_{k+1}),

    (the last momentum update is a half step), then the proposal :math:`(\theta_n, p_n)` is
    accepted with probability :math:`\min(1, e^{H_0 - H_n})`,
    :math:`H = U(\theta) + \tfrac12 p^\top M^{-1} p`.  Leapfrog is volume preserving and
    reversible, so this leaves :math:`e^{-U}` invariant for any :math:`\epsilon` and :math:`M`
    (a wrong acceptance rule does not: ``tests/test_hmc.py`` shows it failing a Gaussian's
    moments).  Each chain's :math:`\epsilon` is jittered uniformly in :math:`[0.9, 1.1]\epsilon`
    per trajectory, which breaks periodic orbits.

    ``step(closure)``: ``closure()`` returns the potentials ``(R,)`` at the current parameters
    (no ``backward`` needed).  ``step_size`` is a float or an ``(R,)`` tensor; ``inverse_mass``
    a list with one tensor per parameter, broadcastable to it (default 1).  The step returns the
    acceptance probabilities ``(R,)``; a trajectory with a non-finite energy is rejected.

    >>> theta = torch.nn.Parameter(torch.zeros(2, 1))
    >>> sampler = HMC([theta], step_size=0.5, leapfrog_steps=5, generator=torch.Generator().manual_seed(0))
    >>> acceptance = sampler.step(lambda: 0.5 * (theta**2).sum(-1))
    >>> tuple(acceptance.shape)
    (2,)
    """

    def __init__(self, params, step_size: float | torch.Tensor = 0.1, leapfrog_steps: int = 20,
                 inverse_mass: list[torch.Tensor] | None = None, generator: torch.Generator | None = None):
        if leapfrog_steps < 1:
            raise ValueError(f"need leapfrog_steps >= 1, got {leapfrog_steps}")
        super().__init__(params, {})
        self.parameters_ = [p for group in self.param_groups for p in group["params"]]
        self.runs = self.parameters_[0].shape[0]
        reference = self.parameters_[0]
        self.step_size = torch.as_tensor(step_size, dtype=reference.dtype, device=reference.device).expand(self.runs).clone()
        self.leapfrog_steps = int(leapfrog_steps)
        self.inverse_mass = inverse_mass or [torch.ones_like(p) for p in self.parameters_]
        self.generator = generator

    @staticmethod
    def _per_run(tensor: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
        """An ``(R,)`` tensor shaped to broadcast against a parameter ``like`` ``(R, ...)``."""
        return tensor.reshape(-1, *[1] * (like.dim() - 1))

    def _gradients(self, closure) -> tuple[torch.Tensor, list[torch.Tensor]]:
        with torch.enable_grad():
            potential = closure()
            gradients = torch.autograd.grad(potential.sum(), self.parameters_)
        return potential.detach(), [g.detach() for g in gradients]

    def _kinetic(self, momenta) -> torch.Tensor:
        return sum(0.5 * (p * p * m).flatten(1).sum(1) for p, m in zip(momenta, self.inverse_mass))

    def log_acceptance(self, start_energy: torch.Tensor, end_energy: torch.Tensor) -> torch.Tensor:
        r""":math:`\ln\min(1, e^{H_0 - H_n})` per chain (non-finite :math:`H_n` gives :math:`-\infty`)."""
        log_ratio = (start_energy - end_energy).clamp(max=0.0)
        return torch.where(torch.isfinite(end_energy), log_ratio, torch.full_like(log_ratio, -math.inf))

    @torch.no_grad()
    def step(self, closure: Callable[[], torch.Tensor]) -> torch.Tensor:  # type: ignore[override]
        device, dtype = self.parameters_[0].device, self.parameters_[0].dtype
        start = [p.detach().clone() for p in self.parameters_]
        momenta = [torch.randn(p.shape, generator=self.generator, dtype=dtype, device="cpu").to(device)
                   / m.sqrt() for p, m in zip(self.parameters_, self.inverse_mass)]
        jitter = 0.9 + 0.2 * torch.rand(self.runs, generator=self.generator, dtype=dtype, device="cpu").to(device)
        epsilon = self.step_size * jitter
        potential, gradients = self._gradients(closure)
        start_energy = potential + self._kinetic(momenta)
        for p, g in zip(momenta, gradients):
            p -= 0.5 * self._per_run(epsilon, p) * g
        for k in range(self.leapfrog_steps):
            for theta, p, m in zip(self.parameters_, momenta, self.inverse_mass):
                theta += self._per_run(epsilon, p) * m * p
            potential, gradients = self._gradients(closure)
            scale = 0.5 if k == self.leapfrog_steps - 1 else 1.0
            for p, g in zip(momenta, gradients):
                p -= scale * self._per_run(epsilon, p) * g
        end_energy = potential + self._kinetic(momenta)
        log_accept = self.log_acceptance(start_energy, end_energy)
        uniform = torch.rand(self.runs, generator=self.generator, dtype=dtype, device="cpu").to(device)
        rejected = ~(torch.log(uniform) < log_accept)
        for theta, theta_0 in zip(self.parameters_, start):
            theta.copy_(torch.where(self._per_run(rejected, theta), theta_0, theta))
        return log_accept.exp()


class DualAveraging:
    r"""Nesterov dual averaging of :math:`\ln\epsilon` per chain (Hoffman & Gelman 2014, Stan's constants).

    After iteration :math:`t` with acceptance :math:`\alpha_t`:
    :math:`\bar h_t = (1 - \tfrac{1}{t + t_0})\bar h_{t-1} + \tfrac{1}{t + t_0}(\delta - \alpha_t)`,
    :math:`\ln\epsilon_t = \mu - \tfrac{\sqrt t}{\gamma}\bar h_t`,
    :math:`\ln\bar\epsilon_t = t^{-\kappa}\ln\epsilon_t + (1 - t^{-\kappa})\ln\bar\epsilon_{t-1}`,
    with :math:`\mu = \ln 10\epsilon_0`, :math:`\delta = 0.8`, :math:`\gamma = 0.05`,
    :math:`t_0 = 10`, :math:`\kappa = 0.75`; :attr:`final` is :math:`\bar\epsilon`.
    """

    def __init__(self, initial: torch.Tensor, target: float = 0.8):
        self.mu = torch.log(10 * initial)
        self.target, self.t = target, 0
        self.h_bar = torch.zeros_like(initial)
        self.log_average = torch.zeros_like(initial)

    def update(self, acceptance: torch.Tensor) -> torch.Tensor:
        """The next step sizes ``(R,)`` after the acceptances ``(R,)`` of one iteration."""
        self.t += 1
        t = self.t
        weight = 1.0 / (t + 10)
        self.h_bar = (1 - weight) * self.h_bar + weight * (self.target - acceptance)
        log_step = self.mu - math.sqrt(t) / 0.05 * self.h_bar
        decay = t ** -0.75
        self.log_average = decay * log_step + (1 - decay) * self.log_average
        return log_step.exp()

    @property
    def final(self) -> torch.Tensor:
        return self.log_average.exp()


def adapt_and_sample(sampler: HMC, closure: Callable[[], torch.Tensor], warmup: int, draws: int,
                     record: Callable[[], dict[str, torch.Tensor]],
                     after_trajectory: Callable[[], None] | None = None) -> dict[str, torch.Tensor]:
    r"""Warm up (step size and diagonal mass), then take ``draws`` trajectories and ``record()`` after each.

    Warm-up in Stan's three stages: the first 15 % adapts :math:`\epsilon` only; the middle
    75 % ends by setting each chain's inverse mass to the variance of its draws in that stage,
    shrunk towards :math:`10^{-3}` as Stan does, :math:`\frac{n}{n+5}\widehat{\rm var} + 10^{-3}\frac{5}{n+5}`;
    the last 10 % re-adapts :math:`\epsilon`
    for that mass.  Returns the recorded values stacked as ``(R, draws)`` plus ``"acceptance"``
    and the final ``"step_size"`` ``(R,)``.  ``after_trajectory()``, if given, runs after every trajectory
    (warm-up and draws, before the draw is recorded): the window exchange of
    :class:`~emergence.validation.samplers.window_exchange.WindowExchange`.
    """
    first, last = int(0.15 * warmup), int(0.1 * warmup)
    adaptation = DualAveraging(sampler.step_size.clone())
    sums = [torch.zeros_like(p) for p in sampler.parameters_]
    squares = [torch.zeros_like(p) for p in sampler.parameters_]
    collected = 0
    for t in range(warmup):
        report_steps(t, warmup + draws)
        acceptance = sampler.step(closure)
        if after_trajectory is not None:
            after_trajectory()
        sampler.step_size = adaptation.update(acceptance)
        if first <= t < warmup - last:
            collected += 1
            for s, q, p in zip(sums, squares, sampler.parameters_):
                s += p.detach()
                q += p.detach() ** 2
        if t == warmup - last - 1 and collected > 1:
            n = collected
            sampler.inverse_mass = [n / (n + 5) * (q - s * s / n) / (n - 1) + 1e-3 * 5 / (n + 5)
                                    for s, q in zip(sums, squares)]
            adaptation = DualAveraging(adaptation.final)
    if warmup:
        sampler.step_size = adaptation.final
    records: dict[str, list[torch.Tensor]] = {}
    acceptances = []
    for t in range(draws):
        report_steps(warmup + t, warmup + draws)
        acceptances.append(sampler.step(closure))
        if after_trajectory is not None:
            after_trajectory()
        for key, value in record().items():
            records.setdefault(key, []).append(value.detach())
    stacked = {key: torch.stack(values, dim=1) for key, values in records.items()}
    stacked["acceptance"] = torch.stack(acceptances, dim=1)
    stacked["step_size"] = sampler.step_size.clone()
    return stacked
