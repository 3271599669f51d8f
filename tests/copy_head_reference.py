r"""TEST DOUBLE: an independent transcription of the note's model-T reduced actions.

This module is *not* part of the engine.  Production code uses the kernels the derive
helper generates from the SymPy derivation (``numerics/kernels/copy_head_*.py``); this
double only lets the solver tests run against a second, independently written model with
the same signatures (the copy-head contract), so that a bug in either shows up as a
disagreement.  It transcribes section 4 of ``shared/theory/copy_head.md``:

.. math::

    S_\mathrm{data}(q,m,r,n) = \tfrac{\beta P L}{2}
      - \tfrac{\beta P}{2}\tilde p\Big[(1-\tfrac1V)\tfrac{m^2}{1+\tilde p q}
      + \tfrac{n^2}{V(1+\tilde p r)}\Big]
      + \tfrac{V(V-1)}{2}\ln(1+\tilde p q) + \tfrac V2\ln(1+\tilde p r),
      \qquad \tilde p = \lambda\beta P/V,

linear: :math:`S = (c_1+c_G)^2/(2s_1) + (L-1) c_G^2/(2 s_G) + S_\mathrm{data}` with
:math:`q = c_1^2 + 2c_1c_G + Lc_G^2`, :math:`m = c_1 + Lc_G`, :math:`n = L(c_1+c_G)`,
:math:`r = L(c_1+c_G)^2`; softmax: :math:`S = (L-1) g^2/(2 s_G) + S_\mathrm{data}` with
:math:`g = \ln(a/(1-a)) + \ln(L-1)`, :math:`q = L[a^2 + (1-a)^2/(L-1)]`, :math:`m = La`,
:math:`n = r = L`.  Scales: :math:`s = \sigma_G^2 L^{-a}`, :math:`s_1 = s(1/V+1/L)^2`,
:math:`s_G = s/L^2` (linear, ``A = G/L``; ``A = G/L^k`` in general; the softmax :math:`s_G = s` is a logit variance),
:math:`\lambda = \sigma_W^2 V^{-c} L^{-r}`, :math:`\beta = \beta_0 L^{-d}V^{-e}`.  The priors are the
derived ones (diagonal in :math:`(c_1 + c_G, c_G)`, gauge-fixed :math:`(L-1)g^2` for softmax;
the note had :math:`c_1^2` and :math:`L g^2`), as the derive helper's contract update states.

The modules are rendered by :func:`emergence.theory.codegen.module_source` (so each kernel has its
``_mp`` twin) and executed in memory; nothing is written to ``numerics/kernels``.
"""

from __future__ import annotations

import types
from functools import lru_cache

import sympy as sp

from emergence.theory.codegen import Kernel, KernelModule, module_source

c1, cG, aG, P, L, V = sp.symbols("c1 cG aG P L V", positive=True)
s1, sG, lam, beta = sp.symbols("s1 sG lam beta", positive=True)
sigma_G2, a, sigma_W2, c, r_W, beta0, d, e, k = sp.symbols("sigma_G2 a sigma_W2 c r_W beta0 d e k", real=True)

_DOMAIN = {
    "c1": (0.01, 1.0, "uniform"), "cG": (0.01, 1.0, "uniform"), "aG": (0.01, 0.9, "uniform"),
    "P": (10.0, 1e5, "log"), "L": (8.0, 512.0, "log"), "V": (4.0, 64.0, "log"),
    "s1": (1e-3, 1.0, "log"), "sG": (1e-6, 1e-2, "log"), "lam": (0.1, 1.0, "log"),
    "beta": (1e-3, 1.0, "log"), "sigma_G2": (0.5, 2.0, "log"), "a": (0.0, 1.0, "uniform"),
    "sigma_W2": (0.5, 2.0, "log"), "c": (0.0, 1.0, "uniform"), "r_W": (0.0, 2.0, "uniform"), "beta0": (0.5, 2.0, "log"),
    "d": (0.0, 1.0, "uniform"), "e": (0.0, 1.0, "uniform"), "k": (0.0, 1.0, "uniform"),
}


def _data_action(q, m, r, n):
    p = lam * beta * P / V
    fit = (1 - 1 / V) * m**2 / (1 + p * q) + n**2 / (V * (1 + p * r))
    return (beta * P * L / 2 - beta * P / 2 * p * fit
            + V * (V - 1) / 2 * sp.log(1 + p * q) + V / 2 * sp.log(1 + p * r))


