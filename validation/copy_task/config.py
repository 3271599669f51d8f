r"""Conventions of a copy-task training run: the theory's convention plus the attention type.

:class:`CopyTaskConvention` is :class:`emergence.theory.copy_head.conventions.Convention` (the same
knobs, parsed and validated the same way) with one more field, ``attention``, so a trained
model carries everything that fixes its potential.  For sizes :math:`L, V`:

.. math::
    s = \sigma_G^2 L^{-a} \;(\text{logit-weight prior variance}), \quad
    \lambda = \sigma_W^2 V^{-c} L^{-r} \;(\text{readout prior variance}), \quad
    \beta = \beta_0 L^{-d} V^{-e}.

``architecture`` "M" puts the prior on positional logits :math:`G \in \mathbb{R}^{L\times L}`;
"T" on :math:`W_{QK} \in \mathbb{R}^{(V+L)\times(V+L)}` with logits :math:`z^\top W_{QK} z'`,
:math:`z = x \oplus e_\ell`.  ``normalisation`` "matched", "G/L" or "G" is the linear attention
:math:`A = G/L^{1-r/2}`, :math:`G/L` or :math:`G` (softmax ignores it; "matched" keeps the linear
action independent of r).  The defaults are model T's (:data:`~emergence.theory.copy_head.conventions.DEFAULT_CONVENTION`).

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

        laws = copy_head_scale_laws(L, V, self.sigma_G2, self.a, self.sigma_W2, self.c, self.r, self.beta0, self.d, self.e)
        return tuple(float(value) for value in laws)

    def logit_prior_variance(self, L: int) -> float:
        """:math:`s = \\sigma_G^2 L^{-a}`."""
        return self.scale_laws(L, 1)[0]

    def readout_prior_variance(self, L: int, V: int) -> float:
        """:math:`\\lambda = \\sigma_W^2 V^{-c} L^{-r}`."""
        return self.scale_laws(L, V)[1]

    def normalise_linear(self, G, L: int):
        """Linear attention :math:`A = G / L^k` with k the convention's normalisation exponent."""
        return G / float(L) ** self.attention_normalisation_exponent

    def beta(self, L: int, V: int) -> float:
        """:math:`\\beta = \\beta_0 L^{-d} V^{-e}`."""
        return self.scale_laws(L, V)[2]


POSTERIOR_DEFAULTS: dict = {
    "replicas": 6,
    "coldest": 0.5,
    "hottest": 3.0,
    "tempering": "likelihood",
    "chains": 4,
    "burn_in": 500,
    "draws": 40,
    "thin": 10,
    "swap_every": 5,
    "step_fraction": 0.05,
    "copy_threshold": 0.25,
}
"""Defaults of one replica-exchange posterior sweep point (``emergence validate posterior``; kept
here, free of torch, so that the command line can show them without importing the sampler)."""

FREE_ENERGY_DEFAULTS: dict = {
    "centres": [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75],
    "kappa": 200.0,
    "chains": 4,
    "warmup": 150,
    "draws": 400,
    "first_draws": 200,
    "leapfrog": 12,
    "divide": 0.3,
    "bins": 28,
    "data_multiple": 1,
    "exchange_every": 1,
    "min_overlap": 0.1,
    "max_windows": 16,
}
"""One umbrella point's defaults: window centres in a_G (spacing 0.1 = 1.4 standard deviations of a window
at kappa = 200, from below the uniform basin at L = 16 to above the copy basin), stiffness, HMC chains per
window, warm-up and recorded trajectories (400 x 4 chains: bulk ESS 720-880 per window at L = 8 with 500; at most
``draws``: a softmax umbrella point checks its diagnostics after ``first_draws`` and every 100 draws after, and
stops once every window meets them, :func:`~emergence.validation.copy_task.free_energy.diagnostics_stopping_rule`;
``first_draws`` 0: always ``draws``), leapfrog steps, the basin divide, the number of profile bins on [0, 0.95], and the self-averaging probe
``data_multiple`` k (1: the posterior of the P training sequences; k > 1: the data term of P sequences
represented by k P sequences weighted 1/k, :func:`~emergence.validation.copy_task.free_energy.run_free_energy_point`),
the window exchange (configurations of neighbouring windows swapped every ``exchange_every`` trajectories; 0: off,
:mod:`~emergence.validation.samplers.window_exchange`) and the window placement (windows added half-way where a
neighbour overlap is below ``min_overlap``, and windows whose chains split made stiffer, at most ``max_windows``;
``min_overlap`` 0: one pass)."""

PROFILE_POINTS = 24
PROFILE_RANGE = (0.02, 0.9)
"""The a_G grid on which the posterior theory's profile is drawn and compared: PROFILE_POINTS points evenly
spaced over PROFILE_RANGE (posterior_free_energy's predicted points and posterior_diagnosis's data-term check)."""
