r"""Scaling checks at high precision: ratios to a claimed law, local exponents, sub-leading fits, a verdict.

Given a measured quantity :math:`P(x)` on exponentially spaced sizes :math:`x_k` and a
claimed law :math:`f(x)`, :func:`scaling_check` reports

- the ratio :math:`r_k = P(x_k)/f(x_k)` and the local log-log exponents of :math:`P` itself,
  :math:`\mathrm{d}\ln P/\mathrm{d}\ln x` between neighbouring sizes;
- the *residual exponent* of the ratio.  For a **power law** (``kind="power"``) it is
  :math:`e = \mathrm{d}\ln r/\mathrm{d}\ln x` (the claimed power is off by :math:`e`); for a
  law with **log factors** (``kind="log"``) it is :math:`\kappa = \mathrm{d}\ln r/\mathrm{d}\ln u`
  with :math:`u = \ln x` (the claimed power of :math:`\ln x` is off by :math:`\kappa`);
- a least-squares fit of the sub-leading form of the ratio: :math:`c + a/u + b\ln u/u` in
  :math:`u = \ln x` for log laws, :math:`c + a/x + b/x^2` for power laws (at the working
  precision, by QR).  Richardson, Shanks and ``nsum`` assume polynomial or geometric
  convergence and fail silently on log corrections, so they are not used.

**The verdict** ``holds`` is true when (i) the residual exponent between the two largest
sizes is within ``tolerance`` of 0, and (ii) the fitted constant :math:`c` is finite and
positive.  Defaults: ``tolerance = 0.5`` for log laws (the measured effective log power
:math:`p + \kappa` rounds to the claimed power :math:`p`: a law off by one power of
:math:`\ln x` has :math:`|\kappa| \approx 1` and fails) and ``0.1`` for power laws.  Log
corrections decay like :math:`\ln u/u`, so at :math:`x \lesssim 10^4` the residual exponent
is still visibly non-zero: the criterion certifies the power of the logarithm, not the
constant, and the report keeps the local exponents so that the trend can be judged.

**What this check cannot do, and what the scaling claims use instead.**  On data that carry the
slow corrections of a Lambert-W balance (the softmax claim of the copy-head model), the residual
power of :math:`\ln x` at reachable sizes is far from 0 for the right law (:math:`\kappa \approx
-0.34` at :math:`x = 1.6\cdot10^4`, effective power 1.66 instead of 2), so a tolerance of 0.5 cannot
tell :math:`\ln^{1.5}` from :math:`\ln^2`.  Where the engine derives the balance :math:`B(x)`,
:func:`emergence.numerics.copy_head.scaling.scaling_report` replaces this verdict by the
*derived-balance criterion*: the data within 5 % of :math:`B` at the largest size, the full
reduced action within 5 % of :math:`B` at :math:`x = 10^6 \ldots 10^{12}` (mpmath), and the law's
residual power against :math:`B` far out, :math:`\kappa_\infty = \Delta\ln(B/f)/\Delta\ln\ln x`
between :math:`\ln x = 10^3` and :math:`10^4`, within 0.1 (``docs/copy_head_scaling.md``).
This function stays the verdict for power laws and for log laws without a derived balance.

A law off by a log factor fails; the right one holds (data :math:`P = x\ln^2 x\,(1 + 3/\ln x)`):

>>> import mpmath
>>> ctx = mpmath.mp.clone(); ctx.dps = 30
>>> xs = [ctx.mpf(2) ** k for k in range(5, 15)]
>>> data = [x * ctx.log(x) ** 2 * (1 + 3 / ctx.log(x)) for x in xs]
>>> right = scaling_check(xs, data, [x * ctx.log(x) ** 2 for x in xs], kind="log", ctx=ctx)
>>> wrong = scaling_check(xs, data, [x * ctx.log(x) for x in xs], kind="log", ctx=ctx)
>>> right["holds"], wrong["holds"]
(True, False)
>>> round(right["fit"]["coefficients"]["c"], 6)
1.0
"""

from __future__ import annotations

import math

TOLERANCES = {"log": 0.5, "power": 0.1}
"""Default bound on the residual exponent of the ratio at the largest sizes."""

FORMS = {
    "log": ("c + a/u + b*log(u)/u, u = log(x)", ("c", "a", "b")),
    "power": ("c + a/x + b/x**2", ("c", "a", "b")),
}


def _basis(kind: str, x, ctx):
    if kind == "log":
        u = ctx.log(x)
        return [ctx.mpf(1), 1 / u, ctx.log(u) / u]
    return [ctx.mpf(1), 1 / x, 1 / x**2]


def local_exponents(xs, values, ctx) -> list:
    r""":math:`\Delta\ln y/\Delta\ln x` between neighbouring points."""
    return [
        (ctx.log(values[k + 1]) - ctx.log(values[k])) / (ctx.log(xs[k + 1]) - ctx.log(xs[k]))
        for k in range(len(xs) - 1)
    ]


def fit_subleading(xs, ratios, kind: str, ctx) -> dict:
    """Least-squares fit of the sub-leading form of ``kind`` to ``ratios``; relative rms residual."""
    rows = [_basis(kind, x, ctx) for x in xs]
    matrix = ctx.matrix(rows)
    coefficients, _ = ctx.qr_solve(matrix, ctx.matrix(list(ratios)))
    fitted = [sum(row[j] * coefficients[j] for j in range(len(row))) for row in rows]
    residual = ctx.sqrt(sum(((f - r) / r) ** 2 for f, r in zip(fitted, ratios)) / len(ratios))
    form, names = FORMS[kind]
    return {
        "form": form,
        "coefficients": {name: float(coefficients[j]) for j, name in enumerate(names)},
        "residual": float(residual),
    }


def scaling_check(xs, values, law_values, *, kind: str, ctx, tolerance: float | None = None) -> dict:
    """Ratio, exponents, fit and verdict for one sweep of sizes (see the module docstring)."""
    if kind not in FORMS:
        raise ValueError(f"kind must be 'log' or 'power', not {kind!r}")
    if len(xs) < 4:
        raise ValueError("a scaling check needs at least four sizes")
    tolerance = TOLERANCES[kind] if tolerance is None else tolerance
    ratios = [v / f for v, f in zip(values, law_values)]
    variable = [ctx.log(x) for x in xs] if kind == "log" else list(xs)
    residual_exponents = local_exponents(variable, ratios, ctx)
    fit = fit_subleading(xs, ratios, kind, ctx)
    constant = fit["coefficients"]["c"]
    last = float(residual_exponents[-1])
    holds = abs(last) <= tolerance and math.isfinite(constant) and constant > 0
    measured = [float(e) for e in local_exponents(xs, values, ctx)]
    return {
        "ratio": [float(r) for r in ratios],
        "local_exponent": measured,
        "residual_exponent": [float(e) for e in residual_exponents],
        "fit": fit,
        "holds": bool(holds),
        "tolerance": tolerance,
    }
