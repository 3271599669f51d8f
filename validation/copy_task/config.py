r"""Conventions of the copy-task model: priors, temperature, normalisation, shift, targets.

A stand-in for ``theory.copy_head.conventions.Convention`` until the theory lands (same
field names).  For sizes :math:`L, V`:

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
>>> CopyTaskConvention.parse("z=1")
Traceback (most recent call last):
...
theory.errors.EmergenceError: unknown convention key 'z'; known: a, c, d, e, sigma_G2, sigma_W2, beta0, normalisation, shift, targets, architecture, attention
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

from theory.errors import EmergenceError

CHOICES: dict[str, tuple[str, ...]] = {
    "normalisation": ("G", "G/L"),
    "shift": ("cyclic", "open"),
    "targets": ("raw", "centred"),
    "architecture": ("M", "T"),
    "attention": ("linear", "softmax"),
}


@dataclass(frozen=True)
class CopyTaskConvention:
    """The convention knobs of the copy-head theory; see the module docstring."""

    a: float = 0.0
    c: float = 0.0
    d: float = 1.0
    e: float = 0.0
    sigma_G2: float = 1.0
    sigma_W2: float = 1.0
    beta0: float = 1.0
    normalisation: str = "G/L"
    shift: str = "cyclic"
    targets: str = "raw"
    architecture: str = "T"
    attention: str = "linear"

    def __post_init__(self):
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                raise EmergenceError(
                    f"convention {name}={getattr(self, name)!r} is not one of {', '.join(allowed)}"
                )
        for name in ("sigma_G2", "sigma_W2", "beta0"):
            if not getattr(self, name) > 0:
                raise EmergenceError(f"convention {name} must be positive, got {getattr(self, name)}")

    @classmethod
    def parse(cls, text: str | None, **overrides) -> "CopyTaskConvention":
        """Parse ``"a=1,c=0,normalisation=G"``; ``overrides`` (e.g. ``attention=``) win."""
        known = {f.name: f.type for f in fields(cls)}
        values: dict[str, object] = {}
        for item in (text or "").split(","):
            item = item.strip()
            if not item:
                continue
            key, sep, raw = item.partition("=")
            key, raw = key.strip(), raw.strip()
            if not sep:
                raise EmergenceError(f"convention item {item!r} is not of the form key=value")
            if key not in known:
                raise EmergenceError(f"unknown convention key {key!r}; known: {', '.join(known)}")
            if key in CHOICES:
                values[key] = raw
            else:
                try:
                    values[key] = float(raw)
                except ValueError:
                    raise EmergenceError(f"convention {key}={raw!r} is not a number") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

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

    def as_dict(self) -> dict:
        return asdict(self)

    def as_text(self) -> str:
        return ",".join(f"{k}={v}" for k, v in asdict(self).items())
