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
:func:`emergence.numerics.asymptotics.scaling_check` gives ratios, local exponents and the sub-leading
fit.  The verdict (:func:`scaling_report`) is that check for power laws; for the softmax log law, whose
corrections are too slow for any fit at reachable sizes, it is the *derived-balance criterion*: data
against the derived balance, the balance certified against the full action to L = 1e12
(:func:`certify_balance`), and the law's power of ln L against the balance at ln L = 1e3 ... 1e4
(:func:`asymptotic_residual`).  The laws are the paper's claims (input), not derived results;
``emergence scaling --law`` replaces one by any expression (:class:`Law`).

The crossover sweeps stay at :math:`L/V \le 256`: beyond, the copy mode of model T switches on
by a jump of the global minimum (found by :mod:`.first_order`); there the jump is measured
instead of the onset (``docs/copy_head_scaling.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable

import mpmath
import numpy as np

from emergence.numerics.asymptotics import local_exponents, scaling_check
from emergence.numerics.copy_head.crossover import branch_point, copy_onset
from emergence.numerics.copy_head.first_order import coexistence_point, coexisting_branches, jump_intervals
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
from emergence.base.errors import DivergenceError, EmergenceError


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
                raise EmergenceError(f"--law {self.law!r} is not finite and positive at L={L}, V={V}")
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
    landing: Callable | None = None
    """``landing(L, V, ctx)``: the copy weight of the balance's copy minimum (softmax; starts the
    full-action certification at large L, :func:`certify_balance`)."""


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

    softmax-first-order, for beta = beta0/L and an L-independent logit variance (a = 0):

    - r = 1 (readout variance lambda0/L, the default): the landing balance of
      emergence.theory.copy_head.asymptotics.readout_coexistence (:func:`readout_landing`), law
      constant lim P*/(L ln^2 L) = V/(beta0 sG (V-1)) (readout_leading_P_star);
    - r = 0 (lambda fixed): P* = L V ell^3 / (beta0 sG (V-1)(ell-1)) at :func:`ell_of_L`, law constant
      V/(4 beta0 sG (V-1)) (leading_P_star).

    linear-second-order: the kernel's closed-form P1 with lim P1/V^2 (kernel of
    emergence.theory.copy_head.landau; model T scalings a = 0, d = 1, e = 0, beta0 = 1).
    Otherwise None (the kernel forms are used).
    """
    model_t = convention.architecture == "T" and convention.a == 0 and convention.d == 1 and convention.e == 0
    if not model_t:
        return None
    kernels = generated_kernels()
    asymptotics = kernels.asymptotics
    if claim == "softmax-first-order" and convention.r in (0, 1):
        V_fixed = CLAIMS[claim].sweeps[0].fixed
        if convention.r == 1:
            return _readout_reference(kernels, convention, V_fixed)
        constant = float(asymptotics.softmax_P_star_law_constant(V_fixed, convention.beta0, convention.sigma_G2))

        def value(L, V, ctx):
            if L <= 2 * float(ctx.e) ** 3:
                return None
            sG, _, _ = model_scales_mp(kernels, "softmax", L, V, convention, ctx)
            return asymptotics.softmax_P_star_balance_mp(L, V, convention.beta0, sG, ell_of_L(L, ctx), ctx=ctx)

        def landing(L, V, ctx):
            return ctx.sqrt((ell_of_L(L, ctx) - 1) / L)

        return Reference("L*V*ell**3/(beta0*sG*(V - 1)*(ell - 1)), ell = 1 - LambertW(-2*exp(2)/L, -1)/2",
                         value, True, constant, landing)
    matched = convention.attention_normalisation_exponent == 1 - convention.r / 2  # lam*s as for A = G/L, lam = 1
    if claim == "linear-second-order" and convention.beta0 == 1 and matched:
        closed = kernel_reference(claim, convention, kernels)
        assert closed is not None  # the linear claims have a kernel reference
        law_constant = (float(asymptotics.linear_P1_law_constant(convention.sigma_G2, convention.sigma_W2))
                        if convention.c == 0 else None)
        return Reference(closed.form, closed.value, True, law_constant)
    return None


def _readout_reference(kernels, convention, V_fixed) -> Reference:
    """The r = 1 landing balance as a :class:`Reference` (sG, lambda0 = lambda L, beta0 from the convention)."""
    law_constant = float(kernels.asymptotics.softmax_readout_P_star_law_constant(
        V_fixed, convention.beta0, convention.sigma_G2))

    def balance(L, V, ctx):
        sG, lam, beta = model_scales_mp(kernels, "softmax", L, V, convention, ctx)
        try:
            return landing_balance(L, V, sG, lam * ctx.mpf(L), beta * ctx.mpf(L), ctx)
        except ArithmeticError:
            return None

    def value(L, V, ctx):
        found = balance(L, V, ctx)
        return None if found is None else found["P_star"]

    def landing(L, V, ctx):
        found = balance(L, V, ctx)
        return None if found is None else found["a_star"]

    return Reference("L*Pi(z), a(z), ell(z) of readout_coexistence closed by ell = log(a/(1 - a)) + log(L - 1)",
                     value, True, law_constant, landing)


def _window(law: float, low: float, high: float, points: int) -> np.ndarray:
    return np.geomspace(law * low, law * high, points)


def _located(action, locate, law: float, coarse: int = 100, fine: int = 200, rough=None):
    """``locate(minima)`` on a fine grid one decade around a first guess, and those minima.

    The guess comes from every local minimum on a coarse grid over law * [1e-6, 1e6]: ``rough(minima)``
    when given (a cheaper guess), else, or where the fine grid around it finds nothing, ``locate(minima)``.
    """
    minima = local_minima(action, _window(law, 1e-6, 1e6, coarse))
    for guess in ((rough,) if rough is not None else ()) + (locate,):
        centre = guess(minima)
        if centre is None:
            continue
        near = local_minima(action, _window(centre, 0.1, 10.0, fine))
        found = locate(near)
        if found is not None:
            return found, near
    return None, None


def _first_jump_cell(action, minima) -> float | None:
    """Geometric centre of the first grid interval, in P, among those where the global minimum changes
    most (:func:`~emergence.numerics.copy_head.first_order.jump_intervals`, unrefined): where a jump is looked for closer."""
    intervals = jump_intervals(action, minima, levels=0)
    return float(np.sqrt(intervals[0][0] * intervals[0][1])) if intervals else None


def _refined_jump(action, minima, P_star: float, dps: int):
    """P* to ``dps`` digits where both branches exist around it, else its float64 value."""
    indices, lower, upper = coexisting_branches(minima)
    if len(indices) == 0:
        return P_star
    assert lower is not None and upper is not None  # some grid point has two minima
    j = int(np.argmin(np.abs(np.log(minima.P[indices] / P_star))))
    return coexistence_point_mp(action, P_star, branch_point(action, lower[:, j], P_star),
                                branch_point(action, upper[:, j], P_star), dps)


def measure_transition(claim: Claim, L: int, V: int, convention=None, dps: int = 50, kernels=None):
    """The claim's transition at sizes ``L, V``: float64 location refined to ``dps`` digits (mpf).

    The transition is searched over law * [1e-6, 1e6] (coarse grid, then a fine grid one
    decade around), with the *claimed* law even where ``--law`` replaced it (the data do not
    depend on the law tested).  For the crossover: the copy onset, or, where the copy mode
    switches on by a jump of the global minimum, the jump (then the claim is off its smooth regime).
    """
    action = reduced_action(claim.attention, L, V, convention, kernels)
    law = float(CLAIMS.get(claim.name, claim).law_value(L, V, context(15)))
    if claim.transition == "P1":
        P1 = second_order_point(action, law * 1e-6, law * 1e6, scan=400)
        if P1 is None:
            raise DivergenceError(f"no second-order point within 1e-6..1e6 x law at L={L}, V={V}")
        return second_order_point_mp(action, P1, dps)
    if claim.transition == "P_star":
        P_star, minima = _located(action, lambda m: coexistence_point(action, m), law,
                                  rough=lambda m: _first_jump_cell(action, m))
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


CERTIFICATION_SIZES: tuple[int, ...] = (10**6, 10**8, 10**10, 10**12)
"""Sizes L at which the full reduced action's transition is solved and compared with the derived balance."""

