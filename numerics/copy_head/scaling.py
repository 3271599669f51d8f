r"""The paper's three scaling claims, measured on the reduced actions at high precision.

Each claim names the transition it is about, the law it asserts and the sweeps of sizes on
which it is checked (exponentially spaced, the other size held fixed):

========================  ==========================  ===========================  =========
claim                     transition                  law                          kind
========================  ==========================  ===========================  =========
``softmax-first-order``   coexistence point P*        :math:`L\ln^2 L`             log
``linear-second-order``   second-order point P1       :math:`V^2`                  power
``linear-crossover``      copy-mode onset             :math:`L^{3/2}V^{1/2}`       power
========================  ==========================  ===========================  =========

At each size the transition is located in float64 on a logarithmic ``P`` window around the
law (:mod:`.phase_diagram` machinery) and refined to ``dps`` digits (:mod:`.precise`); then
:func:`emergence.numerics.asymptotics.scaling_check` gives ratios, local exponents, the sub-leading
fit and the verdict.  The laws are the paper's claims (input), not derived results.

The crossover sweeps stay at :math:`L/V \le 256`: beyond, the copy mode of model T switches on
by a jump of the global minimum (found by :mod:`.first_order`); there the jump is measured
instead of the onset (``docs/copy_head_scaling.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import mpmath
import numpy as np

from emergence.numerics.asymptotics import local_exponents, scaling_check
from emergence.numerics.copy_head.crossover import branch_point, copy_onset
from emergence.numerics.copy_head.first_order import coexistence_point, coexisting_branches
from emergence.numerics.copy_head.minimisation import local_minima
from emergence.numerics.copy_head.precise import (
    coexistence_point_mp,
    context,
    copy_onset_mp,
    second_order_point_mp,
)
from emergence.numerics.copy_head.reduced_action import (
    default_convention,
    generated_kernels,
    model_scales_mp,
    reduced_action,
)
from emergence.numerics.copy_head.second_order import second_order_point
from emergence.theory.errors import DivergenceError, EmergenceError


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

    def law_value(self, L, V, ctx):
        L, V = ctx.mpf(L), ctx.mpf(V)
        value = L ** self.powers.get("L", 0) * V ** self.powers.get("V", 0)
        return value * ctx.log(L) ** self.powers.get("logL", 0)


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


REFERENCE_TOLERANCE = 0.05
"""Largest relative gap, at the largest size, between the transition and a derived asymptotic form."""


@dataclass(frozen=True)
class Reference:
    """A derived form of the transition to compare the measurement with.

    ``value(L, V, ctx)`` evaluates it; ``asymptotic``: it is the transition's derived
    large-size form, so the measurement must approach it (ratio within
    :data:`REFERENCE_TOLERANCE` of 1 at the largest size); otherwise it is only reported.
    ``law_constant``: the derived limit of form / law (finite and positive when the law holds).
    """

    form: str
    value: Callable
    asymptotic: bool
    law_constant: float | None = None


def kernel_reference(claim_name: str, convention=None, kernels=None) -> Reference | None:
    """The closed forms the generated kernels provide: P1 (exact root of the uniform curvature) and P_G."""
    kernels = kernels if kernels is not None else generated_kernels()
    convention = convention if convention is not None else default_convention()
    if claim_name == "linear-second-order":
        def value(L, V, ctx):
            s1, _, lam, beta = model_scales_mp(kernels, "linear", L, V, convention, ctx)
            return kernels.linear.linear_second_order_point_mp(L, V, s1, lam, beta, ctx=ctx)

        return Reference("linear_second_order_point (SymPy root of the uniform-mode curvature)", value, True)
    if claim_name == "linear-crossover":
        def value(L, V, ctx):
            s1, sG, lam, beta = model_scales_mp(kernels, "linear", L, V, convention, ctx)
            return kernels.linear.linear_copy_mode_onset_mp(L, V, s1, sG, lam, beta, ctx=ctx)

        return Reference("linear_copy_mode_onset P_G (copy-mode curvature root at the symmetric point)", value, False)
    return None


def ell_of_L(value, ctx):
    r""":math:`\ell = 1 - \tfrac12 W_{-1}(-2e^2/L)`, the growing root of :math:`2\ell = \ln(L(\ell-1))`
    (:mod:`emergence.theory.copy_head.asymptotics`), in the mpmath context ``ctx`` (needs :math:`L > 2e^3`)."""
    value = ctx.mpf(value)
    return 1 - ctx.lambertw(-2 * ctx.e**2 / value, -1).real / 2


def derived_reference(claim: str, convention) -> Reference | None:
    """The engine's derived large-size form of the transition, where theory/copy_head has one.

    softmax-first-order: the dominant balance P* = L V ell^3 / (beta0 sG (V-1)(ell-1)) at
    :func:`ell_of_L`, for beta = beta0/L and an L-independent logit variance (a = 0), with its
    law constant lim P*/(L ln^2 L) (generated kernels of emergence.theory.copy_head.asymptotics).
    linear-second-order: the kernel's closed-form P1 with lim P1/V^2 (kernel of
    emergence.theory.copy_head.landau; model T scalings a = 0, d = 1, e = 0, beta0 = 1).
    Otherwise None (the kernel forms are used).
    """
    model_t = convention.architecture == "T" and convention.a == 0 and convention.d == 1 and convention.e == 0
    if not model_t:
        return None
    kernels = generated_kernels()
    asymptotics = kernels.asymptotics
    if claim == "softmax-first-order" and convention.r == 0:  # the balance below needs lambda fixed in L
        V_fixed = CLAIMS[claim].sweeps[0].fixed
        constant = float(asymptotics.softmax_P_star_law_constant(V_fixed, convention.beta0, convention.sigma_G2))

        def value(L, V, ctx):
            if L <= 2 * float(ctx.e) ** 3:
                return None
            sG, _, _ = model_scales_mp(kernels, "softmax", L, V, convention, ctx)
            return asymptotics.softmax_P_star_balance_mp(L, V, convention.beta0, sG, ell_of_L(L, ctx), ctx=ctx)

        return Reference("L*V*ell**3/(beta0*sG*(V - 1)*(ell - 1)), ell = 1 - LambertW(-2*exp(2)/L, -1)/2",
                         value, True, constant)
    matched = convention.attention_normalisation_exponent == 1 - convention.r / 2  # lam*s as for A = G/L, lam = 1
    if claim == "linear-second-order" and convention.beta0 == 1 and matched:
        closed = kernel_reference(claim, convention, kernels)
        law_constant = (float(asymptotics.linear_P1_law_constant(convention.sigma_G2, convention.sigma_W2))
                        if convention.c == 0 else None)
        return Reference(closed.form, closed.value, True, law_constant)
    return None


def _window(law: float, low: float, high: float, points: int) -> np.ndarray:
    return np.geomspace(law * low, law * high, points)


def _located(action, locate, law: float, coarse: int = 100, fine: int = 200):
    """Run ``locate(minima)`` on a coarse grid over law * [1e-6, 1e6], then on a fine grid one decade around."""
    minima = local_minima(action, _window(law, 1e-6, 1e6, coarse))
    rough = locate(minima)
    if rough is None:
        return None, None
    minima = local_minima(action, _window(rough, 0.1, 10.0, fine))
    return locate(minima), minima


def _refined_jump(action, minima, P_star: float, dps: int):
    """P* to ``dps`` digits where both branches exist around it, else its float64 value."""
    indices, lower, upper = coexisting_branches(minima)
    if len(indices) == 0:
        return P_star
    j = int(np.argmin(np.abs(np.log(minima.P[indices] / P_star))))
    return coexistence_point_mp(action, P_star, branch_point(action, lower[:, j], P_star),
                                branch_point(action, upper[:, j], P_star), dps)


def measure_transition(claim: Claim, L: int, V: int, convention=None, dps: int = 50, kernels=None):
    """The claim's transition at sizes ``L, V``: float64 location refined to ``dps`` digits (mpf).

    The transition is searched over law * [1e-6, 1e6] (coarse grid, then a fine grid one
    decade around).  For the crossover: the copy onset, or, where the copy mode switches on
    by a jump of the global minimum, the jump (then the claim is off its smooth regime).
    """
    action = reduced_action(claim.attention, L, V, convention, kernels)
    law = float(claim.law_value(L, V, context(15)))
    if claim.transition == "P1":
        P1 = second_order_point(action, law * 1e-6, law * 1e6, scan=400)
        if P1 is None:
            raise DivergenceError(f"no second-order point within 1e-6..1e6 x law at L={L}, V={V}")
        return second_order_point_mp(action, P1, dps)
    if claim.transition == "P_star":
        P_star, minima = _located(action, lambda m: coexistence_point(action, m), law)
        if P_star is None:
            raise DivergenceError(f"no coexistence point within 1e-6..1e6 x law at L={L}, V={V}")
        return _refined_jump(action, minima, P_star, dps)

    def onset(minima):
        jump = coexistence_point(action, minima)
        return jump if jump is not None else copy_onset(action, minima.P, minima.global_minimum()[0])

    found, minima = _located(action, onset, law)
    if found is None:
        raise DivergenceError(f"no copy onset within 1e-6..1e6 x law at L={L}, V={V}")
    if coexistence_point(action, minima) is not None:
        return _refined_jump(action, minima, found, dps)
    y = minima.global_minimum()[0]
    start = branch_point(action, y[:, int(np.searchsorted(minima.P, found))], found)
    return copy_onset_mp(action, found, start, dps)


def measure_transitions(claim: Claim, sizes, convention=None, dps: int = 50, kernels=None) -> list:
    """:func:`measure_transition` at each ``(L, V)`` of ``sizes``, one after the other, in this process."""
    return [measure_transition(claim, L, V, convention, dps, kernels) for L, V in sizes]


def scaling_report(claim_name: str, convention=None, *, dps: int = 50, fast: bool = False, kernels=None,
                   reference: Reference | None = None, transitions: Callable | None = None) -> dict:
    """The JSON-ready report of one claim (keys: claim, law, sizes, P_star, ratio, ...).

    ``sizes`` lists ``{"L", "V", "sweep"}``; ``local_exponent``, ``ratio`` and ``fit`` are keyed
    by the swept variable; ``holds`` is true when every sweep passes
    :func:`emergence.numerics.asymptotics.scaling_check` and, where an asymptotic ``reference`` is
    known (default: the kernels' closed forms, :func:`kernel_reference`), the measurement is
    within :data:`REFERENCE_TOLERANCE` of it at the largest size and its ``law_constant``
    (when given) is finite and positive.  ``fit[variable]["reference"]`` holds the comparison.
    ``transitions``: what measures a sweep's sizes, with the signature of
    :func:`measure_transitions` (the default; a sweep executor is passed in from above).
    """
    if claim_name not in CLAIMS:
        raise EmergenceError(f"unknown claim {claim_name!r}; choose {', '.join(CLAIMS)}")
    if dps < 15:
        raise EmergenceError(f"--dps must be at least 15, got {dps}")
    claim = CLAIMS[claim_name]
    reference = reference if reference is not None else kernel_reference(claim_name, convention, kernels)
    ctx = context(dps)
    sizes, values, ratios, exponents, fits, verdicts = [], [], {}, {}, {}, []
    tolerance = None
    for sweep in claim.sweeps:
        points = sweep.sizes(fast)
        measured = [ctx.mpf(m) for m in (transitions or measure_transitions)(claim, points, convention, dps, kernels)]
        xs = [ctx.mpf(L if sweep.variable == "L" else V) for L, V in points]
        law = [claim.law_value(L, V, ctx) for L, V in points]
        check = scaling_check(xs, measured, law, kind=claim.kind, ctx=ctx)
        fit = dict(check["fit"], residual_exponent=check["residual_exponent"])
        holds = check["holds"]
        if reference is not None:
            comparison = _compare_with_reference(reference, points, xs, measured, claim.kind, ctx)
            fit["reference"] = comparison
            holds = holds and comparison["consistent"]
        sizes += [{"L": L, "V": V, "sweep": sweep.variable} for L, V in points]
        values += [float(m) for m in measured]
        ratios[sweep.variable] = check["ratio"]
        exponents[sweep.variable] = check["local_exponent"]
        fits[sweep.variable] = fit
        verdicts.append(holds)
        tolerance = check["tolerance"]
    return {
        "claim": claim.name,
        "law": claim.law,
        "sizes": sizes,
        "P_star": values,
        "ratio": ratios,
        "local_exponent": exponents,
        "fit": fits,
        "holds": all(verdicts),
        "tolerance": tolerance,
        "dps": dps,
    }


def _compare_with_reference(reference: Reference, points, xs, measured, kind: str, ctx) -> dict:
    """Ratios to the reference where it is defined (``value`` returns ``None`` outside its domain)."""
    pairs = [(x, m / r) for (L, V), x, m in zip(points, xs, measured)
             if (r := reference.value(L, V, ctx)) is not None]
    ratios = [r for _, r in pairs]
    variable = [ctx.log(x) if kind == "log" else x for x, _ in pairs]
    exponents = [float(e) for e in local_exponents(variable, ratios, ctx)] if len(pairs) > 1 else []
    last = float(ratios[-1]) if ratios else math.nan
    constant_ok = reference.law_constant is None or (math.isfinite(reference.law_constant) and reference.law_constant > 0)
    consistent = constant_ok and (not reference.asymptotic or abs(last - 1) <= REFERENCE_TOLERANCE)
    return {
        "form": reference.form,
        "sizes": [int(x) for x, _ in pairs],
        "ratio": [float(r) for r in ratios],
        "residual_exponent": exponents,
        "law_constant": reference.law_constant,
        "asymptotic": reference.asymptotic,
        "tolerance": REFERENCE_TOLERANCE if reference.asymptotic else None,
        "consistent": bool(consistent),
    }


def readout_landing(L: float, V: float, sG: float = 1.0, lam0: float = 1.0, beta0: float = 1.0,
                    dps: int = 30) -> dict[str, float]:
    r"""Where the softmax jump lands for :math:`\lambda = \lambda_0/L`: the copy weight :math:`a^*`
    and :math:`P^*` of the dominant balance
    (:func:`emergence.theory.copy_head.asymptotics.readout_coexistence`, generated kernel
    ``softmax_readout_landing_curve``), at the signal-to-noise :math:`z` where the curve's
    :math:`\ell(z)` equals the logit gap :math:`\ln(a/(1-a)) + \ln(L-1)` (mpmath, ``dps`` digits).

    The mismatch has two roots; the copy minimum is the larger one, bracketed in
    :math:`[1/2, 2 + \ln L]` (the smaller root sits below :math:`z = 1/2` for L >= 32 at V = 16).
    Raises :class:`ArithmeticError` where no landing exists in the bracket.

    >>> landing = readout_landing(256, 16)
    >>> round(landing["a_star"], 3), round(landing["P_star"], -1)
    (0.593, 16370.0)
    """
    curve = generated_kernels().asymptotics.softmax_readout_landing_curve_mp
    ctx = mpmath.mp.clone()
    ctx.dps = dps

    def mismatch(z):
        a, ell, _ = curve(z, V, sG, lam0, beta0, ctx=ctx)
        return ell - ctx.log(a / (1 - a)) - ctx.log(ctx.mpf(L) - 1)

    z = ctx.findroot(mismatch, (ctx.mpf("0.5"), 2 + ctx.log(L)), solver="illinois", verify=False)
    if not abs(mismatch(z)) < ctx.mpf(10) ** (5 - dps):
        raise ArithmeticError(f"no copy landing found at L = {L}, V = {V}")
    a, _, Pi = curve(z, V, sG, lam0, beta0, ctx=ctx)
    return {"z": float(z), "a_star": float(a), "P_star": float(L * Pi)}
