r"""Conventions of a copy-task training run: the theory's convention plus the attention type.

:class:`CopyTaskConvention` is :class:`emergence.theory.copy_head.conventions.Convention` (the same
knobs, parsed and validated the same way) with one more field, ``attention``, so a trained
model carries everything that fixes its potential.  For sizes :math:`L, V`:

.. math::
    s = \sigma_G^2 L^{-a} \;(\text{logit-weight prior variance}), \quad
    \lambda = \sigma_W^2 V^{-c} \;(\text{readout prior variance}), \quad
    \beta = \beta_0 L^{-d} V^{-e}.

``architecture`` "M" puts the prior on positional logits :math:`G \in \mathbb{R}^{L\times L}`;
"T" on :math:`W_{QK} \in \mathbb{R}^{(V+L)\times(V+L)}` with logits :math:`z^\top W_{QK} z'`,
:math:`z = x \oplus e_\ell`.  ``normalisation`` "G" or "G/L" is the linear attention
:math:`A = G` or :math:`G/L` (softmax ignores it).  The defaults are model T's:
:math:`\sigma^2 = \lambda = 1`, :math:`\beta = 1/L`, :math:`A = G/L`, raw targets, cyclic shift.

>>> convention = CopyTaskConvention.parse("a=1,c=0,architecture=M,normalisation=G")
>>> convention.a, convention.architecture, convention.normalisation
(1.0, 'M', 'G')
>>> convention.beta(L=32, V=8)
0.03125
>>> CopyTaskConvention.parse("", attention="softmax").attention
'softmax'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from emergence.theory.copy_head.conventions import CHOICES, Convention


@dataclass(frozen=True)
class CopyTaskConvention(Convention):
    """The copy-head convention of a training run; see the module docstring."""

    attention: str = "linear"
    choices: ClassVar[dict[str, tuple[str, ...]]] = {**CHOICES, "attention": ("linear", "softmax")}

    def with_attention(self, attention: str) -> "CopyTaskConvention":
        return replace(self, attention=attention)

    def logit_prior_variance(self, L: int) -> float:
        """:math:`s = \\sigma_G^2 L^{-a}`."""
        return self.sigma_G2 * float(L) ** (-self.a)

    def readout_prior_variance(self, V: int) -> float:
        """:math:`\\lambda = \\sigma_W^2 V^{-c}`."""
        return self.sigma_W2 * float(V) ** (-self.c)

    def beta(self, L: int, V: int) -> float:
        """:math:`\\beta = \\beta_0 L^{-d} V^{-e}`."""
        return self.beta0 * float(L) ** (-self.d) * float(V) ** (-self.e)
