r"""How attention turns logits into weights: softmax or linear, as one strategy object per kind.

Both architectures' logits modules take one of these instead of branching on the attention kind:

* :class:`SoftmaxAttention`: :math:`A = \operatorname{softmax}_{row}(G)`;
* :class:`LinearAttention`: :math:`A = G / L^k` with :math:`k` the convention's normalisation exponent.

Each also says which logits make the two training starts (:data:`~emergence.validation.copy_task.models.STARTS`):
the copy start adds ``copy_logit`` times the cyclic shift :math:`S` to the positional logits, the uniform
start adds ``uniform_logit`` to the logits that see no position (softmax: 0, any constant row gives
uniform pooling; linear: :math:`L^{k-1}`, so that :math:`A = J/L`).

>>> from emergence.validation.copy_task.config import CopyTaskConvention
>>> attention_normalisation(CopyTaskConvention(attention="linear", normalisation="G/L"), L=4).uniform_logit
1.0
"""

from __future__ import annotations

import math

import torch

from emergence.validation.copy_task.config import CopyTaskConvention

COPY_START_WEIGHT = 0.9
"""Softmax copy start: attention weight on the previous token."""


class SoftmaxAttention:
    r""":math:`A = \operatorname{softmax}_{row}(G)`; copy start :math:`\ln\frac{w(L-1)}{1-w}\,S` with :math:`w` = :data:`COPY_START_WEIGHT`."""

    kind = "softmax"

    def __init__(self, convention: CopyTaskConvention, L: int):
        self.copy_logit = math.log(COPY_START_WEIGHT * (L - 1) / (1 - COPY_START_WEIGHT))
        self.uniform_logit = 0.0

    def __call__(self, G: torch.Tensor) -> torch.Tensor:
        """Row softmax of logits ``(..., L, L)``."""
        return torch.softmax(G, dim=-1)


class LinearAttention:
    r""":math:`A = G / L^k`; copy start :math:`L^k S` (:math:`A = S`), uniform start :math:`L^{k-1}` (:math:`A = J/L`)."""

    kind = "linear"

    def __init__(self, convention: CopyTaskConvention, L: int):
        self.convention, self.L = convention, L
        scale = float(L) ** (convention.attention_normalisation_exponent - 1)
        self.copy_logit = L * scale
        self.uniform_logit = scale

    def __call__(self, G: torch.Tensor) -> torch.Tensor:
        """:math:`G / L^k` for logits ``(..., L, L)``."""
        return self.convention.normalise_linear(G, self.L)


NORMALISATIONS = {"softmax": SoftmaxAttention, "linear": LinearAttention}


def attention_normalisation(convention: CopyTaskConvention, L: int) -> SoftmaxAttention | LinearAttention:
    """The strategy of ``convention.attention`` at context length ``L``."""
    return NORMALISATIONS[convention.attention](convention, L)
