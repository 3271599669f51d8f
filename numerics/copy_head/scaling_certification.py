r"""The derived forms a scaling claim's transition is compared with, and their certification.

A :class:`Reference` is a derived form of the transition: the generated kernels' closed forms
(:func:`kernel_reference`) or the engine's derived large-size balance (:func:`derived_reference`).  For the
softmax log law, whose corrections are too slow for any fit at reachable sizes, the balance itself is
certified: against the full reduced action to L = 1e12 (:func:`certify_balance`), and the law against the
balance far beyond any solver, at ln L = 1e3 ... 1e4 (:func:`asymptotic_residual`).  :func:`readout_landing`
is where the softmax jump lands for the readout scaling r = 1.  The verdict that uses them is
:func:`emergence.numerics.copy_head.scaling.scaling_report`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import mpmath

from emergence.numerics.copy_head.precise import coexistence_point_mp, context
from emergence.numerics.copy_head.reduced_action import (
    default_convention,
    generated_kernels,
    model_scales_mp,
    reduced_action,
)
from emergence.numerics.copy_head.scaling_claims import CLAIMS, Claim


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
