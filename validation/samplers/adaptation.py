r"""Stan's windowed adaptation driving the HMC kernel, then the draws: :func:`adapt_and_sample`.

The kernel (:class:`~emergence.validation.samplers.hmc.HMC`, ``step(state) -> (state, info)``) knows nothing of
adaptation; this routine runs it, feeds each step's acceptance to
:class:`~emergence.validation.samplers.dual_averaging.DualAveraging` for the step size, sets the diagonal mass
matrix from the warm-up draws, then records the draws (stopping early where a :class:`StoppingRule` holds).

>>> from emergence.validation.samplers.hmc import HMCSettings
>>> theta = torch.zeros(4, 2, dtype=torch.float64, requires_grad=True)
>>> sampler = HMC([theta], lambda: 0.5 * (theta**2).sum(-1), HMCSettings(step_size=0.5, leapfrog_steps=5),
...               generator=torch.Generator().manual_seed(0))
>>> result = adapt_and_sample(sampler, warmup=20, draws=10, record=lambda: {"x": theta[:, 0].clone()})
>>> tuple(result["x"].shape), tuple(result["acceptance"].shape), tuple(result["step_size"].shape)
((4, 10), (4, 10), (4,))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from emergence.base.progress import report_steps
from emergence.validation.samplers.dual_averaging import DualAveraging
from emergence.validation.samplers.hmc import HMC
from emergence.validation.samplers.leapfrog import ChainState

def _after(sampler: HMC, state: ChainState, after_trajectory: Callable[[], bool] | None) -> ChainState:
    """The state after the hook: recomputed (one gradient) where the hook moved the parameters."""
    if after_trajectory is not None and after_trajectory():
        return sampler.init()
    return state


def warm_up(sampler: HMC, state: ChainState, warmup: int, total: int,
            after_trajectory: Callable[[], bool] | None) -> ChainState:
    r"""Stan's three warm-up stages (:func:`adapt_and_sample`) of ``warmup`` steps from ``state``; sets the
    sampler's step size ``(R,)`` and inverse mass and returns the state after them.  ``total``: the steps of the
    whole run, for the progress report."""
    first, last = int(0.15 * warmup), int(0.1 * warmup)
    target = sampler.settings.target_acceptance
    adaptation = DualAveraging(sampler.step_size.clone(), target)
    sums = [torch.zeros_like(p) for p in sampler.parameters]
    squares = [torch.zeros_like(p) for p in sampler.parameters]
    collected = 0
    for t in range(warmup):
        report_steps(t, total)
        state, info = sampler.step(state)
        state = _after(sampler, state, after_trajectory)
        sampler.step_size = adaptation.update(info.acceptance_probability)
        if first <= t < warmup - last:
            collected += 1
            for s, q, p in zip(sums, squares, sampler.parameters):
                s += p.detach()
                q += p.detach() ** 2
        if t == warmup - last - 1 and collected > 1:
            n = collected
            sampler.inverse_mass = [n / (n + 5) * (q - s * s / n) / (n - 1) + 1e-3 * 5 / (n + 5)
                                    for s, q in zip(sums, squares)]
            adaptation = DualAveraging(adaptation.final, target)
    if warmup:
        sampler.step_size = adaptation.final
    return state


@dataclass(frozen=True)
class StoppingRule:
    """When :func:`adapt_and_sample` may stop before its ``draws``: after ``first`` draws and then every ``block``
    draws it stacks what was recorded so far (``(R, n)`` per key) and stops if ``met(recorded)`` holds; otherwise it
    draws on, to ``draws`` at most.  A rule that never holds leaves the run as long as without one."""

    first: int
    block: int
    met: Callable[[dict[str, torch.Tensor]], bool]

    def __post_init__(self):
        if self.first < 1 or self.block < 1:
            raise ValueError(f"a stopping rule needs first >= 1 and block >= 1 draws, got {self.first}, {self.block}")

    def looks_at(self, recorded: int) -> bool:
        """Whether the rule is checked after ``recorded`` draws."""
        return recorded >= self.first and (recorded - self.first) % self.block == 0


def _stacked(records: dict[str, list[torch.Tensor]]) -> dict[str, torch.Tensor]:
    return {key: torch.stack(values, dim=1) for key, values in records.items()}


def adapt_and_sample(sampler: HMC, warmup: int, draws: int, record: Callable[[], dict[str, torch.Tensor]],
                     after_trajectory: Callable[[], bool] | None = None,
                     stop: StoppingRule | None = None) -> dict[str, torch.Tensor]:
    r"""Warm up (step size and diagonal mass), then take ``draws`` trajectories and ``record()`` after each
    (fewer where ``stop``, a :class:`StoppingRule`, holds at one of its looks).

    Warm-up in Stan's three stages: the first 15 % adapts :math:`\epsilon` only (dual averaging); the middle
    75 % ends by setting each chain's inverse mass to the variance of its draws in that stage,
    shrunk towards :math:`10^{-3}` as Stan does, :math:`\frac{n}{n+5}\widehat{\rm var} + 10^{-3}\frac{5}{n+5}`;
    the last 10 % re-adapts :math:`\epsilon` for that mass.  Returns the recorded values stacked as
    ``(R, n)`` (``n`` the draws taken: ``draws``, or fewer where ``stop`` held) plus ``"acceptance"`` and the final ``"step_size"`` ``(R,)``.  ``after_trajectory()``, if given,
    runs after every trajectory (warm-up and draws, before the draw is recorded) and returns whether it moved the
    parameters (then the state is recomputed): the window exchange of
    :class:`~emergence.validation.samplers.window_exchange.WindowExchange`.
    """
    state = warm_up(sampler, sampler.init(), warmup, warmup + draws, after_trajectory)
    records: dict[str, list[torch.Tensor]] = {}
    acceptances = []
    for t in range(draws):
        report_steps(warmup + t, warmup + draws)
        state, info = sampler.step(state)
        acceptances.append(info.acceptance_probability)
        state = _after(sampler, state, after_trajectory)
        for key, value in record().items():
            records.setdefault(key, []).append(value.detach())
        if stop is not None and t + 1 < draws and stop.looks_at(t + 1) and stop.met(_stacked(records)):
            break
    stacked = _stacked(records)
    stacked["acceptance"] = torch.stack(acceptances, dim=1)
    stacked["step_size"] = sampler.step_size.clone()
    return stacked
