r"""Step-size adaptation by Nesterov dual averaging, per chain (Hoffman & Gelman 2014, Stan's constants).

:class:`DualAveraging` tunes :math:`\ln\epsilon` of every chain so that its mean acceptance approaches the
target :math:`\delta`; :func:`~emergence.validation.samplers.adaptation.adapt_and_sample` runs it in the warm-up.

>>> adaptation = DualAveraging(torch.tensor([0.1, 0.1]))
>>> step = adaptation.update(torch.tensor([1.0, 0.0]))  # accepted everything: larger; nothing: smaller
>>> bool(step[0] > step[1])
True
"""

from __future__ import annotations

import math

import torch


class DualAveraging:
    r"""Nesterov dual averaging of :math:`\ln\epsilon` per chain.

    After iteration :math:`t` with acceptance :math:`\alpha_t`:
    :math:`\bar h_t = (1 - \tfrac{1}{t + t_0})\bar h_{t-1} + \tfrac{1}{t + t_0}(\delta - \alpha_t)`,
    :math:`\ln\epsilon_t = \mu - \tfrac{\sqrt t}{\gamma}\bar h_t`,
    :math:`\ln\bar\epsilon_t = t^{-\kappa}\ln\epsilon_t + (1 - t^{-\kappa})\ln\bar\epsilon_{t-1}`,
    with :math:`\mu = \ln 10\epsilon_0`, :math:`\delta = 0.8` (``target``), :math:`\gamma = 0.05`,
    :math:`t_0 = 10`, :math:`\kappa = 0.75`; :attr:`final` is :math:`\bar\epsilon`.  ``initial``: :math:`\epsilon_0`, ``(R,)``.
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
