r"""The transition points at mpmath precision (default 50 digits), through the kernels' ``_mp`` twins.

Each routine starts from the float64 result of the same definition (:mod:`.second_order`,
:mod:`.crossover`, :mod:`.first_order`), brackets it by widening a relative interval until
the defining function changes sign, and refines with a bracketing solver
(``findroot(..., solver="anderson")``).  Minima are followed by Newton's method in mpmath
(:func:`polish_mp`), started from the float64 minimum, to ``dps - 5`` digits.  Everything
runs in a local context ``mpmath.mp.clone()``; the global precision is never changed.

- :func:`second_order_point_mp`: root of the smallest Hessian eigenvalue at the symmetric point.
- :func:`coexistence_point_mp`: root of :math:`S_\mathrm{upper} - S_\mathrm{lower}`.
- :func:`copy_onset_mp`: root of :math:`\mathrm{d}^2 c_G/\mathrm{d}(\ln P)^2` (``ctx.diff``, which
  raises the working precision for the difference quotient).
- :func:`literal_crossover_mp`: root of :math:`c_G - c_1`.

A failure to bracket within ten widenings raises :class:`~emergence.base.errors.DivergenceError`.

>>> ctx = context(30)
>>> root = bracketed_root(ctx, lambda x: x**2 - 2, 1.41421356)
>>> ctx.nstr(root, 25)
'1.414213562373095048801689'
"""

from __future__ import annotations

import mpmath

from emergence.numerics.copy_head.minimisation import newton_terms
from emergence.base.errors import DivergenceError


def context(dps: int = 50):
    """A private mpmath context with ``dps`` significant digits."""
    ctx = mpmath.mp.clone()
    ctx.dps = int(dps)
    return ctx


def bracketed_root(ctx, function, estimate, relative: float = 1e-10, widenings: int = 10):
    """Root of ``function`` near ``estimate``, bracketed by ``estimate*(1 -+ relative*10**j)``."""
    x0 = ctx.mpf(estimate)
    width = ctx.mpf(relative) * max(abs(x0), 1)
    for _ in range(widenings):
        a, b = x0 - width, x0 + width
        fa, fb = function(a), function(b)
        if fa == 0:
            return a
        if fb == 0:
            return b
        if (fa < 0) != (fb < 0):
            return ctx.findroot(function, (a, b), solver="anderson", tol=ctx.eps * 16, verify=False)
        width *= 10
    raise DivergenceError(f"could not bracket a root near {float(estimate):.8g}")


def polish_mp(action, y_start, P, ctx, iterations: int = 60) -> list:
    r"""The local minimum of ``action`` at ``P`` reached by Newton's method from ``y_start``.

    Converged when the relative step :math:`s_k` is below :math:`10^{5-\mathrm{dps}}`, or when
    Newton's quadratic convergence predicts the next one below it,
    :math:`s_{k+1} \approx (s_k/s_{k-1}^2)\,s_k^2` (taken once :math:`s_k < s_{k-1}` and
    :math:`s_k < 10^{-6}`): this saves the last step, which would only confirm the digits.
    """
    y = [ctx.mpf(float(v)) if not isinstance(v, ctx.mpf) else +v for v in y_start]
    P = ctx.mpf(P)
    tolerance = ctx.mpf(10) ** (-(ctx.dps - 5))
    last = None
    for _ in range(iterations):
        gradient, hessian = newton_terms(action, y, P, ctx)
        step = [gradient[0] / hessian[0, 0]] if len(y) == 1 else ctx.lu_solve(hessian, ctx.matrix(gradient))
        y = [y[i] - step[i] for i in range(len(y))]
        size = max(abs(s) for s in step) / (1 + max(abs(v) for v in y))
        if size <= tolerance:
            return y
        if last is not None and size < last and size < 1e-6 and size**3 / last**2 <= tolerance:
            return y
        last = size
    raise DivergenceError(f"Newton did not converge at P = {float(P):.8g} ({ctx.dps} digits)")


def second_order_point_mp(action, P1: float, dps: int = 50):
    r""":math:`P_1` to ``dps`` digits from its float64 value."""
    ctx = context(dps)
    point = [ctx.mpf(float(v)) for v in action.symmetric_point]

    def curvature(log_P):
        return min(ctx.eigsy(action.hessian_mp(point, ctx.exp(log_P), ctx))[0])

    return ctx.exp(bracketed_root(ctx, curvature, ctx.log(P1), 1e-12))


class _Branch:
    """A branch of minima followed in ``ln P`` with warm starts (the last solution is reused)."""

    def __init__(self, action, y_start, ctx):
        self.action, self.ctx, self.y = action, ctx, list(y_start)

    def __call__(self, log_P):
        self.y = polish_mp(self.action, self.y, self.ctx.exp(log_P), self.ctx)
        return self.y


def coexistence_point_mp(action, P_star: float, lower_start, upper_start, dps: int = 50, relative: float = 1e-11):
    r""":math:`P^\ast` to ``dps`` digits: equal action of the branches through ``lower_start`` and ``upper_start``,
    bracketed from ``P_star * (1 -+ relative)`` outwards (``relative``: the estimate's expected error)."""
    ctx = context(dps)
    lower, upper = _Branch(action, lower_start, ctx), _Branch(action, upper_start, ctx)

    def difference(log_P):
        P = ctx.exp(log_P)
        return action.value_mp(upper(log_P), P, ctx) - action.value_mp(lower(log_P), P, ctx)

    return ctx.exp(bracketed_root(ctx, difference, ctx.log(P_star), relative))


def copy_onset_mp(action, P_onset: float, y_start, dps: int = 50):
    r"""The copy onset (inflection of :math:`c_G` in :math:`\ln P`) to about ``dps/2`` digits and better."""
    ctx = context(dps)
    branch = _Branch(action, y_start, ctx)

    def copy(log_P):
        return action.order_parameters_mp(branch(log_P), ctx)[1]

    def curvature(log_P):
        return ctx.diff(copy, log_P, 2)

    return ctx.exp(bracketed_root(ctx, curvature, ctx.log(P_onset), 1e-6))


def literal_crossover_mp(action, P_cross: float, y_start, dps: int = 50):
    r"""The :math:`c_G = c_1` point to ``dps`` digits."""
    ctx = context(dps)
    branch = _Branch(action, y_start, ctx)

    def gap(log_P):
        c1, cG = action.order_parameters_mp(branch(log_P), ctx)
        return cG - c1

    return ctx.exp(bracketed_root(ctx, gap, ctx.log(P_cross), 1e-11))
