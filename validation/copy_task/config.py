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

    def scale_laws(self, L: int, V: int) -> tuple[float, float, float]:
        """:math:`(s, \\lambda, \\beta)` at sizes ``L, V``: the scale laws of
        :data:`emergence.theory.copy_head.model.SCALE_LAWS` (generated kernel ``copy_head_scale_laws``)."""
        from emergence.numerics.kernels.copy_head_scales import copy_head_scale_laws

        laws = copy_head_scale_laws(L, V, self.sigma_G2, self.a, self.sigma_W2, self.c, self.beta0, self.d, self.e)
        return tuple(float(value) for value in laws)

    def logit_prior_variance(self, L: int) -> float:
        """:math:`s = \\sigma_G^2 L^{-a}`."""
        return self.scale_laws(L, 1)[0]

    def readout_prior_variance(self, V: int) -> float:
        """:math:`\\lambda = \\sigma_W^2 V^{-c}`."""
        return self.scale_laws(1, V)[1]

    def beta(self, L: int, V: int) -> float:
        """:math:`\\beta = \\beta_0 L^{-d} V^{-e}`."""
        return self.scale_laws(L, V)[2]
