r"""Step 8 (posterior level): the bulk of :math:`W_{QK}` as Gaussian noise, **linear** attention, model T.

The saddle of step 3 keeps only the order-parameter directions of :math:`W_{QK}` and predicts
the **MAP**.  As in step 7 (softmax, :mod:`emergence.theory.copy_head.posterior`) the
posterior is approximated by a mean-field Gaussian law on :math:`W_{QK}`: mean the
minimum-norm weights of :math:`\bar A = c_1J/L + c_GS` (the saddle's family, prior cost
:math:`(c_1 + c_G)^2/(2s_1) + (L-1)c_G^2/(2s_G)`), and independent entry noise of variance
:math:`t_us` in the key-token blocks :math:`W_{tt}, W_{pt}` and :math:`t_vs` in the
key-position blocks :math:`W_{tp}, W_{pp}` (:func:`~emergence.theory.copy_head.posterior.logit_noise_blocks`;
model T has no query-only block, so for linear attention too every block reaches the
attention).  Our own reconstruction: the paper's equations are not available to us.

**Why linear attention has closed forms.**  :math:`A = G/L^k` is linear in :math:`W_{QK}`,
so the noise :math:`N = \delta G/L^k` adds to :math:`\Phi = AX` linearly, has mean zero, and
:math:`\mathbb E[\Phi^T\Phi] = \bar\Phi^T\bar\Phi + \mathbb E[X^TN^TNX]`,
:math:`\mathbb E[\Phi^TY] = \bar\Phi^TY`.  Row i of the noise is
:math:`N_{ij} = (u_{x_j} + v_j)/L^k` with :math:`u_a \sim \mathcal N(0, 2t_us)` per token class and
:math:`v_j \sim \mathcal N(0, 2t_vs)` per key, so the row's noise mass on token class a is
:math:`(n_a u_a + \sum_{j:x_j=a}v_j)/L^k` (:math:`n_a` the count of a among the L keys) and
(:func:`noise_gram_per_row`)

.. math::
    \mathbb E_{\rm noise}[\delta\Phi_i\delta\Phi_i^T] = L^{-2k}\,\mathrm{diag}_a\big(2t_us\,n_a^2 + 2t_vs\,n_a\big),
    \qquad \mathbb E_x[n_a] = \tfrac LV,\quad \mathbb E_x[n_a^2] = \tfrac LV + \tfrac{L(L-1)}{V^2}.

Summed over the L rows this is :math:`\delta\,I` per sequence, and in the population form
:math:`C_1 = q(I/V - J/V^2) + rJ/V^2` adding :math:`\delta I` shifts q and r by the same
:math:`\Delta = V\delta` (:func:`noise_shift`); with the copy scale :math:`s_G = sL^{-2k}`,

.. math:: \Delta(t_u, t_v) = 2s_GL^2\Big[t_u\Big(1 + \frac{L-1}{V}\Big) + t_v\Big].

**Free energy** (:func:`linear_posterior_free_energy`), minimised over
:math:`(c_1, c_G, t_u, t_v)`:

.. math::
    F = \frac{(c_1 + c_G)^2}{2s_1} + \frac{(L-1)c_G^2}{2s_G} + (V^2 + LV)I(t_u) + (LV + L^2)I(t_v)
    + S_{\rm data}(q + \Delta, m, r + \Delta, n; P),\quad I(t) = \tfrac12(t - 1 - \ln t),

with the pattern invariants :math:`q = c_1^2 + 2c_1c_G + Lc_G^2`, :math:`m = c_1 + Lc_G`,
:math:`r = L(c_1 + c_G)^2`, :math:`n = L(c_1 + c_G)`.  At :math:`t_u = t_v = 0` (no noise, no
entropy term) it is the saddle's action :math:`S_{\rm lin}`.  Approximations: mean field, the
two noise ratios tied within their block pairs as in step 7, and the data term at the
noise-averaged :math:`\mathbb E[\Phi^T\Phi]` (fluctuations of C between noise draws dropped).

>>> sp.factor(noise_shift() / sG)
2*L**2*(L*t_u + V*t_u + V*t_v - t_u)/V
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.order_parameters import effective_linear_scales, linear_pattern, linear_prior_in_scales
from emergence.theory.copy_head.patterns import attention_invariants
from emergence.theory.copy_head.population import population_action, quadratic_form_average
from emergence.theory.copy_head.posterior import logit_noise_blocks, mean_field_entropy_cost, mu, s_entry, t_u, t_v, t_var
from emergence.theory.copy_head.symbols import L, V, m, n, q, r, sG, sigma2
from emergence.theory.copy_head.token_algebra import TokenMatrix

k = sp.Symbol("k", real=True)
"""Linear normalisation exponent, A = G / L**k."""


@lru_cache(maxsize=None)
def key_count_moments() -> dict[str, sp.Expr]:
    r""":math:`\mathbb E[n_a]` and :math:`\mathbb E[n_a^2]` of the count of one token class among L i.i.d. uniform keys.

    :math:`n_a = \sum_j [x_j = a]`, so :math:`\mathbb E n_a^2 = \sum_{j,j'}\Pr(x_j = a, x_{j'} = a)`:
    L diagonal terms of probability 1/V and L(L - 1) off-diagonal ones of probability 1/V².

    >>> key_count_moments()["second"]
    L*(L + V - 1)/V**2
    """
    j, jp = sp.symbols("j j_prime", integer=True, positive=True)
    first = sp.summation(sp.Integer(1) / V, (j, 1, L))
    pair = sp.Piecewise((1 / V, sp.Eq(j, jp)), (1 / V**2, True))
    # diagonal and off-diagonal pairs counted separately (SymPy sums a Piecewise in j = j' poorly)
    second = sp.summation(pair.subs(jp, j), (j, 1, L)) + L * (L - 1) / V**2
    return {"first": sp.factor(first), "second": sp.factor(sp.simplify(second))}


@lru_cache(maxsize=None)
def noise_gram_per_row() -> sp.Expr:
    r"""The diagonal entry of :math:`\mathbb E_x\mathbb E_{\rm noise}[\delta\Phi_i\delta\Phi_i^T]` (it is a multiple of I).

    The noise mass on class a is :math:`(n_au_a + \sum_{j:x_j=a}v_j)/L^k`; u and v are independent
    with the variances of :func:`~emergence.theory.copy_head.posterior.logit_noise_blocks`, and
    different classes are uncorrelated, so the Gram matrix is diagonal with entry
    :math:`L^{-2k}(\mathrm{var}_u\,\mathbb E n_a^2 + \mathrm{var}_v\,\mathbb E n_a)`.
    """
    blocks = logit_noise_blocks()
    counts = key_count_moments()
    return (blocks["key_token"]["variance"] * counts["second"]
            + blocks["key_position"]["variance"] * counts["first"]) * L ** (-2 * k)


@lru_cache(maxsize=None)
def noise_shift() -> sp.Expr:
    r""":math:`\Delta`: the shift of q and r that adds :math:`L\cdot` :func:`noise_gram_per_row` :math:`\cdot I` to :math:`C_1`, in :math:`s_G`.

    Solves :math:`C_1(q + \Delta_q, r + \Delta_r) = C_1(q, r) + \delta I` in the token algebra
    (both components), checks :math:`\Delta_q = \Delta_r`, and writes the entry variance through
    the copy scale :math:`s_G = \sigma^2L^{-2k}` of :func:`~emergence.theory.copy_head.order_parameters.effective_linear_scales`.
    """
    shift_q, shift_r = sp.symbols("Delta_q Delta_r")
    per_sequence = L * noise_gram_per_row()
    shifted = quadratic_form_average(q + shift_q, r + shift_r)
    target = quadratic_form_average(q, r) + TokenMatrix.identity() * per_sequence
    solution = sp.solve([sp.simplify(shifted.perp - target.perp), sp.simplify(shifted.parallel - target.parallel)],
                        [shift_q, shift_r], dict=True)
    if len(solution) != 1 or sp.simplify(solution[0][shift_q] - solution[0][shift_r]) != 0:
        raise ArithmeticError(f"the noise does not shift q and r equally: {solution}")
    copy_scale = effective_linear_scales("T", k)["sG"]  # sigma2 * L**(-2k): the entry variance times L**(-2k)
    entry_in_sG = sp.solve(sp.Eq(copy_scale.subs(sigma2, s_entry), sG), s_entry)
    if len(entry_in_sG) != 1:
        raise ArithmeticError(f"cannot express the entry variance through sG: {entry_in_sG}")
    return sp.factor(sp.simplify(solution[0][shift_q].subs(s_entry, entry_in_sG[0])))


@lru_cache(maxsize=None)
def noise_entropy() -> sp.Expr:
    r""":math:`(V^2 + LV)I(t_u) + (LV + L^2)I(t_v)`: the mean-field KL of the two noise block pairs."""
    per_entry = mean_field_entropy_cost().subs(mu, 0)
    blocks = logit_noise_blocks()
    return (blocks["key_token"]["entries"] * per_entry.subs(t_var, t_u)
            + blocks["key_position"]["entries"] * per_entry.subs(t_var, t_v))


@lru_cache(maxsize=None)
def linear_posterior_free_energy(targets: str = "raw") -> sp.Expr:
    r""":math:`F(c_1, c_G, t_u, t_v; P)`: the saddle action at :math:`q + \Delta, r + \Delta` plus the noise entropy.

    Symbols: c1, cG, t_u, t_v, P, L, V, s1, sG, lam, beta (the linear kernels' scales).
    """
    invariants = attention_invariants(linear_pattern(), L, "cyclic")
    shift = noise_shift()
    data = population_action("cyclic", targets).subs(
        {q: invariants["q"] + shift, m: invariants["m"], r: invariants["r"] + shift, n: invariants["n"]},
        simultaneous=True)
    return linear_prior_in_scales() + noise_entropy() + data


__all__ = [
    "k", "key_count_moments", "linear_posterior_free_energy", "noise_entropy", "noise_gram_per_row",
    "noise_shift",
]
