r"""The convention knobs of the copy-head model, as one frozen value.

Every scale the reconstruction depends on is an explicit field:

- ``architecture``: ``"T"`` (queries and keys on token :math:`\oplus` position, the default)
  or ``"M"`` (free positional logits);
- G-prior variance :math:`\sigma_G^2 L^{-a}` (per entry of :math:`W_{QK}` for T, of G for M);
- readout prior variance :math:`\lambda = \sigma_W^2 V^{-c} L^{-r}` (``r`` sets how strongly the
  learnable readout can amplify a weak copy signal, and so where the softmax jump lands);
- inverse temperature :math:`\beta = \beta_0 L^{-d} V^{-e}` (``d = 1``: loss averaged per position);
- linear attention normalised as ``"matched"`` (:math:`A = G/L^{1-r/2}`: the normalisation that
  keeps the linear action independent of ``r``, because it depends on the readout only through
  :math:`\lambda` times the prior variances of A; derived in
  :func:`emergence.theory.copy_head.order_parameters.matched_linear_normalisation`),
  ``"G/L"`` (A = G/L) or ``"G"`` (A = G);
- ``"cyclic"`` or ``"open"`` shift; ``"raw"`` or ``"centred"`` one-hot targets.

>>> Convention.parse("a=1,c=0,architecture=M").as_dict()["architecture"]
'M'
>>> Convention.parse("a=1").a
1.0
>>> Convention.parse("b=2")
Traceback (most recent call last):
...
emergence.base.errors.EmergenceError: unknown convention field 'b'; fields: architecture, sigma_G2, a, sigma_W2, c, r, beta0, d, e, normalisation, shift, targets
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar

from emergence.base.errors import EmergenceError

CHOICES = {
    "architecture": ("T", "M"),
    "normalisation": ("matched", "G/L", "G"),
    "shift": ("cyclic", "open"),
    "targets": ("raw", "centred"),
}


@dataclass(frozen=True)
class Convention:
    """Scales and discrete choices of the copy-head model (defaults: model T of the note).

    Subclasses that add discrete fields extend :attr:`choices`; :meth:`parse` and validation
    follow it.
    """

    choices: ClassVar[dict[str, tuple[str, ...]]] = CHOICES

    architecture: str = "T"
    sigma_G2: float = 1.0
    a: float = 0.0
    sigma_W2: float = 1.0
    c: float = 0.0
    r: float = 1.0
    beta0: float = 1.0
    d: float = 1.0
    e: float = 0.0
    normalisation: str = "matched"
    shift: str = "cyclic"
    targets: str = "raw"

    def __post_init__(self):
        for name, allowed in self.choices.items():
            if getattr(self, name) not in allowed:
                raise EmergenceError(
                    f"convention {name}={getattr(self, name)!r} is not one of {', '.join(allowed)}"
                )
        for name in ("sigma_G2", "sigma_W2", "beta0"):
            value = getattr(self, name)
            if not value > 0:
                raise EmergenceError(f"convention {name} must be positive, got {value}")

    @classmethod
    def parse(cls, text: str | None, **overrides) -> "Convention":
        """A convention from ``"key=value,key=value"`` (unnamed fields keep their defaults).

        ``overrides`` that are not ``None`` win over the text (e.g. ``attention=`` from a flag).
        """
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for item in filter(None, (part.strip() for part in (text or "").split(","))):
            key, separator, raw = item.partition("=")
            key, raw = key.strip(), raw.strip()
            if not separator:
                raise EmergenceError(f"convention item {item!r} is not key=value")
            if key not in known:
                raise EmergenceError(f"unknown convention field {key!r}; fields: {', '.join(known)}")
            if key in cls.choices:
                values[key] = raw
            else:
                try:
                    values[key] = float(raw)
                except ValueError:
                    raise EmergenceError(f"convention {key}={raw!r} is not a number") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def as_dict(self) -> dict[str, object]:
        """Field name -> value (JSON-ready)."""
        return asdict(self)

    @property
    def attention_normalisation_exponent(self) -> float:
        """k in A = G / L**k for linear attention (1 - r/2 for ``"matched"``, 1 for ``"G/L"``, 0 for ``"G"``).

        >>> Convention(r=1.0).attention_normalisation_exponent
        0.5
        """
        return {"matched": 1.0 - self.r / 2, "G/L": 1.0, "G": 0.0}[self.normalisation]


DEFAULT_CONVENTION = Convention()
"""Model T: sigma^2 = 1, readout variance lambda = 1/L (r = 1: the softmax jump lands on a strong head,
a_G ~ 0.6 at L = 256), beta = 1/L, matched linear normalisation (A = G/sqrt(L); the linear action is the
same as for lambda = 1, A = G/L), cyclic shift, raw targets."""
