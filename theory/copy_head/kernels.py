r"""Generated kernels of the copy-head theory (see ``docs/derivations/copy_head.md``).

Kernels take the convention's *scalars*, so one kernel serves every convention:
``copy_head_scales`` turns the knobs into the effective variances, and the action kernels
take those.  ``sG`` is always the prior variance along the unit copy direction
(S - J/L)/sqrt(L - 1) of the object the attention is built from: the linear attention matrix
A for the linear kernels, the logit matrix G for the softmax kernels.

>>> [module.name for module in kernel_modules()]
['copy_head_scales', 'copy_head_linear', 'copy_head_softmax', 'copy_head_asymptotics', 'copy_head_linear_posterior', 'copy_head_token_process']
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.codegen import Kernel, KernelModule
from emergence.theory.copy_head.bulk import R_bulk, R_row, linear_reduced_action_M, s_A
from emergence.theory.copy_head.landau import copy_mode_onset, landau_coefficients, second_order_point
from emergence.theory.copy_head.loss import linear_losses, softmax_losses
from emergence.theory.copy_head.model import SCALE_LAWS
from emergence.theory.copy_head.order_parameters import (
    effective_linear_scales, linear_reduced_action, matched_linear_normalisation,
)
from emergence.theory.copy_head.softmax import s, softmax_reduced_action, softmax_reduced_action_M, t
from emergence.theory.copy_head.symbols import (
    L, P, V, a, aG, beta, beta0, c, c1, cG, d, e, lam, r_W, s1, sG, sigma2, sigma_G2, sigma_W2,
)

k = sp.Symbol("k", real=True)
"""Linear-attention normalisation exponent: A = G / L**k."""

SIZE_DOMAIN = {"L": (4.0, 4096.0, "log"), "V": (2.0, 256.0, "log"), "P": (1.0, 1e6, "log")}
SCALE_DOMAIN = {
    "s1": (1e-4, 1.0, "log"), "sG": (1e-6, 1.0, "log"), "lam": (0.1, 10.0, "log"),
    "beta": (1e-3, 1.0, "log"), "s": (0.1, 10.0, "log"),
}
KNOB_DOMAIN = {
    "sigma_G2": (0.1, 10.0, "log"), "a": (0.0, 3.0, "uniform"), "sigma_W2": (0.1, 10.0, "log"),
    "c": (0.0, 2.0, "uniform"), "r_W": (0.0, 2.0, "uniform"), "beta0": (0.1, 10.0, "log"), "d": (0.0, 2.0, "uniform"),
    "e": (0.0, 2.0, "uniform"), "k": (0.0, 1.0, "uniform"),
}
ASYMPTOTIC_DOMAIN = {"ell": (1.5, 8.0, "log"), "sigma2": (0.1, 10.0, "log"), "z": (0.5, 10.0, "log"),
                     "lambda0": (0.1, 10.0, "log")}
ORDER_DOMAIN = {"c1": (-1.0, 1.0, "uniform"), "cG": (-0.5, 0.5, "uniform"),
                "R_row": (1e-4, 10.0, "log"), "R_bulk": (1e-3, 100.0, "log"),
                "aG": (0.002, 0.998, "uniform"), "t": (0.01, 10.0, "log"),
                "t_u": (0.01, 10.0, "log"), "t_v": (0.01, 10.0, "log"),
                "c0": (-0.5, 0.5, "uniform"), "a0": (0.002, 0.45, "uniform"), "rho": (0.0, 0.9, "uniform")}
DOMAIN = {**SIZE_DOMAIN, **SCALE_DOMAIN, **KNOB_DOMAIN, **ORDER_DOMAIN, **ASYMPTOTIC_DOMAIN}
KNOBS = (L, V, sigma_G2, a, sigma_W2, c, r_W, beta0, d, e)


def _domain(arguments) -> dict:
    return {symbol.name: DOMAIN[symbol.name] for symbol in arguments}


def _kernel(name, arguments, outputs, summary, **domain_overrides) -> Kernel:
    return Kernel(name, tuple(arguments), tuple(outputs), summary, {**_domain(arguments), **domain_overrides})


def _with_laws(expression: sp.Expr) -> sp.Expr:
    return expression.subs({sigma2: SCALE_LAWS["sigma2"]})


@lru_cache(maxsize=None)
def scales_module() -> KernelModule:
    """Convention knobs -> effective variances (architectures T and M)."""
    general_T = effective_linear_scales("T", 0)
    general_M = effective_linear_scales("M", 0)
    lam_law, beta_law = SCALE_LAWS["lam"], SCALE_LAWS["beta"]
    normalised = L ** (-2 * k)
    matched = L ** (-2 * matched_linear_normalisation()["k"])
    kernels = (
        _kernel("copy_head_scale_laws", KNOBS,
                tuple((name, law) for name, law in SCALE_LAWS.items()),
                "The convention's scale laws: entry variance of the attention weight, readout prior "
                "variance, inverse temperature."),
        _kernel("copy_head_scales", KNOBS,
                (("s1", _with_laws(general_T["s1"]) * matched), ("sG", _with_laws(general_T["sG"]) * matched),
                 ("lam", lam_law), ("beta", beta_law)),
                "Architecture T, linear attention A = G/L**(1 - r/2) (matched: lam*s1 and lam*sG do not depend "
                "on r): variances of A along J/L and the copy direction, readout variance, inverse temperature."),
        _kernel("copy_head_scales_T", (*KNOBS, k),
                (("s1", _with_laws(general_T["s1"]) * normalised),
                 ("sG", _with_laws(general_T["sG"]) * normalised),
                 ("lam", lam_law), ("beta", beta_law)),
                "Architecture T, linear attention A = G/L**k."),
        _kernel("copy_head_scales_M", (*KNOBS, k),
                (("s1", _with_laws(general_M["s1"]) * normalised),
                 ("sG", _with_laws(general_M["sG"]) * normalised),
                 ("lam", lam_law), ("beta", beta_law)),
                "Architecture M (isotropic positional logits), linear attention A = G/L**k."),
        _kernel("copy_head_softmax_scales", KNOBS,
                (("sG", _with_laws(general_T["sG"])), ("lam", lam_law), ("beta", beta_law)),
                "Architecture T, softmax attention: logit variance along the copy direction."),
        _kernel("copy_head_softmax_scales_M", KNOBS,
                (("s", _with_laws(general_M["sG"])), ("lam", lam_law), ("beta", beta_law)),
                "Architecture M, softmax attention: entry variance of the positional logits."),
    )
    return KernelModule("copy_head_scales", "emergence.theory.copy_head.order_parameters", kernels)


@lru_cache(maxsize=None)
def linear_module() -> KernelModule:
    """Reduced linear action, its derivatives, losses, Landau coefficients, closed forms."""
    action = linear_reduced_action("raw")
    centred = linear_reduced_action("centred")
    arguments = (c1, cG, P, L, V, s1, sG, lam, beta)
    landau = landau_coefficients("raw", coupled=True)
    action_M = linear_reduced_action_M("raw")
    losses = linear_losses()
    kernels = (
        _kernel("linear_action", arguments, (("S", action),),
                "S_lin(c1, cG): prior plus population data action (raw targets, cyclic shift)."),
        _kernel("linear_action_gradient", arguments,
                (("dS_dc1", sp.diff(action, c1)), ("dS_dcG", sp.diff(action, cG))),
                "Gradient of S_lin."),
        _kernel("linear_action_hessian", arguments,
                (("d2S_dc1dc1", sp.diff(action, c1, 2)), ("d2S_dc1dcG", sp.diff(action, c1, cG)),
                 ("d2S_dcGdcG", sp.diff(action, cG, 2))),
                "Hessian of S_lin."),
        _kernel("linear_action_centred", arguments,
                (("S", centred), ("dS_dc1", sp.diff(centred, c1)), ("dS_dcG", sp.diff(centred, cG))),
                "S_lin with centred targets, and its gradient."),
        _kernel("linear_test_loss", (c1, cG, L, V), (("loss", losses["infinite_data"]),),
                "Per-position test loss with the optimal readout (P -> oo); undefined at c1 = cG = 0.",
                c1=(0.01, 1.0, "log")),
        _kernel("linear_posterior_test_loss", (c1, cG, P, L, V, lam, beta),
                (("loss", losses["posterior_mean"]),),
                "Per-position loss of the posterior-mean readout at finite P (population level)."),
        _kernel("linear_landau", (P, L, V, s1, sG, lam, beta), (("r", landau["r"]), ("u", landau["u"])),
                "S_eff(c1) = S0 + r c1**2 + u c1**4 with cG at its conditional minimum."),
        _kernel("linear_second_order_point", (L, V, s1, lam, beta), (("P1", second_order_point("raw")),),
                "P1: root of the uniform-mode curvature H_11 (copy coupling neglected)."),
        _kernel("linear_copy_mode_onset", (L, V, s1, sG, lam, beta), (("PG", copy_mode_onset("raw")),),
                "P_G: root of the curvature along the copy direction S - J/L at the symmetric point "
                "(s1 does not enter; kept for a stable signature)."),
        _kernel("linear_action_M", (c1, cG, R_row, R_bulk, P, L, V, s_A, lam, beta),
                (("S", action_M),) + tuple((f"dS_d{v.name}", sp.diff(action_M, v)) for v in (c1, cG, R_row, R_bulk)),
                "Model M with its bulk: S(c1, cG, R_row, R_bulk) (isotropic entry variance s of A, entropy "
                "of the row-sum part and of the bulk), and its gradient."),
    )
    return KernelModule("copy_head_linear", "emergence.theory.copy_head.landau", kernels)


@lru_cache(maxsize=None)
def softmax_module() -> KernelModule:
    """Reduced softmax actions (T: one order parameter; M: aG and the others' variance t)."""
    action = softmax_reduced_action("raw")
    action_M = softmax_reduced_action_M("raw")
    arguments = (aG, P, L, V, sG, lam, beta)
    arguments_M = (aG, t, P, L, V, s, lam, beta)
    losses = softmax_losses()
    kernels = (
        _kernel("softmax_action", arguments, (("S", action),),
                "S_soft(aG), architecture T on the bulk-free family (raw targets, cyclic shift)."),
        _kernel("softmax_action_derivative", arguments, (("dS_daG", sp.diff(action, aG)),),
                "dS_soft/daG."),
        _kernel("softmax_action_second_derivative", arguments, (("d2S_daG2", sp.diff(action, aG, 2)),),
                "d2S_soft/daG2."),
        _kernel("softmax_test_loss", (aG, L, V), (("loss", losses["infinite_data"]),),
                "Per-position test loss with the optimal readout (P -> oo)."),
        _kernel("softmax_posterior_test_loss", (aG, P, L, V, lam, beta), (("loss", losses["posterior_mean"]),),
                "Per-position loss of the posterior-mean readout at finite P."),
        _kernel("softmax_action_M", arguments_M,
                (("S", action_M), ("dS_daG", sp.diff(action_M, aG)), ("dS_dt", sp.diff(action_M, t))),
                "S_soft(aG, t), architecture M (per-row pushforward with the others' variance t), "
                "and its gradient."),
    )
    return KernelModule("copy_head_softmax", "emergence.theory.copy_head.softmax", kernels)


def _by_name(expression: sp.Expr, names: tuple[str, ...]) -> tuple[sp.Symbol, ...]:
    """The free symbols of ``expression`` named ``names``, in that order (a name it lacks is a new real symbol)."""
    free = {symbol.name: symbol for symbol in expression.free_symbols}
    return tuple(free.get(name, sp.Symbol(name, positive=True)) for name in names)


@lru_cache(maxsize=None)
def asymptotics_module() -> KernelModule:
    """The derived large-size forms the scaling claims are compared with (model T)."""
    from emergence.theory.copy_head.asymptotics import leading_P_star, readout_coexistence, readout_leading_P_star
    from emergence.theory.copy_head.landau import leading_second_order_point

    forms = leading_P_star()
    balance = forms["balance"]
    L_, = _by_name(forms["leading"], ("L",))
    law_constant = sp.simplify(sp.limit(forms["leading"] / (L_ * sp.log(L_) ** 2), L_, sp.oo))
    coefficient = leading_second_order_point()["coefficient_of_V2"]
    landing = readout_coexistence()
    readout_constant = readout_leading_P_star()["coefficient_of_L_log2L"]
    kernels = (
        _kernel("softmax_P_star_balance", _by_name(balance, ("L", "V", "beta0", "sG", "ell")),
                (("P_star", balance),),
                "Softmax P* from the dominant balance, L ell**3/(beta0 sG (1 - 1/V)(ell - 1)), at "
                "ell = 1 - W_{-1}(-2 e**2/L)/2 (beta = beta0/L, L-independent logit variance)."),
        _kernel("softmax_P_star_law_constant", _by_name(law_constant, ("V", "beta0", "sG")),
                (("constant", law_constant),),
                "lim_{L -> oo} P*/(L ln**2 L) of the dominant balance."),
        _kernel("softmax_readout_landing_curve", _by_name(landing["a"] + landing["ell"] + landing["Pi"],
                                                          ("z", "V", "sG", "lambda0", "beta0")),
                (("a", landing["a"]), ("ell", landing["ell"]), ("Pi", landing["Pi"])),
                "Where the softmax jump lands for lambda = lambda0/L, parametrised by the readout's "
                "signal-to-noise z: copy weight a, logit gap ell and P*/L (readout_coexistence)."),
        _kernel("softmax_readout_P_star_law_constant", _by_name(readout_constant, ("V", "beta0", "sG")),
                (("constant", readout_constant),),
                "lim_{L -> oo} P*/(L ln**2 L) of the lambda = lambda0/L balance (readout_leading_P_star; "
                "lambda0 drops out)."),
        _kernel("linear_P1_law_constant", _by_name(coefficient, ("sigma2", "lam")),
                (("constant", coefficient),),
                "lim_{V -> oo} lim_{L -> oo} P1/V**2 for model T (beta = 1/L)."),
    )
    return KernelModule("copy_head_asymptotics", "emergence.theory.copy_head.asymptotics", kernels)


@lru_cache(maxsize=None)
def linear_posterior_module() -> KernelModule:
    """Posterior level, linear attention (step 8): mean-field free energy with the bulk noise, its derivatives."""
    from emergence.theory.copy_head.linear_posterior import gauge_trial_shift, linear_posterior_free_energy, noise_shift
    from emergence.theory.copy_head.posterior import t_u, t_v

    F = linear_posterior_free_energy("raw")
    released = gauge_trial_shift()
    arguments = (c1, cG, t_u, t_v, P, L, V, s1, sG, lam, beta)
    kernels = (
        _kernel("linear_posterior_free_energy", arguments,
                (("F", F),) + tuple((f"dF_d{v.name}", sp.diff(F, v)) for v in (c1, cG, t_u, t_v)),
                "F(c1, cG, t_u, t_v): the linear saddle action at q + Delta, r + Delta plus the entropy of the "
                "key-token (t_u) and key-position (t_v) noise of W_QK (gauge-correct trial), and its gradient."),
        _kernel("linear_posterior_gauge_shift", (t_u, t_v, L, V),
                (("shift", released),) + tuple((f"dshift_d{v.name}", sp.diff(released, v)) for v in (t_u, t_v)),
                "F_gauge - F_product: the entropy the 2(V + L) - 1 flat directions release, and its gradient."),
        _kernel("linear_posterior_curvature", arguments,
                (("d2F_dc1dc1", sp.diff(F, c1, 2)), ("d2F_dc1dcG", sp.diff(F, c1, cG)),
                 ("d2F_dcGdcG", sp.diff(F, cG, 2))),
                "Curvature of F in (c1, cG) at fixed noise (its c1 entry at c1 = cG = 0 gives the posterior P1)."),
        _kernel("linear_posterior_noise_shift", (t_u, t_v, L, V, sG), (("Delta", noise_shift()),),
                "Delta = 2 L**2 sG [t_u (1 + (L - 1)/V) + t_v]: the noise shift of q and r."),
    )
    return KernelModule("copy_head_linear_posterior", "emergence.theory.copy_head.linear_posterior", kernels)


@lru_cache(maxsize=None)
def token_process_module() -> KernelModule:
    """Persistence process (correlated tokens): the three-parameter linear and two-parameter softmax actions."""
    from emergence.theory.copy_head.token_process import (
        a0, c0, linear_family, persistence_linear_action, persistence_posterior_loss, persistence_softmax_action,
        rho, softmax_family,
    )

    linear, softmax = persistence_linear_action(), persistence_softmax_action()
    linear_arguments = (c0, cG, c1, P, L, V, rho, s1, sG, lam, beta)
    softmax_arguments = (a0, aG, P, L, V, rho, sG, lam, beta)
    linear_coordinates, softmax_coordinates = (c0, cG, c1), (a0, aG)
    pairs = [(i, j) for i in range(3) for j in range(i, 3)]
    kernels = (
        _kernel("persistence_linear_action", linear_arguments,
                (("S", linear),) + tuple((f"dS_d{v.name}", sp.diff(linear, v)) for v in linear_coordinates),
                "S_lin(c0, cG, c1) for the persistence process (A = c0 I + cG S + c1 J/L), and its gradient."),
        _kernel("persistence_linear_action_hessian", linear_arguments,
                tuple((f"d2S_d{linear_coordinates[i].name}d{linear_coordinates[j].name}",
                       sp.diff(linear, linear_coordinates[i], linear_coordinates[j])) for i, j in pairs),
                "Hessian of the persistence S_lin (upper triangle, row by row)."),
        _kernel("persistence_linear_posterior_test_loss", (c0, cG, c1, P, L, V, rho, lam, beta),
                (("loss", persistence_posterior_loss(linear_family())),),
                "Per-position loss of the posterior-mean readout, persistence process, linear family."),
        _kernel("persistence_softmax_action", softmax_arguments,
                (("S", softmax),) + tuple((f"dS_d{v.name}", sp.diff(softmax, v)) for v in softmax_coordinates),
                "S_soft(a0, aG) for the persistence process (architecture T, bulk-free), and its gradient.",
                aG=(0.002, 0.5, "uniform")),
        _kernel("persistence_softmax_action_hessian", softmax_arguments,
                (("d2S_da0da0", sp.diff(softmax, a0, 2)), ("d2S_da0daG", sp.diff(softmax, a0, aG)),
                 ("d2S_daGdaG", sp.diff(softmax, aG, 2))),
                "Hessian of the persistence S_soft.", aG=(0.002, 0.5, "uniform")),
        _kernel("persistence_softmax_posterior_test_loss", (a0, aG, P, L, V, rho, lam, beta),
                (("loss", persistence_posterior_loss(softmax_family())),),
                "Per-position loss of the posterior-mean readout, persistence process, softmax family.",
                aG=(0.002, 0.5, "uniform")),
    )
    return KernelModule("copy_head_token_process", "emergence.theory.copy_head.token_process", kernels)


def kernel_modules() -> list[KernelModule]:
    """The copy-head kernel modules, in registry order."""
    return [scales_module(), linear_module(), softmax_module(), asymptotics_module(), linear_posterior_module(),
            token_process_module()]
