r"""The copy-head derivation as a list of steps (rendered by ``emergence derive`` and the docs).

>>> [step.key for step in derivation_steps("softmax", "T")][:3]
['model', 'marginal', 'population']
"""

from __future__ import annotations

import sympy as sp

from emergence.theory.copy_head.asymptotics import (
    coexistence_solution, ell, leading_P_star, readout_coexistence, readout_leading_P_star, scaled_action_limits, x,
)
from emergence.theory.copy_head.bulk import linear_reduced_action_M
from emergence.theory.copy_head.isotropic_bound import anisotropic_prior_dominated_ratio, isotropic_ratio
from emergence.theory.copy_head.landau import (
    copy_direction_curvature, copy_mode_onset, landau_coefficients, leading_copy_mode_onset,
    leading_second_order_point, second_order_point, symmetric_point_hessian,
)
from emergence.theory.copy_head.loss import infinite_data_loss, linear_losses, softmax_losses
from emergence.theory.copy_head.marginal import readout_marginal
from emergence.theory.copy_head.model import SCALE_LAWS
from emergence.theory.copy_head.order_parameters import effective_linear_scales, linear_reduced_action, query_key_logit_covariance
from emergence.theory.copy_head.patterns import attention_invariants
from emergence.theory.copy_head.order_parameters import linear_pattern
from emergence.theory.copy_head.population import population_action, quadratic_form_average
from emergence.theory.copy_head.softmax import (
    gauge_fixed_copy_cost, gaussian_exponential_moments, logit_gap, others_square_sum, softmax_pattern,
    softmax_reduced_action, softmax_reduced_action_M, variance_rate,
)
from emergence.theory.copy_head.symbols import L, P, V, beta, c1, lam, s1, sG
from emergence.theory.derivation_steps import DerivationStep, Equation

ATTENTIONS = ("linear", "softmax")
ARCHITECTURES = ("T", "M")

p_tilde = sp.Symbol(r"\tilde{p}", positive=True)


def _S(name: str) -> sp.Symbol:
    return sp.Symbol(name)


def _readable_population(expression: sp.Expr) -> sp.Expr:
    r"""The population action with :math:`\lambda = \tilde p V/(\beta P)` substituted (for display)."""
    substituted = expression.subs(lam, p_tilde * V / (beta * P))
    return sp.Add(*(sp.factor(term) for term in sp.Add.make_args(substituted)))


def _model_step(architecture: str) -> DerivationStep:
    equations = [Equation(name, _S(name), law) for name, law in SCALE_LAWS.items()]
    if architecture == "T":
        covariance = query_key_logit_covariance()
        equations += [
            Equation("logit_covariance", _S("Sigma/sigma2"), covariance["factorised"]),
            Equation("precision_kappa", _S("kappa"), covariance["kappa"]),
        ]
        summary = ("Model T: logits G = z^T W_QK z' on z = token (+) position, W_QK ~ N(0, sigma2); readout "
                   "W ~ N(0, lam); Gibbs likelihood exp(-beta/2 sum ||Y - A X W||^2). Restricted to the "
                   "token-independent family the logit prior has covariance sigma2 (I + J/V) G (I + J/V) "
                   "(J_left/J_right: multiplication by J = 11^T from the left/right), precision K G K with "
                   "K = I + kappa J.")
    else:
        summary = ("Model M: free positional logits G ~ N(0, sigma2) per entry; readout W ~ N(0, lam); Gibbs "
                   "likelihood exp(-beta/2 sum ||Y - A X W||^2).")
    return DerivationStep("model", "Model and convention scales", summary, tuple(equations), "assumed")


