r"""The SymPy symbols shared by every copy-head derivation step.

Sizes: L (sequence length), V (vocabulary), P (number of training sequences).
Scales: ``s1``, ``sG`` (prior variances of the attention matrix along the unit uniform
direction J/L and along the unit copy direction), ``sigma2`` (entry variance of the
architecture's weight), ``lam`` (readout prior variance), ``beta`` (inverse temperature).
Order parameters: ``c1``, ``cG`` (linear attention), ``aG`` (softmax).
Invariants of an attention matrix A: q = ||A||_F^2, m = tr(A^T S), r = ||A 1||^2,
n = (A 1)^T (S 1).

>>> L.is_positive, c1.is_real
(True, True)
"""

import sympy as sp

L, V, P = sp.symbols("L V P", positive=True)
s1, sG, lam, beta = sp.symbols("s1 sG lam beta", positive=True)
sigma2 = sp.Symbol("sigma2", positive=True)
sigma_G2, sigma_W2, beta0 = sp.symbols("sigma_G2 sigma_W2 beta0", positive=True)
a, c, d, e = sp.symbols("a c d e", real=True)
r_W = sp.Symbol("r_W", real=True)
"""Exponent of L in the readout variance (the convention's ``r``; named apart from the invariant r)."""
c1, cG = sp.symbols("c1 cG", real=True)
aG = sp.Symbol("aG", positive=True)
q, m, r, n = sp.symbols("q m r n", real=True)
u = sp.Symbol("u", real=True)
"""u = c1 + cG = 1^T A 1 / L, the uniform (row-sum) coordinate."""
