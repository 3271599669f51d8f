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
noise-averaged :math:`\mathbb E[\Phi^T\Phi]` (fluctuations of C between noise draws dropped; their
second-order trial average is :mod:`emergence.theory.copy_head.linear_trial_average`, opt-in in the numerics).

>>> sp.factor(noise_shift() / sG)
2*L**2*(L*t_u + V*t_u + V*t_v - t_u)/V
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.logit_gauge import embedding_moments
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


TRIALS: tuple[str, ...] = ("gauge", "product")
"""The trials: ``gauge`` (the prior on the flat directions, the default) and ``product`` (every entry squeezed)."""


@lru_cache(maxsize=None)
def compressed_key_ratios() -> dict[str, sp.Expr]:
    r"""The product trial's key covariance compressed to the keys' span, its eigen-ratios and multiplicities.

    Per query row the product trial's key covariance is :math:`s\,D`,
    :math:`D = \mathrm{diag}(t_u\mathbf 1_V, t_v\mathbf 1_L)`.  Every key embedding is orthogonal to
    :math:`f = (\mathbf 1_V; -\mathbf 1_L)`, so linear attention (the logits themselves) sees only
    :math:`D` compressed to :math:`f^\perp`: :math:`\Pi^\perp_V` (ratio :math:`t_u`, V - 1 times),
    :math:`\Pi^\perp_L` (:math:`t_v`, L - 1 times), and in the plane of the unit ones-vectors
    :math:`(n_V, n_L)` the unit vector orthogonal to :math:`f`, with ratio :math:`w^TDw`.

    >>> sp.factor(compressed_key_ratios()["t_w"])
    (L*t_u + V*t_v)/(L + V)
    """
    f_plane = sp.Matrix([sp.sqrt(V), -sp.sqrt(L)]) / sp.sqrt(V + L)  # f in (n_V, n_L)
    w = sp.Matrix([sp.sqrt(L), sp.sqrt(V)]) / sp.sqrt(V + L)
    if sp.simplify((f_plane.T * w)[0]) != 0 or sp.simplify((w.T * w)[0] - 1) != 0:
        raise ArithmeticError("w is not the unit vector orthogonal to f in the ones-plane")
    t_w = sp.simplify((w.T * sp.diag(t_u, t_v) * w)[0])
    return {"t_u": V - 1, "t_v": L - 1, "t_w": t_w}


@lru_cache(maxsize=None)
def noise_entropy(trial: str = "gauge") -> sp.Expr:
    r""":math:`\mathrm{KL}(Q\,\|\,\text{prior})` of the trial's noise (mean zero), in :math:`t_u, t_v`.

    ``product``: every entry at its block's ratio, :math:`(V^2 + LV)I(t_u) + (LV + L^2)I(t_v)`.
    ``gauge``: the product trial's marginal on the directions linear attention sees
    (:math:`\mathcal Q\otimes\mathcal Q`, :math:`\mathcal Q = f^\perp` spanned by the embeddings, of
    dimension :func:`~emergence.theory.copy_head.logit_gauge.embedding_moments` ``["query"].rank()`` = V + L - 1)
    and the prior on the 2(V + L) - 1 flat ones (:math:`f\,d^T` and :math:`d\,f^T`), which cost nothing:

    .. math:: (V + L - 1)\,[(V - 1)\,I(t_u) + (L - 1)\,I(t_v) + I(t_w)],\qquad t_w = \frac{Lt_u + Vt_v}{V + L}.

    Unlike softmax (:func:`~emergence.theory.copy_head.posterior.trial_entropy`) the flat subspace is not
    invariant under the product trial (:math:`d\,f^T` mixes the column types), so the gauge trial is the
    product trial's marginal, not its restriction; both give the same attention law and data term.
    """
    if trial not in TRIALS:
        raise ValueError(f"unknown trial {trial!r}; choose one of {TRIALS}")
    per_entry = mean_field_entropy_cost().subs(mu, 0)
    if trial == "product":
        blocks = logit_noise_blocks()
        return (blocks["key_token"]["entries"] * per_entry.subs(t_var, t_u)
                + blocks["key_position"]["entries"] * per_entry.subs(t_var, t_v))
    query_rank = sp.expand(embedding_moments()["query"].rank())
    ratios = compressed_key_ratios()
    if sp.expand(ratios["t_u"] + ratios["t_v"] + 1 - query_rank) != 0:
        raise ArithmeticError("the compressed key covariance does not have the embeddings' rank")
    return query_rank * (ratios["t_u"] * per_entry.subs(t_var, t_u) + ratios["t_v"] * per_entry.subs(t_var, t_v)
                         + per_entry.subs(t_var, ratios["t_w"]))


@lru_cache(maxsize=None)
def gauge_trial_shift() -> sp.Expr:
    r""":math:`F_{\rm gauge} - F_{\rm product}` at equal :math:`(c_1, c_G, t_u, t_v)`: the flat directions released.

    At :math:`t_u = t_v = t` it is :math:`-(2(V + L) - 1)\,I(t)`, one :math:`I(t)` per flat direction:

    >>> equal = gauge_trial_shift().subs({t_u: t_var, t_v: t_var})
    >>> sp.factor(sp.expand_log(sp.simplify(equal), force=True))
    -(2*L + 2*V - 1)*(t - log(t) - 1)/2
    """
    return sp.expand(noise_entropy("gauge") - noise_entropy("product"))


@lru_cache(maxsize=None)
def linear_posterior_free_energy(targets: str = "raw", trial: str = "gauge") -> sp.Expr:
    r""":math:`F(c_1, c_G, t_u, t_v; P)`: the saddle action at :math:`q + \Delta, r + \Delta` plus the ``trial``'s noise entropy.

    Symbols: c1, cG, t_u, t_v, P, L, V, s1, sG, lam, beta (the linear kernels' scales).
    """
    invariants = attention_invariants(linear_pattern(), L, "cyclic")
    shift = noise_shift()
    data = population_action("cyclic", targets).subs(
        {q: invariants["q"] + shift, m: invariants["m"], r: invariants["r"] + shift, n: invariants["n"]},
        simultaneous=True)
    return linear_prior_in_scales() + noise_entropy(trial) + data


__all__ = [
    "TRIALS", "compressed_key_ratios", "gauge_trial_shift", "k", "key_count_moments", "linear_posterior_free_energy",
    "noise_entropy", "noise_gram_per_row", "noise_shift",
]