def _marginal_step() -> DerivationStep:
    marginal = readout_marginal()
    return DerivationStep(
        "marginal", "Exact marginal over the readout W",
        "Per output column the energy is quadratic in w; SymPy's matrix calculus gives the Hessian lam*H and the "
        "field h, and the Gaussian integral gives S(C, B, D) with C = Phi^T Phi, B = Phi^T Y, D = Y^T Y "
        "(V x V: the PL x PL evidence after Woodbury and the determinant lemma; constant dropped).",
        (Equation("hessian", _S("lam*H"), marginal["hessian"]), Equation("field", _S("h"), marginal["field"]),
         Equation("action", _S("S_readout"), marginal["action"])))


def _population_step() -> DerivationStep:
    t_M, s_M = sp.symbols("tr_M total_M")
    alpha, gamma = quadratic_form_average(t_M, s_M).identity_and_ones(V)
    return DerivationStep(
        "population", "Population average over i.i.d. one-hot tokens",
        "From E[x x^T] = I/V and E[x] = 1/V: E[X^T M X] = alpha I + gamma J. Replacing C, B, D by P times their "
        "expectations (self-averaging for PL >> V; fluctuation corrections of order V^2 dropped) and evaluating "
        "the step-1 action in span{I, J} gives the data action in q = ||A||^2, m = tr(A^T S), r = ||A 1||^2, "
        "n = (A 1)^T (S 1); displayed with lam = p~ V/(beta P).",
        (Equation("lemma_identity", _S("alpha"), alpha), Equation("lemma_ones", _S("gamma"), sp.factor(gamma)),
         Equation("data_action", _S("S_data"), _readable_population(population_action("cyclic", "raw"))),
         Equation("data_action_centred", _S("S_data_centred"),
                  _readable_population(population_action("cyclic", "centred")))),
        "derived")


def _linear_reduction_step(architecture: str) -> DerivationStep:
    invariants = attention_invariants(linear_pattern(), L, "cyclic")
    equations = [Equation(name, _S(name), value) for name, value in invariants.items()]
    if architecture == "T":
        scales = effective_linear_scales("T", 1)
        equations = [Equation("s1", s1, scales["s1"]), Equation("sG", sG, scales["sG"])] + equations
        equations.append(Equation("action", _S("S_lin"), linear_reduced_action("raw")))
        summary = ("Symmetric family A = c1 J/L + cG S (bulk dropped). The prior K-norm of G = L A is diagonal in "
                   "u = c1 + cG and cG: u^2/(2 s1) + (L-1) cG^2/(2 sG), with s1, sG read off its Hessian.")
    else:
        equations.append(Equation("action_with_bulk", _S("S_M"), linear_reduced_action_M("raw")))
        summary = ("Isotropic prior on A (entry variance s): s1 = sG = s. With the bulk kept, the row-sum part "
                   "(dimension L-1) and the bulk (dimension L^2-L-1) enter through their squared norms R_row, "
                   "R_bulk with entropy -(d/2-1) ln R; saddle point over the norms.")
    return DerivationStep("reduction", "Reduction to order parameters", summary, tuple(equations))


def _landau_step() -> DerivationStep:
    hessian = symmetric_point_hessian("raw")
    uncoupled = landau_coefficients("raw", coupled=False)
    coupled = landau_coefficients("raw", coupled=True)
    return DerivationStep(
        "landau", "Landau expansion at the symmetric point (linear attention)",
        "S is even in (c1, cG) (Z2), so c1 = cG = 0 is stationary. Hessian entries; the effective action "
        "S0 + r c1^2 + u c1^4 with cG held at 0 (shown) or relaxed, cG = alpha c1 (used by the kernels). "
        "P1 solves H_11 = 0 (one positive root; a spurious negative branch is discarded); it equals the root of "
        "the relaxed r to 5e-4 for L >= 4V (measured; up to a factor ~3 off for L ~ V, where the copy coupling "
        "matters). u > 0 there makes the transition second order, with c1^2 = -r/(2u) ~ (P - P1): the mean-field "
        "exponent 1/2. P_G zeroes the curvature along the copy direction S - J/L.",
        (Equation("H11", _S("H_11"), hessian[0, 0]), Equation("H1G", _S("H_1G"), hessian[0, 1]),
         Equation("H_copy", _S("H_copy"), copy_direction_curvature("raw")),
         Equation("r_uncoupled", _S("r"), uncoupled["r"]), Equation("u_uncoupled", _S("u"), sp.factor(uncoupled["u"])),
         Equation("alpha", _S("alpha"), coupled["alpha"]),
         Equation("condensate", c1**2, -_S("r") / (2 * _S("u"))),
         Equation("P1", _S("P_1"), second_order_point("raw")),
         Equation("P1_leading", _S("lim_{L->oo} P_1 (model T)"), leading_second_order_point()["L_to_infinity"]),
         Equation("PG", _S("P_G"), copy_mode_onset("raw")),
         Equation("PG_leading", _S("lim_{L->oo} P_G / L^(3/2) (model T)"),
                  leading_copy_mode_onset()["coefficient_of_L32"])))


