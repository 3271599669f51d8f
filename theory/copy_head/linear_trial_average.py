r"""The trial average of the readout-marginal action, to second order in the fluctuations of its statistics.

The linear posterior theory (:mod:`emergence.theory.copy_head.linear_posterior`) evaluates the
readout-marginal action

.. math::
    S(C, B) = \frac\beta2\Big[D - \varepsilon\,\mathrm{tr}\,B^T(I + \varepsilon C)^{-1}B\Big]
    + \frac V2\ln\det(I + \varepsilon C)

at the trial-averaged statistics :math:`\bar C = \mathbb E_QC`, :math:`\bar B = \mathbb E_QB` (``(V, V)``).
The variational free energy needs :math:`\mathbb E_Q S(C, B)`.  Writing :math:`C = \bar C + \delta C`,
:math:`B = \bar B + \delta B` and :math:`R = (I + \varepsilon\bar C)^{-1}`, the first-order terms average
to zero and (:func:`second_order_action`)

.. math::
    \mathbb E_QS - S(\bar C, \bar B) \approx -\frac{\beta\varepsilon}2\,\mathbb E\,\mathrm{tr}\,\delta B^TR\,\delta B
    + \beta\varepsilon^2\,\mathbb E\,\mathrm{tr}\,\bar B^TR\,\delta C\,R\,\delta B
    - \frac{\beta\varepsilon^3}2\,\mathbb E\,\mathrm{tr}\,\bar B^TR\,\delta C\,R\,\delta C\,R\bar B
    - \frac{V\varepsilon^2}4\,\mathbb E\,\mathrm{tr}\,R\,\delta C\,R\,\delta C.

The first term is the trial noise's own fit of the targets, the second the part of that fit which
also enlarges C along the signal :math:`\bar B`, the last two the curvature (Jensen) of the fit and
Occam terms in C.  Derived here with non-commuting symbols: the resolvent
:math:`X(t) = (M + t\varepsilon G)^{-1}` solves :math:`X = R - t\varepsilon RGX` order by order, and
:math:`\partial_t\ln\det(M + t\varepsilon G) = \mathrm{tr}\,X\varepsilon G`.  The moments of
:math:`\delta C, \delta B` under the Gaussian trial (linear and quadratic in the noise; Isserlis for the
quadratic part) are evaluated in :mod:`emergence.numerics.copy_head.linear_trial_average`.

>>> sorted(str(term) for term in second_order_action().values())  # doctest: +NORMALIZE_WHITESPACE
['-V*epsilon**2*R*G*R*G/4', '-beta*epsilon**3*Bt*R*G*R*G*R*B/2', '-beta*epsilon*dBt*R*dB/2',
 'beta*epsilon**2*Bt*R*G*R*dB']
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

epsilon, beta, V_readout, t = sp.symbols("epsilon beta V t", positive=True)
"""The readout's scale :math:`\\varepsilon = \\beta\\lambda`, the inverse temperature, the vocabulary, the expansion parameter."""

R, G, B, Bt, dB, dBt = sp.symbols("R G B Bt dB dBt", commutative=False)
"""Non-commuting letters: the resolvent at the mean, :math:`\\delta C`, :math:`\\bar B`, :math:`\\bar B^T`, :math:`\\delta B`, :math:`\\delta B^T`."""

TERMS: tuple[str, ...] = ("fit_BB", "fit_CB", "fit_CC", "occam_CC")
"""The second-order terms: noise fit of the targets, its overlap with the signal, the fit's and Occam's curvature in C."""


def resolvent_series(order: int = 2) -> sp.Expr:
    r""":math:`(M + t\varepsilon G)^{-1}` to ``order`` in t, from :math:`X = R - t\varepsilon RGX` (R = M⁻¹).

    >>> resolvent_series(1)
    -epsilon*t*R*G*R + R
    """
    series = R
    for _ in range(order):
        series = sp.expand(R - t * epsilon * R * G * series)
    return sp.expand(sum(series.coeff(t, power) * t**power for power in range(order + 1)))


@lru_cache(maxsize=None)
def second_order_action() -> dict[str, sp.Expr]:
    r"""The :math:`t^2` coefficient of :math:`S(\bar C + t\,\delta C, \bar B + t\,\delta B)`, split into :data:`TERMS`.

    Each value is a non-commuting monomial whose **trace** is the term (the trace is implied; the letters
    are ``(V, V)`` matrices).
    """
    X = resolvent_series(2)
    fit = sp.expand(-beta * epsilon / 2 * (Bt + t * dBt) * X * (B + t * dB))
    fit_2 = fit.coeff(t, 2)
    # d/dt ln det = tr(X eps G); the t^2 coefficient of ln det is half the t^1 coefficient of tr(X eps G)
    occam_2 = sp.expand(V_readout / 2 * sp.expand(X * epsilon * G).coeff(t, 1) / 2)
    terms: dict[str, sp.Expr] = {"fit_BB": sp.Integer(0), "fit_CB": sp.Integer(0), "fit_CC": sp.Integer(0),
                                 "occam_CC": occam_2}
    for monomial in sp.Add.make_args(fit_2):
        letters = [f for f in monomial.args if not f.is_commutative] if monomial.is_Mul else [monomial]
        flat = [str(f.base) if f.is_Pow else str(f) for f in letters]
        if "dB" in flat and "dBt" in flat:
            terms["fit_BB"] += monomial
        elif "G" in flat and ("dB" in flat or "dBt" in flat):
            terms["fit_CB"] += _cyclic_to_dB_last(monomial)
        else:
            terms["fit_CC"] += monomial
    return terms


def _cyclic_to_dB_last(monomial: sp.Expr) -> sp.Expr:
    r"""The mixed monomial in the form :math:`\bar B^TR\,G\,R\,\delta B` (trace-cyclic and transposition invariant).

    The expansion gives :math:`-\varepsilon\,\delta B^TRGR\bar B` and :math:`-\varepsilon\,\bar B^TRGR\,\delta B`; the trace of
    the first is that of its transpose (R, G symmetric), the second.
    """
    replaced = monomial.subs({dBt: Bt, B: dB}, simultaneous=True) if monomial.has(dBt) else monomial
    return replaced


__all__ = ["B", "Bt", "G", "R", "TERMS", "V_readout", "beta", "dB", "dBt", "epsilon", "resolvent_series",
           "second_order_action", "t"]
