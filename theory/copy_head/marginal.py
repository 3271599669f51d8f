r"""Step 1: the exact marginal over the readout W (Gaussian integral, reduced to V x V).

For a fixed attention matrix every output column :math:`w_v \in \mathbb R^V` of the readout
enters the Gibbs energy quadratically,

.. math:: u(w) = \tfrac{\beta}{2}\|y - \Phi w\|^2 + \tfrac{1}{2\lambda}\|w\|^2,
   \qquad \Phi = \text{stacked } A X^\mu \ (PL\times V),

so :math:`-\ln\int dw\,\mathcal N(w; 0, \lambda I)\,e^{-\frac\beta2\|y-\Phi w\|^2}
= u(0) - \tfrac12 h^T H^{-1} h + \tfrac12\ln\det(\lambda H)` with the Hessian
:math:`H = \nabla^2 u` and field :math:`h = -\nabla u(0)`, both obtained by SymPy's matrix
calculus.  Writing :math:`C = \Phi^T\Phi`, :math:`B = \Phi^T Y`, :math:`D = Y^T Y` and
summing the V columns gives the V x V form (the PL x PL Gaussian-process evidence reduced
by Woodbury's identity and the determinant lemma; the test compares both numerically).

>>> action = readout_marginal()["action"]
>>> sorted(s.name for s in action.free_symbols if s.is_Matrix)
['B', 'C', 'D']
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.symbols import V, beta, lam

N = sp.Symbol("N", positive=True, integer=True)
"""Number of stacked rows, N = P L."""
C = sp.MatrixSymbol("C", V, V)
B = sp.MatrixSymbol("B", V, V)
D = sp.MatrixSymbol("D", V, V)


@lru_cache(maxsize=None)
def readout_marginal() -> dict[str, sp.Basic]:
    r"""The per-column Gaussian integral and the summed action S_readout(C, B, D).

    Returns a dict with ``energy`` u(w), ``hessian`` :math:`\lambda H` (in C), ``field`` h
    (in b = Phi^T y), ``column_action`` and ``action``:

    .. math:: S = \tfrac\beta2\operatorname{tr}D
       - \tfrac{\beta^2\lambda}{2}\operatorname{tr}\big(B^T(I + \beta\lambda C)^{-1}B\big)
       + \tfrac V2 \ln\det(I + \beta\lambda C),

    up to the W- and G-independent constant :math:`\tfrac{PLV}{2}\ln(2\pi/\beta)`.
    """
    w = sp.MatrixSymbol("w", V, 1)
    y = sp.MatrixSymbol("y", N, 1)
    Phi = sp.MatrixSymbol("Phi", N, V)
    b = sp.MatrixSymbol("b", V, 1)
    energy = beta / 2 * (y - Phi * w).T * (y - Phi * w) + (w.T * w) / (2 * lam)
    gradient = sp.diff(energy, w)
    scaled_hessian = sp.expand(lam * sp.diff(gradient, w)).subs(Phi.T * Phi, C)
    field = sp.expand(-gradient.subs(w, sp.ZeroMatrix(V, 1))).subs(Phi.T * y, b)
    quadratic = sp.expand(field.T * (scaled_hessian / lam).inverse() * field)
    fit = sp.expand(energy.subs(w, sp.ZeroMatrix(V, 1)))
    column_action = (fit, -quadratic / 2, sp.log(sp.Determinant(scaled_hessian)) / 2)
    Y = sp.MatrixSymbol("Y", N, V)
    summed_fit = sp.Trace(fit.xreplace({y: Y}).subs(Y.T * Y, D))
    summed_quadratic = sp.Trace(quadratic.xreplace({b: B}))
    action = summed_fit - summed_quadratic / 2 + V * column_action[2]
    return {
        "energy": energy,
        "hessian": scaled_hessian,
        "field": field,
        "column_action": sp.Add(*column_action),
        "action": action,
    }