ASYMPTOTIC_LOG_SIZES: tuple[int, ...] = (10**3, 10**4)
"""u = ln L at which the law's residual power of ln L against the derived balance is measured."""

ASYMPTOTIC_TOLERANCE = 0.1
"""Bound on that residual power (a law off by a half power of ln L has |kappa_oo| ~ 0.5)."""


def certify_balance(claim: Claim, reference: Reference, convention, V: int, dps: int, kernels=None,
                    sizes: tuple[int, ...] = CERTIFICATION_SIZES) -> dict:
    """The full reduced action's coexistence point at each of ``sizes`` (``dps`` digits, started from the
    balance and its landing) divided by the balance; ``consistent`` when every ratio is within
    :data:`REFERENCE_TOLERANCE` of 1.  Also the effective power of ln L at the largest size."""
    ctx = context(dps)
    assert reference.landing is not None  # certifiable: a reference with a landing
    Ls, ratios, transitions = [], [], []
    expected_error = REFERENCE_TOLERANCE / 1000  # the bracket's first width; then the last size's error
    for L in sizes:
        balance, landing = reference.value(L, V, ctx), reference.landing(L, V, ctx)
        if balance is None or landing is None:
            continue
        action = reduced_action(claim.attention, L, V, convention, kernels)
        uniform, copy = [-ctx.log(ctx.mpf(L) - 1)], [ctx.log(landing / (1 - landing))]
        P_star = coexistence_point_mp(action, float(balance), uniform, copy, dps, expected_error)
        expected_error = max(float(abs(P_star / balance - 1)), 1e-14)
        Ls.append(L)
        transitions.append(P_star)
        ratios.append(P_star / balance)
    consistent = len(Ls) == len(sizes) and all(abs(r - 1) <= REFERENCE_TOLERANCE for r in ratios)
    return {"sizes": Ls, "P_star": [float(p) for p in transitions],
            "ratio_to_balance": [float(r) for r in ratios],
            "effective_log_power": effective_log_power(Ls, transitions, ctx),
            "tolerance": REFERENCE_TOLERANCE, "consistent": bool(consistent)}