def _posterior_loss(q, m, r, n):
    """Per-position population loss of the posterior-mean readout, with p = lam*beta*P/V:
    the readout shrinks the fitted overlap by p x/(1 + p x) in each eigen-direction."""
    p = lam * beta * P / V
    copy = (1 - 1 / V) * (L - 2 * p * m**2 / (1 + p * q) + p**2 * m**2 * q / (1 + p * q) ** 2)
    mean = (L - 2 * p * n**2 / (1 + p * r) + p**2 * n**2 * r / (1 + p * r) ** 2) / V
    return (copy + mean) / L


def _kernel(name, arguments, outputs, summary):
    return Kernel(name, arguments, outputs, summary, {x.name: _DOMAIN[x.name] for x in arguments})


def _modules() -> list[KernelModule]:
    s = sigma_G2 * L**-a
    scales = _kernel(
        "copy_head_scales_T", (L, V, sigma_G2, a, sigma_W2, c, r_W, beta0, d, e, k),
        (("s1", s * (1 / V + 1 / L) ** 2 * L ** (2 - 2 * k)), ("sG", s / L ** (2 * k)),
         ("lam", sigma_W2 * V**-c * L**-r_W),
         ("beta", beta0 * L**-d * V**-e)),
        "test double: model-T scales (A = G/L**k)",
    )
    softmax_scales = _kernel(
        "copy_head_softmax_scales", (L, V, sigma_G2, a, sigma_W2, c, r_W, beta0, d, e),
        (("sG", s), ("lam", sigma_W2 * V**-c * L**-r_W), ("beta", beta0 * L**-d * V**-e)),
        "test double: model-T softmax scales",
    )
    lin_q, lin_m = c1**2 + 2 * c1 * cG + L * cG**2, c1 + L * cG
    lin_n, lin_r = L * (c1 + cG), L * (c1 + cG) ** 2
    S_lin = (c1 + cG) ** 2 / (2 * s1) + (L - 1) * cG**2 / (2 * sG) + _data_action(lin_q, lin_m, lin_r, lin_n)
    lin_args = (c1, cG, P, L, V, s1, sG, lam, beta)
    linear = (
        _kernel("linear_action", lin_args, (("S", S_lin),), "test double: linear action"),
        _kernel("linear_action_gradient", lin_args,
                (("dS_dc1", sp.diff(S_lin, c1)), ("dS_dcG", sp.diff(S_lin, cG))), "gradient"),
        _kernel("linear_action_hessian", lin_args,
                (("d2S_dc1dc1", sp.diff(S_lin, c1, 2)), ("d2S_dc1dcG", sp.diff(S_lin, c1, cG)),
                 ("d2S_dcGdcG", sp.diff(S_lin, cG, 2))), "hessian"),
        _kernel("linear_posterior_test_loss", (c1, cG, P, L, V, lam, beta),
                (("loss", _posterior_loss(lin_q, lin_m, lin_r, lin_n)),), "finite-P test loss"),
    )
    gap = sp.log(aG / (1 - aG)) + sp.log(L - 1)
    soft_q = L * (aG**2 + (1 - aG) ** 2 / (L - 1))
    S_soft = (L - 1) * gap**2 / (2 * sG) + _data_action(soft_q, L * aG, L, L)
    soft_args = (aG, P, L, V, sG, lam, beta)
    softmax = (
        _kernel("softmax_action", soft_args, (("S", S_soft),), "test double: softmax action"),
        _kernel("softmax_action_derivative", soft_args, (("dS_daG", sp.diff(S_soft, aG)),), "S'"),
        _kernel("softmax_action_second_derivative", soft_args,
                (("d2S_daG2", sp.diff(S_soft, aG, 2)),), "S''"),
        _kernel("softmax_posterior_test_loss", (aG, P, L, V, lam, beta),
                (("loss", _posterior_loss(soft_q, L * aG, L, L)),), "finite-P test loss"),
    )
    origin = "tests.copy_head_reference (test double)"
    return [
        KernelModule("copy_head_scales", origin, (scales, softmax_scales)),
        KernelModule("copy_head_linear", origin, linear),
        KernelModule("copy_head_softmax", origin, softmax),
    ]


@lru_cache(maxsize=1)
def reference_kernels() -> types.SimpleNamespace:
    """The three test-double kernel modules: ``.scales``, ``.linear``, ``.softmax``."""
    loaded = {}
    for module in _modules():
        namespace = types.ModuleType(f"copy_head_reference_{module.name}")
        exec(compile(module_source(module), namespace.__name__, "exec"), namespace.__dict__)
        loaded[module.name] = namespace
    return types.SimpleNamespace(
        scales=loaded["copy_head_scales"],
        linear=loaded["copy_head_linear"],
        softmax=loaded["copy_head_softmax"],
    )
