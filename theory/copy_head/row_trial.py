r"""The row trial's copy span: Gram matrix, copy boost and KL from the prior (SymPy).

Model T's :math:`W_{QK}` is ``(N, N)``, ``N = V + L``, prior :math:`\mathcal N(0, sI)`.  Row i of the
position block of :math:`S - J/L` (S the cyclic shift) is :math:`\frac{L-1}L a_i`, with
:math:`a_i = e_{i-1} - (\mathbf 1 - e_{i-1})/(L-1)`; :math:`n_i` is :math:`a_i` normalised, placed in
query row i.  Its flat part (:mod:`~emergence.theory.copy_head.logit_gauge`): :math:`a_i` sums to zero,
so :math:`n_i` is orthogonal to the row constants, and its projection on the logit null
:math:`\{c\,d^T\}`, :math:`c = (\mathbf 1_V; -\mathbf 1_L)` (:math:`|c|^2 = V + L`), is
:math:`-c\,\hat n_i^T/(V+L)`, of squared norm :math:`1/(V+L)`.  The visible part :math:`u_i = n_i - P_{\mathcal K}n_i`
therefore has the Gram matrix

.. math:: G_{kl} = u_k\cdot u_l = \delta_{kl} - \hat n_k\cdot\hat n_l/(V+L),

circulant, with eigenvalue 1 on the symmetric vector (:math:`\sum_i a_i = 0`) and :math:`\gamma` on the
other L − 1.  A draw :math:`\sum_iy_iu_i` with i.i.d. :math:`y_i` (density :math:`q_y`, mean
:math:`\mu`, second moment :math:`m_2`) has density :math:`\prod q_y(y_i)/\sqrt{\det G}` on the span, so
its KL from the prior is

.. math:: -L\,H(q_y) - \tfrac12\ln\det G + \tfrac L2\ln 2\pi s + \mathbb E[y^TGy]/2s.

:func:`copy_span` derives :math:`\gamma`, :math:`\mathbb E[y^TGy]` and the KL; its copy boost (the logit gap
:math:`u_i` adds on query row i's previous key, :math:`\sqrt{L/(L-1)}` per unit :math:`y_i`) and the check
that a Gaussian :math:`q_y` of mean :math:`g\sqrt{(L-1)/L}` pays the gauge trial's copy cost
:math:`(L-1)g^2/2s` in its mean term.  ``numerics/copy_head/row_trial.py`` evaluates the closed forms;
``tests/test_row_trial.py`` checks them against this derivation and against dense linear algebra.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

L, V, s, mu, m2, H, g = sp.symbols("L V s mu m_2 H g", positive=True)


@lru_cache(maxsize=None)
def copy_span() -> dict[str, sp.Expr]:
    """``gram_diagonal``, ``gram_off_diagonal``, ``gamma`` (eigenvalue off the symmetric vector), ``boost``
    (copy-logit gap per unit y), ``quadratic`` (:math:`\\mathbb E y^TGy`) and ``kl`` in L, V, s, mu, m_2, H."""
    copy_entry, other_entry = 1, -1 / (L - 1)
    norm2 = copy_entry**2 + (L - 1) * other_entry**2
    overlap = (2 * copy_entry * other_entry + (L - 2) * other_entry**2) / norm2  # n_k . n_l, k != l, per row vector
    diagonal = sp.simplify(1 - 1 / (V + L))
    off = sp.simplify(-overlap / (V + L))
    symmetric = sp.simplify(diagonal + (L - 1) * off)
    if symmetric != 1:
        raise ArithmeticError(f"the symmetric copy vector should be all visible, eigenvalue {symmetric}")
    gamma = sp.simplify(diagonal - off)
    boost = sp.simplify((copy_entry - other_entry) / sp.sqrt(norm2))
    variance = m2 - mu**2
    quadratic = sp.expand(L * diagonal * m2 + L * (L - 1) * off * mu**2)
    if sp.simplify(quadratic - (L * diagonal * variance + L * mu**2)) != 0:
        raise ArithmeticError("E y^T G y should be L(1 - 1/(V+L)) var + L mu^2")
    kl = -L * H - (L - 1) / 2 * sp.log(gamma) + L / 2 * sp.log(2 * sp.pi * s) + quadratic / (2 * s)
    mean_cost = sp.simplify((L * mu**2 / (2 * s)).subs(mu, g / boost))
    if sp.simplify(mean_cost - (L - 1) * g**2 / (2 * s)) != 0:
        raise ArithmeticError(f"the mean term {mean_cost} should be the gauge trial's copy cost")
    return {"gram_diagonal": diagonal, "gram_off_diagonal": off, "gamma": gamma, "boost": boost,
            "quadratic": quadratic, "kl": kl}


__all__ = ["H", "L", "V", "copy_span", "g", "m2", "mu", "s"]