def effective_log_power(Ls, transitions, ctx) -> float | None:
    r"""The power p of :math:`\ln L` in :math:`P \propto L\ln^p L` between the two largest sizes,
    :math:`\Delta\ln(P/L)/\Delta\ln\ln L`."""
    if len(Ls) < 2:
        return None
    (L1, P1), (L2, P2) = [(ctx.mpf(L), ctx.mpf(P)) for L, P in zip(Ls[-2:], transitions[-2:])]
    return float((ctx.log(P2 / L2) - ctx.log(P1 / L1)) / (ctx.log(ctx.log(L2)) - ctx.log(ctx.log(L1))))


def asymptotic_residual(claim: Claim, reference: Reference, V: int, ctx,
                        logs: tuple[int, ...] = ASYMPTOTIC_LOG_SIZES) -> dict:
    r"""The law against the derived balance far beyond any solver: at :math:`L = e^u`, u in ``logs``,
    the ratio balance/law and its residual power of ln L, :math:`\kappa_\infty = \Delta\ln(B/f)/\Delta\ln u`."""
    ratios = []
    for u in logs:
        L = ctx.exp(ctx.mpf(u))
        balance = reference.value(L, V, ctx)
        ratios.append(None if balance is None else balance / claim.law_value(L, V, ctx))
    if any(r is None or not r > 0 for r in ratios):
        return {"log_L": list(logs), "ratio": None, "kappa": None, "consistent": False}
    kappa = (ctx.log(ratios[-1]) - ctx.log(ratios[0])) / (ctx.log(logs[-1]) - ctx.log(logs[0]))
    return {"log_L": list(logs), "ratio": [float(r) for r in ratios if r is not None], "kappa": float(kappa),
            "tolerance": ASYMPTOTIC_TOLERANCE, "consistent": bool(abs(kappa) <= ASYMPTOTIC_TOLERANCE)}


@lru_cache(maxsize=256)
def _claimed_transition(claim_name: str, L: int, V: int, convention, dps: int):
    """:func:`measure_transition` of a claim on the generated kernels, remembered: testing several laws
    on the same claim reuses the data."""
    return measure_transition(CLAIMS[claim_name], L, V, convention, dps)


def measure_transitions(claim: Claim, sizes, convention=None, dps: int = 50, kernels=None,
                        remembered: bool = True) -> list:
    """:func:`measure_transition` at each ``(L, V)`` of ``sizes``, one after the other, in this process
    (on the generated kernels remembered per claim name, so testing several laws reuses the data;
    ``remembered=False`` solves every size afresh, as a benchmark must)."""
    if kernels is not None or not remembered:
        return [measure_transition(claim, L, V, convention, dps, kernels) for L, V in sizes]
    return [_claimed_transition(claim.name, L, V, convention or default_convention(), dps) for L, V in sizes]


