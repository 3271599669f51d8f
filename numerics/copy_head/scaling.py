r"""The verdict on a scaling claim: its transition measured on the reduced actions at high precision.

At each size of a claim's sweeps (:mod:`.scaling_claims`) the transition is located in float64 on a
logarithmic ``P`` window around the law (:mod:`.phase_diagram` machinery) and refined to ``dps`` digits
(:mod:`.precise`): :func:`measure_transition`.  Then :func:`emergence.numerics.asymptotics.scaling_check`
gives ratios, local exponents and the sub-leading fit.  The verdict (:func:`scaling_report`) is that check
for power laws; for the softmax log law it is the *derived-balance criterion* of
:mod:`.scaling_certification`: data against the derived balance, the balance certified against the full
action to L = 1e12, and the law's power of ln L against the balance at ln L = 1e3 ... 1e4.

The crossover sweeps stay at :math:`L/V \le 256`: beyond, the copy mode of model T switches on
by a jump of the global minimum (found by :mod:`.first_order`); there the jump is measured
instead of the onset (``docs/copy_head_scaling.md``).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable

import numpy as np

from emergence.numerics.asymptotics import local_exponents, scaling_check
from emergence.numerics.copy_head.branches import branch_point
from emergence.numerics.copy_head.crossover import copy_onset
from emergence.numerics.copy_head.first_order import coexistence_point, coexisting_branches, jump_intervals
from emergence.numerics.copy_head.minimisation import local_minima
from emergence.numerics.copy_head.precise import (
    coexistence_point_mp,
    context,
    copy_onset_mp,
    second_order_point_mp,
)
from emergence.numerics.copy_head.reduced_action import default_convention, reduced_action
from emergence.numerics.copy_head.scaling_certification import (
    REFERENCE_TOLERANCE,
    Reference,
    asymptotic_residual,
    certify_balance,
    derived_reference,
    effective_log_power,
    kernel_reference,
)
from emergence.numerics.copy_head.scaling_claims import CLAIMS, Claim, Law
from emergence.numerics.copy_head.second_order import second_order_point
from emergence.base.errors import DivergenceError, EmergenceError, InvalidArgumentError


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
        raise InvalidArgumentError("dps", f"must be at least 15, got {dps}")
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
