r"""The block trial's KL from the prior in closed form: the flat subspace in six symmetry sectors (SymPy).

Model T's :math:`W_{QK}` is ``(N, N)``, ``N = V + L`` (rows: query embedding, columns: key embedding, tokens
first), prior :math:`\mathcal N(0, sI)`.  The block trial (``numerics/copy_head/block_trial.py``) is the product
law of entrywise variance ratios :math:`t_e` (:math:`T = \mathrm{diag}(t_e)`; one ratio per block
``tt, tp, pt, pp``, its own :math:`t_d` on the ``tt`` diagonal) and mean :math:`\mu`, restricted to the
visible directions (orthonormal basis B), with the prior on the flat subspace :math:`\mathcal K` (basis K).  In
units of s, with :math:`C = B^TTB`:

.. math::
    \mathrm{KL} = \tfrac12[\operatorname{tr}C - \dim B - \ln\det C] + \frac{|B^T\mu|^2}{2s},\qquad
    \det B^TTB = \det T\,\det K^TT^{-1}K,\qquad \operatorname{tr}B^TTB = \operatorname{tr}T - \operatorname{tr}K^TTK

(the first identity: :math:`(Q^TTQ)^{-1} = Q^TT^{-1}Q` for orthogonal :math:`Q = [B\ K]`, Schur complement).  So

.. math::
    \mathrm{KL} = \sum_e I(t_e) - \sum_\sigma m_\sigma\rho_\sigma + \frac{|B^T\mu|^2}{2s},\qquad
    \rho_\sigma = \tfrac12\big[\operatorname{tr}F_1^{-1}F_t - k_\sigma + \ln\det F_1^{-1}F_{1/t}\big],

:math:`I(t) = (t - 1 - \ln t)/2`.  Here :math:`F_w` is the quadratic form :math:`\sum_e w_eM_e^2` on the
flat matrices :math:`M = a(\mathbf 1_V; 0)^T + b(0; \mathbf 1_L)^T + (\mathbf 1_V; -\mathbf 1_L)d^T`
(:mod:`~emergence.theory.copy_head.logit_gauge`), parametrised one-to-one by :math:`a, b \in \mathbb R^N` and
:math:`d` summing to zero on its token and on its position part; the ratio of two such forms is basis-free, so
:math:`\det K^TWK = \det F_w/\det F_1` and :math:`\operatorname{tr}K^TTK = \operatorname{tr}F_1^{-1}F_t`.  Summing
each block over its columns, with :math:`\sum d = 0` per part,

.. math::
    F_w = w_{tt}V|a_t|^2 + (w_{tt}V + w_{pt}L)|d_t|^2 + (w_d - w_{tt})|a_t + d_t|^2 + w_{tp}L|b_t|^2
    + w_{pt}V|a_p|^2 + w_{pp}L|b_p|^2 + (w_{tp}V + w_{pp}L)|d_p|^2

(:math:`a_t`: the token rows' part of a, :math:`a_p` the position rows'; likewise b, d).  There are no cross
terms between parts, and token (position) permutations split each token (position) vector into its mean and its
sum-zero part, so :math:`F_w` is block diagonal in six sectors (:func:`flat_sectors`): per sector the
multiplicity :math:`m_\sigma` (polynomial in L, V) and the :math:`k_\sigma \times k_\sigma` form, derived here as
the Hessian of :math:`F_w` in the sector's amplitudes.  The multiplicities times the sizes add up to
:math:`3(V + L) - 2` (checked against :func:`~emergence.theory.copy_head.logit_gauge.flat_directions`), and with
one ratio per key-column type the KL reduces to the gauge-correct trial's
:math:`(V+L-1)[(V-1)I(t_u) + (L-1)I(t_v)]` (checked).  The mean :math:`g(S - J/L)_{pp} + \delta I_{tt}` has rows and
columns summing to zero in :math:`g` and the projection :math:`\delta(I - J/V)` in ``tt``, so
:math:`|B^T\mu|^2 = (L-1)g^2 + (V-1)\delta^2`.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.logit_gauge import flat_directions
from emergence.theory.copy_head.symbols import L, V

RATIOS = sp.symbols("t_tt t_tp t_pt t_pp t_d", positive=True)
"""The block ratios ``tt, tp, pt, pp`` and the ``tt`` diagonal's."""

g, delta, s, t_u, t_v = sp.symbols("g delta s t_u t_v", real=True)


def _flat_form(w: dict[str, sp.Expr], amplitude: dict[str, sp.Expr], squares: dict[str, sp.Expr]) -> sp.Expr:
    """:math:`F_w` (module docstring) from the squared norms of the parts of one sector vector."""
    return (w["tt"] * V * squares["a_t"] + (w["tt"] * V + w["pt"] * L) * squares["d_t"]
            + (w["d"] - w["tt"]) * squares["a_t+d_t"] + w["tp"] * L * squares["b_t"] + w["pt"] * V * squares["a_p"]
            + w["pp"] * L * squares["b_p"] + (w["tp"] * V + w["pp"] * L) * squares["d_p"])


_SECTORS = {
    # name: (multiplicity, amplitudes by part); a part's vector is its amplitude times one unit vector of the sector
    "token_rows_position_constant": (V, ("b_t",)),
    "position_rows_token_constant": (L, ("a_p",)),
    "position_rows_position_constant": (L, ("b_p",)),
    "logit_null_position": (L - 1, ("d_p",)),
    "token_rows_token_constant_mean": (sp.Integer(1), ("a_t",)),
    "token_sum_zero": (V - 1, ("a_t", "d_t")),
}