def scaling_report(claim_name: str, convention=None, *, dps: int = 50, fast: bool = False, kernels=None,
                   reference: Reference | None = None, law: Law | None = None,
                   transitions: Callable | None = None) -> dict:
    """The JSON-ready report of one claim (keys: claim, law, sizes, P_star, ratio, ..., criterion).

    ``sizes`` lists ``{"L", "V", "sweep"}``; ``local_exponent``, ``ratio`` and ``fit`` are keyed
    by the swept variable; ``law``: another law than the claimed one (same data, same criterion).

    The criterion (``criterion`` in the report; ``docs/copy_head_scaling.md``):

    - **derived balance** (a log law whose reference can be certified: ``reference.landing`` is
      known): the data agree with the balance within :data:`REFERENCE_TOLERANCE` at the largest
      size; the full reduced action agrees with it within the same tolerance at every
      :data:`CERTIFICATION_SIZES` (up to L = 1e12); the law's residual power of ln L against the
      balance at ln L = 1e3 ... 1e4 (:func:`asymptotic_residual`) is within
      :data:`ASYMPTOTIC_TOLERANCE`; the derived constant lim balance/law is finite and positive; the
      fitted constant is finite and positive.  The data's own residual power of ln L is reported
      but does not enter: at L <= 1e4 it is -0.4 ... -0.7 for the right law (log corrections) and
      cannot tell ln^1.5 from ln^2.
    - **data** (every other case): :func:`emergence.numerics.asymptotics.scaling_check` on each
      sweep (residual exponent at the two largest sizes within ``tolerance``, fitted constant
      positive) and, where an asymptotic ``reference`` is known (default: the kernels' closed
      forms, :func:`kernel_reference`), the measurement within :data:`REFERENCE_TOLERANCE` of it
      at the largest size and its derived law constant finite and positive.

    ``reference`` defaults to :func:`derived_reference` (generated kernels) or else :func:`kernel_reference`.
    ``fit[variable]`` holds the sub-leading fit, ``derived_constant`` (lim transition/law of the
    derived form) and ``fitted_over_derived``.
    ``transitions``: what measures a sweep's sizes, with the signature of
    :func:`measure_transitions` (the default; a sweep executor is passed in from above).
    """
    claim, reference = _claim_and_reference(claim_name, convention, dps, kernels, reference, law)
    certifiable = reference is not None and reference.landing is not None and claim.kind == "log"
    ctx = context(dps)
    for sweep in claim.sweeps:  # a law that is not finite and positive fails before any long work
        for L, V in sweep.sizes(fast):
            claim.law_value(L, V, ctx)
    measure = transitions or measure_transitions
    sizes, values, ratios, exponents, fits, verdicts = [], [], {}, {}, {}, []
    tolerance = None
    extra: dict = {}  # the certified sweep's report entries (derived-balance criterion)
    for sweep in claim.sweeps:
        points = sweep.sizes(fast)
        measured = [ctx.mpf(m) for m in measure(CLAIMS[claim_name], points, convention, dps, kernels)]
        check, fit, holds = _sweep_verdict(claim, sweep, points, measured, reference, law, ctx)
        if certifiable and reference is not None:  # certifiable implies a reference
            extra, holds = _certified_verdict(claim, reference, convention, sweep, points, measured, fit, dps,
                                              kernels, ctx)
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
        "law_replaced": law is not None,
        "criterion": "derived balance" if certifiable else "data",
        "sizes": sizes,
        "P_star": values,
        "ratio": ratios,
        "local_exponent": exponents,
        "fit": fits,
        "holds": all(verdicts),
        "tolerance": tolerance,
        "dps": dps,
        **extra,
    }


def _claim_and_reference(claim_name: str, convention, dps: int, kernels, reference: Reference | None,
                         law: Law | None) -> tuple[Claim, Reference | None]:
    """The claim (with ``law`` in place of its own when given) and the reference :func:`scaling_report` compares
    with; refuses an unknown claim or fewer than 15 digits."""
    if claim_name not in CLAIMS:
        raise EmergenceError(f"unknown claim {claim_name!r}; choose {', '.join(CLAIMS)}")
    if dps < 15:
        raise EmergenceError(f"--dps must be at least 15, got {dps}")
    claim = CLAIMS[claim_name] if law is None else CLAIMS[claim_name].with_law(law)
    if reference is None:
        derived = derived_reference(claim_name, convention or default_convention()) if kernels is None else None
        reference = derived if derived is not None else kernel_reference(claim_name, convention, kernels)
    return claim, reference


