r"""The paper's three scaling claims: the transition each is about, the law it asserts and its sweeps.

========================  ==========================  ===========================  =========
claim                     transition                  law                          kind
========================  ==========================  ===========================  =========
``softmax-first-order``   coexistence point P*        :math:`L\ln^2 L`             log
``linear-second-order``   second-order point P1       :math:`V^2`                  power
``linear-crossover``      copy-mode onset             :math:`L^{3/2}V^{1/2}`       power
========================  ==========================  ===========================  =========

Each sweep is exponentially spaced in one size with the other held fixed.  The laws are the paper's
claims (input), not derived results; ``emergence scaling --law`` replaces one by any expression
(:class:`Law`).  The crossover sweeps stay at :math:`L/V \le 256`: beyond, the copy mode of model T
switches on by a jump of the global minimum (``docs/copy_head_scaling.md``).  Measured by
:mod:`.scaling`, certified by :mod:`.scaling_certification`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable

from emergence.base.errors import InvalidArgumentError


@dataclass(frozen=True)
class Sweep:
    """Sizes along one variable (``"L"`` or ``"V"``) with the other fixed; ``fast`` is a prefix count."""

    variable: str
    values: tuple[int, ...]
    fixed: int
    fast: int

    def sizes(self, fast: bool) -> list[tuple[int, int]]:
        values = self.values[: self.fast] if fast else self.values
        return [(v, self.fixed) if self.variable == "L" else (self.fixed, v) for v in values]


@dataclass(frozen=True)
class Claim:
    """A scaling claim: its transition, law (SymPy text and mpmath value), kind, sweeps and a one-line
    statement for reports."""

    name: str
    attention: str
    transition: str
    law: str
    kind: str
    powers: dict
    sweeps: tuple[Sweep, ...]
    text: str = ""
    function: Callable | None = None

    def law_value(self, L, V, ctx):
        """The law at sizes ``L, V`` in ``ctx`` (``function(L, V)`` for a law given as text)."""
        L, V = ctx.mpf(L), ctx.mpf(V)
        if self.function is not None:
            value = self.function(L, V)
            if not (ctx.isfinite(value) and value > 0):
                raise InvalidArgumentError("law", f"{self.law!r} is not finite and positive at L={L}, V={V}")
            return value
        value = L ** self.powers.get("L", 0) * V ** self.powers.get("V", 0)
        return value * ctx.log(L) ** self.powers.get("logL", 0)

    def with_law(self, law: "Law") -> "Claim":
        """The same claim (transition, sweeps, kind) with another law."""
        return replace(self, law=law.text, function=law.function, powers={}, text=f"{self.text} (law replaced by {law.text})")


@dataclass(frozen=True)
class Law:
    """A law given as text (``emergence scaling --law``): the text, ``function(L, V)`` on mpmath numbers
    (evaluated at their context's precision), and ``constant_factor``: the derived limit of claimed law / this
    law along the claim's sweep (``inf`` or ``0`` when they grow differently; from
    :func:`emergence.theory.copy_head.laws.law_ratio_limit`)."""

    text: str
    function: Callable
    constant_factor: float = math.nan


CLAIMS: dict[str, Claim] = {
    "softmax-first-order": Claim(
        "softmax-first-order", "softmax", "P_star", "L*log(L)**2", "log", {"L": 1, "logL": 2},
        (Sweep("L", tuple(2**k for k in range(5, 15)), 8, 8),), "softmax: 1st-order P* ~ L ln²L",
    ),
    "linear-second-order": Claim(
        "linear-second-order", "linear", "P1", "V**2", "power", {"V": 2},
        (Sweep("V", tuple(2**k for k in range(2, 9)), 4096, 5),), "linear: 2nd-order transition P1 ~ V²",
    ),
    "linear-crossover": Claim(
        "linear-crossover", "linear", "crossover", "L**(3/2)*V**(1/2)", "power", {"L": 1.5, "V": 0.5},
        (Sweep("L", tuple(2**k for k in range(6, 12)), 8, 5),
         Sweep("V", tuple(2**k for k in range(3, 9)), 1024, 5)), "linear: crossover ~ L^{3/2} V^{1/2}",
    ),
}