def _pushforward_step(architecture: str) -> DerivationStep:
    first, second = gaussian_exponential_moments()
    equations = [Equation("exp_moment", _S("E[exp(G)]"), first), Equation("exp2_moment", _S("E[exp(2G)]"), second),
                 Equation("gap", _S("g"), logit_gap()), Equation("others_squares", _S("sum_others A^2"),
                                                                 others_square_sum()),
                 Equation("gauge_cost", _S("prior(g S mod row constants)"), gauge_fixed_copy_cost(architecture))]
    if architecture == "M":
        equations.append(Equation("variance_rate", _S("I(t)"), variance_rate()))
    return DerivationStep(
        "pushforward", "Softmax pushforward of the Gaussian logit prior",
        "A row with previous-token gap g over L-1 Gaussian logits of variance t puts weight a on the previous token "
        "(law of large numbers over the others); row constants are a gauge (softmax-invariant) and are "
        "minimised out. Model T on the bulk-free family has t = 0; model M keeps t with the Cramer rate of the "
        "empirical variance.", tuple(equations))


def _softmax_reduction_step(architecture: str) -> DerivationStep:
    invariants = attention_invariants(softmax_pattern(), L, "cyclic")
    equations = [Equation(name, _S(name), sp.factor(value)) for name, value in invariants.items()]
    if architecture == "T":
        equations.append(Equation("action", _S("S_soft"), softmax_reduced_action("raw")))
        summary = ("Reduced action with one order parameter a = aG (sG: logit variance along the unit copy "
                   "direction, sigma2 for T). Non-convex in a: two competing minima (uniform a ~ 1/L, copy).")
    else:
        equations.append(Equation("action", _S("S_soft_M"), softmax_reduced_action_M("raw")))
        summary = "Reduced action of model M in (a, t), s the entry variance of G."
    return DerivationStep("softmax_action", "Reduced softmax action", summary, tuple(equations))


def _asymptotics_step() -> DerivationStep:
    limits = scaled_action_limits()
    solution = coexistence_solution()
    leading = leading_P_star()
    return DerivationStep(
        "asymptotics", "Leading asymptotic form of the first-order point P* (lambda fixed, r = 0)",
        "Scaling beta = beta0/L, P = L Pi, a = sqrt(x/L); SymPy limits L -> oo of the data part and "
        "p~ -> oo; coexistence (Lambda = 0, dLambda/dx = 0) solved by SymPy; ell on the W_{-1} branch "
        "(solve() returns the principal branch, which is spurious here); leading term from W_{-1}(z) ~ ln(-z). "
        "Checked against the exact coexistence of the full reduced action at 50 digits up to L = 1e12.",
        (Equation("data_limit", _S("f(x, Pi)"), limits["data"]),
         Equation("x_star", x, solution["x"]), Equation("Pi_star", _S("Pi"), solution["Pi"]),
         Equation("ell", ell, solution["ell_lambert"]),
         Equation("P_star_balance", _S("P*"), leading["balance"]),
         Equation("P_star_leading", _S("P* ~"), leading["leading"])))