def _sweep_verdict(claim: Claim, sweep, points, measured, reference: Reference | None, law: Law | None,
                   ctx) -> tuple[dict, dict, bool]:
    """The data criterion on one sweep: :func:`scaling_check`, and the comparison with ``reference`` when known.

    Returns the check, the fit (with ``reference``, ``derived_constant`` and ``fitted_over_derived`` where
    a reference is known) and whether the sweep holds."""
    xs = [ctx.mpf(L if sweep.variable == "L" else V) for L, V in points]
    law_values = [claim.law_value(L, V, ctx) for L, V in points]
    check = scaling_check(xs, measured, law_values, kind=claim.kind, ctx=ctx)
    fit = dict(check["fit"], residual_exponent=check["residual_exponent"])
    holds = check["holds"]
    if reference is not None:
        comparison = _compare_with_reference(reference, points, xs, measured, claim.kind, ctx, law)
        fit["reference"] = comparison
        derived = comparison["law_constant"]
        fit["derived_constant"] = derived
        fit["fitted_over_derived"] = (fit["coefficients"]["c"] / derived
                                      if derived is not None and math.isfinite(derived) and derived > 0 else None)
        holds = holds and comparison["consistent"]
    return check, fit, holds


def _certified_verdict(claim: Claim, reference: Reference, convention, sweep, points, measured, fit: dict,
                       dps: int, kernels, ctx) -> tuple[dict, bool]:
    """The derived-balance criterion on one sweep: the report's ``certification``, ``asymptotic`` and
    ``effective_log_power``, and whether the sweep holds (data near the balance, the full action near it at
    every certification size, the law's residual power of ln L small, the fitted constant positive)."""
    constant = fit["coefficients"]["c"]
    certification = certify_balance(claim, reference, convention, sweep.fixed, dps, kernels)
    asymptotic = asymptotic_residual(claim, reference, sweep.fixed, ctx)
    extra = {"certification": certification, "asymptotic": asymptotic,
             "effective_log_power": effective_log_power([p[0] for p in points], measured, ctx)}
    holds = (fit["reference"]["consistent"] and certification["consistent"] and asymptotic["consistent"]
             and math.isfinite(constant) and constant > 0)
    return extra, holds


def _compare_with_reference(reference: Reference, points, xs, measured, kind: str, ctx, law: Law | None = None) -> dict:
    """Ratios to the reference where it is defined (``value`` returns ``None`` outside its domain).

    The derived law constant is the reference's, times ``law.constant_factor`` for a replaced law."""
    pairs = [(x, m / r) for (L, V), x, m in zip(points, xs, measured)
             if (r := reference.value(L, V, ctx)) is not None]
    ratios = [r for _, r in pairs]
    variable = [ctx.log(x) if kind == "log" else x for x, _ in pairs]
    exponents = [float(e) for e in local_exponents(variable, ratios, ctx)] if len(pairs) > 1 else []
    last = float(ratios[-1]) if ratios else math.nan
    law_constant = reference.law_constant
    if law_constant is not None and law is not None:
        law_constant = law_constant * law.constant_factor
    constant_ok = law_constant is None or (math.isfinite(law_constant) and law_constant > 0)
    consistent = constant_ok and (not reference.asymptotic or abs(last - 1) <= REFERENCE_TOLERANCE)
    return {
        "form": reference.form,
        "sizes": [int(x) for x, _ in pairs],
        "ratio": [float(r) for r in ratios],
        "residual_exponent": exponents,
        "law_constant": law_constant,
        "asymptotic": reference.asymptotic,
        "tolerance": REFERENCE_TOLERANCE if reference.asymptotic else None,
        "consistent": bool(consistent),
    }


def landing_balance(L, V, sG, lam0, beta0, ctx) -> dict:
    r"""The r = 1 landing balance in ``ctx`` (mpmath numbers; any size, e.g. :math:`L = e^{10^4}`):
    ``z``, ``a_star`` and ``P_star`` (see :func:`readout_landing`).  Raises :class:`ArithmeticError`
    where no landing exists in the bracket."""
    curve = generated_kernels().asymptotics.softmax_readout_landing_curve_mp
    L = ctx.mpf(L)
    log_positions = ctx.log(L - 1)

    def mismatch(z):
        a, ell, _ = curve(z, V, sG, lam0, beta0, ctx=ctx)
        return ell - ctx.log(a / (1 - a)) - log_positions

    z = ctx.findroot(mismatch, (ctx.mpf("0.5"), 2 + ctx.log(L)), solver="illinois", verify=False)
    if not abs(mismatch(z)) < ctx.mpf(10) ** (5 - ctx.dps) * (1 + abs(log_positions)):
        raise ArithmeticError(f"no copy landing found at L = {float(L):.6g}, V = {V}")
    a, _, Pi = curve(z, V, sG, lam0, beta0, ctx=ctx)
    return {"z": z, "a_star": a, "P_star": L * Pi}


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
    ctx = mpmath.mp.clone()
    ctx.dps = dps
    found = landing_balance(L, V, ctx.mpf(sG), ctx.mpf(lam0), ctx.mpf(beta0), ctx)
    return {name: float(value) for name, value in found.items()}