@lru_cache(maxsize=None)
def flat_sectors() -> dict[str, tuple[sp.Expr, sp.Matrix]]:
    r"""``{sector: (multiplicity, F_w)}``, :math:`F_w` the sector's form in the weights ``w_tt, w_tp, w_pt, w_pp, w_d``.

    The form is the Hessian/2 of :func:`_flat_form` in the sector's amplitudes; every part of a sector shares one
    unit vector, so :math:`|a_t + d_t|^2 = (\alpha + \beta)^2` where both are present.
    """
    weights = dict(zip(("tt", "tp", "pt", "pp", "d"), sp.symbols("w_tt w_tp w_pt w_pp w_d", positive=True)))
    out = {}
    for name, (multiplicity, parts) in _SECTORS.items():
        amplitudes = sp.symbols(f"x0:{len(parts)}", real=True)
        amp = dict(zip(parts, amplitudes))
        squares = {part: amp.get(part, 0) ** 2 for part in ("a_t", "d_t", "b_t", "a_p", "b_p", "d_p")}
        squares["a_t+d_t"] = (amp.get("a_t", 0) + amp.get("d_t", 0)) ** 2
        form = sp.expand(_flat_form(weights, amp, squares))
        out[name] = (multiplicity, sp.hessian(form, amplitudes) / 2)
    total = sp.expand(sum(m * f.shape[0] for m, f in out.values()))
    if sp.expand(total - flat_directions()["flat_total"]) != 0:
        raise ArithmeticError(f"the sectors hold {total} flat directions, not 3(V + L) - 2")
    return out


def _weights(values: tuple) -> dict:
    return dict(zip(sp.symbols("w_tt w_tp w_pt w_pp w_d", positive=True), values))


@lru_cache(maxsize=None)
def block_kl() -> dict[str, sp.Expr]:
    r"""``kl`` (in g, delta, s and :data:`RATIOS`), ``release`` (:math:`\sum_\sigma m_\sigma\rho_\sigma`),
    ``product`` (:math:`\sum_e I(t_e)`), ``mean`` and ``sector_release`` (:math:`\rho_\sigma` per sector).

    Checked: tied ratios give the gauge-correct trial's KL.
    """
    t_tt, t_tp, t_pt, t_pp, t_d = RATIOS

    def rate(t):
        return (t - 1 - sp.log(t)) / 2

    product = (V * (V - 1) * rate(t_tt) + V * rate(t_d) + V * L * (rate(t_tp) + rate(t_pt)) + L**2 * rate(t_pp))
    sector_release = {}
    for name, (multiplicity, form) in flat_sectors().items():
        one = form.subs(_weights((1, 1, 1, 1, 1)))
        ratio = form.subs(_weights(RATIOS))
        inverse = form.subs(_weights(tuple(1 / t for t in RATIOS)))
        k = form.shape[0]
        sector_release[name] = ((one.inv() * ratio).trace() - k + sp.log(inverse.det() / one.det())) / 2
    release = sum(flat_sectors()[name][0] * rho for name, rho in sector_release.items())
    mean = ((L - 1) * g**2 + (V - 1) * delta**2) / (2 * s)
    kl = product - release + mean
    tied = kl.subs({t_tt: t_u, t_pt: t_u, t_d: t_u, t_tp: t_v, t_pp: t_v})
    gauge = (V + L - 1) * ((V - 1) * rate(t_u) + (L - 1) * rate(t_v)) + (L - 1) * g**2 / (2 * s)
    difference = sp.simplify(sp.expand_log(sp.simplify(tied - gauge - (V - 1) * delta**2 / (2 * s)), force=True))
    if difference != 0:
        raise ArithmeticError("tied block ratios should give the gauge-correct trial's KL")
    return {"kl": kl, "release": release, "product": product, "mean": mean, "sector_release": sector_release}


@lru_cache(maxsize=None)
def column_form() -> sp.Expr:
    r"""The variance KL without a diagonal ratio (:math:`t_d = t_{tt}`), as one term per key-column type:

    .. math:: (V-1)\,c(t_{tt}, t_{pt}) + (L-1)\,c(t_{tp}, t_{pp}),\qquad c(x, y) = VI(x) + LI(y)
        - \tfrac12\Big[\frac{Vx + Ly}{V+L} - 1 + \ln\frac{V/x + L/y}{V+L}\Big]

    (per key-difference direction: V token rows, L position rows, less the one query direction
    :math:`(\mathbf 1_V; -\mathbf 1_L)` the data cannot see, at the rows' weighted means).  Checked equal to
    :func:`block_kl`'s variance part at :math:`t_d = t_{tt}`; returns :math:`c(x, y)` in ``x, y``.
    """
    t_tt, t_tp, t_pt, t_pp, t_d = RATIOS
    x, y = sp.symbols("x y", positive=True)

    def rate(t):
        return (t - 1 - sp.log(t)) / 2

    column = V * rate(x) + L * rate(y) - ((V * x + L * y) / (V + L) - 1 + sp.log((V / x + L / y) / (V + L))) / 2
    kl = (block_kl()["product"] - block_kl()["release"]).subs(t_d, t_tt)
    split = (V - 1) * column.subs({x: t_tt, y: t_pt}) + (L - 1) * column.subs({x: t_tp, y: t_pp})
    if sp.simplify(sp.expand_log(sp.simplify(kl - split), force=True)) != 0:
        raise ArithmeticError("the variance KL does not split into one term per key-column type")
    return column


__all__ = ["RATIOS", "block_kl", "column_form", "delta", "flat_sectors", "g", "s", "t_u", "t_v"]