def _readout_asymptotics_step() -> DerivationStep:
    landing = readout_coexistence()
    leading = readout_leading_P_star()
    return DerivationStep(
        "readout_asymptotics", "Where the jump lands and P*, readout variance lambda = lambda0/L (r = 1, the default)",
        "Scaling lambda = lambda0/L, beta = beta0/L, P = L Pi, a fixed: the readout's signal-to-noise z = p~ q stays "
        "finite; SymPy limit of the data part, stationarity in a solved for ell, coexistence solved for the copy "
        "odds, all parametrised by z and closed by ell = ln(a/(1-a)) + ln(L-1) (numerically). As z -> oo: "
        "ell/z -> 1 and ln(odds)/z -> 0 (SymPy limits), so z ~ ln L and P* ~ L ln^2 L lim Pi/z^2. "
        "Checked against the exact coexistence of the full reduced action at 50 digits up to L = 1e12.",
        (Equation("data_limit", _S("f(a, Pi)"), landing["data"]),
         Equation("odds", _S("a/(1-a)"), landing["odds"]), Equation("ell", ell, landing["ell"]),
         Equation("Pi_star", _S("Pi"), landing["Pi"]),
         Equation("ell_over_z", _S("lim ell/z"), leading["ell_over_z"]),
         Equation("P_star_leading", _S("P* ~"), leading["leading"])))


def _loss_step(attention: str) -> DerivationStep:
    losses = linear_losses() if attention == "linear" else softmax_losses()
    return DerivationStep(
        "loss", "Predicted train and test loss",
        "Posterior-mean readout eps (I + eps C)^-1 B at the population level (train = test there; the "
        "generalisation gap O(V^2/(PL)) is a dropped fluctuation effect); P -> oo: readout C^-1 B. Per position.",
        (Equation("infinite_data_invariants", _S("E_test"), infinite_data_loss()),
         Equation("infinite_data", _S("E_test(order parameters)"), sp.factor(losses["infinite_data"]))))


def _bound_step() -> DerivationStep:
    ratio = isotropic_ratio()
    return DerivationStep(
        "convention_bound", "Convention study: P_G / P1",
        "Both transitions are roots of 1 + zeta b y - zeta a y^2 (y = beta P, zeta = s lam). For an isotropic "
        "prior the ratio runs between the Occam-dominated and the prior-dominated limits; the latter exceeds the "
        "first hand derivation's sqrt(L/V) by sqrt(V/(V-1)) (1 + O(1/L)). Independent s1, sG multiply it by sqrt(s1/sG).",
        (Equation("prior_dominated", _S("(P_G/P_1)^2"), ratio["prior_dominated_squared"]),
         Equation("occam_dominated", _S("P_G/P_1 (Occam)"), ratio["occam_dominated"]),
         Equation("excess", _S("(P_G/P_1)^2 / (L/V)"), ratio["excess_over_note_bound_squared"]),
         Equation("anisotropic", _S("(P_G/P_1)^2 (s1 != sG)"), anisotropic_prior_dominated_ratio())))


def derivation_steps(attention: str = "linear", architecture: str = "T") -> list[DerivationStep]:
    """Every step of the copy-head derivation for one attention type and architecture."""
    if attention not in ATTENTIONS or architecture not in ARCHITECTURES:
        raise ValueError(f"unknown attention/architecture {attention!r}/{architecture!r}")
    steps = [_model_step(architecture), _marginal_step(), _population_step()]
    if attention == "linear":
        steps += [_linear_reduction_step(architecture), _landau_step(), _loss_step("linear"), _bound_step()]
    else:
        steps += [_pushforward_step(architecture), _softmax_reduction_step(architecture)]
        if architecture == "T":
            steps += [_readout_asymptotics_step(), _asymptotics_step()]
        steps.append(_loss_step("softmax"))
    return steps
