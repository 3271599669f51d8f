r"""Step 7 (posterior level): the bulk of :math:`W_{QK}` as Gaussian logit noise, softmax model T.

The saddle of steps 1–5 keeps only the order-parameter directions of :math:`W_{QK}` and
predicts the **MAP**.  Posterior samples carry the bulk: every entry of :math:`W_{QK}`
fluctuates at about its prior width, so each row's logits carry noise that spreads the
attention.  This module is our own reconstruction (the paper's equations are not available to
us) of the route scoped in the shared note (section 6): a mean-field Gaussian law for
:math:`W_{QK}` whose two noise variances are extra order parameters.

**Logits of a row.**  For query :math:`i` (token :math:`x_i`) and key :math:`j`,
:math:`G_{ij} = W_{tt}[x_i,x_j] + W_{tp}[x_i,j] + W_{pt}[i,x_j] + W_{pp}[i,j]`.  Terms that
do not depend on the key cancel in the row softmax, so the row sees
(:func:`logit_noise_blocks`)

.. math::
    \ell_j = g\,[j = i-1] + u_{x_j} + v_j, \qquad
    u_a = W_{tt}[x_i,a] + W_{pt}[i,a], \quad v_j = W_{tp}[x_i,j] + W_{pp}[i,j],

key-token noise :math:`u` (one value per token class, shared by the keys that carry it) and
key-position noise :math:`v` (i.i.d. over keys).  With entries of variance :math:`t_u s`
(blocks :math:`W_{tt}, W_{pt}`, :math:`V^2 + LV` entries) and :math:`t_v s` (blocks
:math:`W_{tp}, W_{pp}`, :math:`LV + L^2` entries) the noises have variances
:math:`2t_u s` and :math:`2t_v s`; the copy logit :math:`g` is the mean of :math:`W_{pp}`
along the gauge-fixed shift (step 5, cost :math:`(L-1)g^2/(2s)`).

**Entropy.**  The mean-field law :math:`\mathcal N(\mu, t s)` per entry costs its
Kullback–Leibler divergence from the prior :math:`\mathcal N(0, s)`,
:math:`\mu^2/(2s) + (t - 1 - \ln t)/2` (:func:`mean_field_entropy_cost`, integrated here).

**Flat directions.**  3(V + L) - 2 directions of :math:`W_{QK}` leave every attention row unchanged
(:mod:`~emergence.theory.copy_head.logit_gauge`): along them the posterior is the prior.  The
**gauge-correct trial** (``trial="gauge"``, the default) keeps the prior there and the product law
elsewhere; the product trial (``"product"``) squeezes them to :math:`t_u s, t_v s` and pays
:math:`(2V + L - 1)I(t_u) + (V + 2L - 1)I(t_v)` more for the same attention (:func:`trial_entropy`,
:func:`gauge_trial_shift`).

**Data term.**  The readout-marginal population action of step 2 depends on the attention
only through the V x V moments :math:`\mathbb E[\Phi\Phi^T]` and :math:`\mathbb E[\Phi y^T]` of
the attention mass per token class :math:`\Phi_a = \sum_{j: x_j = a} A_{ij}` (target
:math:`y = x_{i-1}`).  Matching their traces to the population lemma with :math:`r = n = L`
(rows sum to one) gives the effective invariants (:func:`effective_invariants`)

.. math::
    q_{\rm eff} = L\,\frac{V\,\mathbb E\sum_a\Phi_a^2 - 1}{V - 1}, \qquad
    m_{\rm eff} = L\,\frac{V\,\mathbb E\,\Phi_{x_{i-1}} - 1}{V - 1},

averaged over tokens and noise.  The free energy of a mode is then
(:func:`posterior_free_energy`)

.. math::
    F(g, t_u, t_v; P) = \frac{(L-1)g^2}{2s} + (V + L - 1)\,[(V - 1)\,I(t_u) + (L - 1)\,I(t_v)]
    + S_{\rm data}(q_{\rm eff}, m_{\rm eff}, L, L; P), \quad I(t) = \tfrac12(t - 1 - \ln t),

(gauge-correct trial; the product trial has :math:`(V^2 + LV)I(t_u) + (LV + L^2)I(t_v)`),

minimised over :math:`(g, t_u, t_v)` within each mode; the posterior :math:`P^*` is where the
uniform and copy modes have equal :math:`F`.  Approximations: mean field (a variational upper
bound per mode) and the data term at noise-averaged moments (fluctuations of the moments
between noise draws dropped).

**Noise averages.**  For i.i.d. key-position noise the row averages are one-dimensional
integrals through :math:`1/Z = \int_0^\infty e^{-\tau Z}d\tau` and
:math:`1/Z^2 = \int_0^\infty \tau e^{-\tau Z}d\tau` (:func:`laplace_identities`) of the
lognormal Laplace transform :math:`\varphi(\tau) = \mathbb E\,e^{-\tau e^{v}}`
(:func:`iid_row_averages`); the token-structured part :math:`u` needs Monte Carlo
(numerics).

>>> sp.simplify(mean_field_entropy_cost() - (mu**2 / (2 * s_entry) + (t_var - 1 - sp.log(t_var)) / 2))
0
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from emergence.theory.copy_head.logit_gauge import flat_directions
from emergence.theory.copy_head.population import population_action, quadratic_form_average
from emergence.theory.copy_head.softmax import gap, gauge_fixed_copy_cost
from emergence.theory.copy_head.symbols import L, V, m, n, q, r, sigma2

mu = sp.Symbol("mu", real=True)
s_entry = sp.Symbol("s", positive=True)
"""Prior variance of one entry of W_QK."""
t_var = sp.Symbol("t", positive=True)
t_u, t_v = sp.symbols("t_u t_v", positive=True)
"""Variance ratios (posterior / prior) of the key-token and key-position blocks."""
tau = sp.Symbol("tau", positive=True)
Z = sp.Symbol("Z", positive=True)
row_square = sp.Symbol("Q_Phi", positive=True)
r"""Noise- and token-averaged :math:`\mathbb E\sum_a \Phi_a^2` of a row."""
row_target = sp.Symbol("M_Phi", positive=True)
r"""Noise- and token-averaged :math:`\mathbb E\,\Phi_{x_{i-1}}` of a row."""


@lru_cache(maxsize=None)
def mean_field_entropy_cost() -> sp.Expr:
    r""":math:`\mathrm{KL}(\mathcal N(\mu, ts)\,\|\,\mathcal N(0, s))`, integrated by SymPy."""
    w = sp.Symbol("w", real=True)
    variance = t_var * s_entry
    log_q = -(w - mu) ** 2 / (2 * variance) - sp.log(2 * sp.pi * variance) / 2
    log_p = -w**2 / (2 * s_entry) - sp.log(2 * sp.pi * s_entry) / 2
    density = sp.exp(-(w - mu) ** 2 / (2 * variance)) / sp.sqrt(2 * sp.pi * variance)
    integrand = sp.expand(log_q - log_p)
    kl = sp.integrate(integrand * density, (w, -sp.oo, sp.oo), conds="none")
    return sp.expand(sp.simplify(kl))


@lru_cache(maxsize=None)
def logit_noise_blocks() -> dict[str, dict[str, sp.Expr]]:
    r"""The blocks of :math:`W_{QK}` that make each noise, their entry counts and the noise variance.

    A block enters the row's logits through the key's token (``"key_token"``), the key's
    position (``"key_position"``) or not at all (the query-only part, a gauge of the row
    softmax).  Blocks: :math:`W_{tt}` (V x V, key token), :math:`W_{pt}` (L x V, key token),
    :math:`W_{tp}` (V x L, key position), :math:`W_{pp}` (L x L, key position).  One row sees
    one entry of each block per key, so the noise variance is the number of blocks times
    :math:`t s`.

    >>> blocks = logit_noise_blocks()
    >>> blocks["key_token"]["entries"], blocks["key_token"]["variance"]
    (L*V + V**2, 2*s*t_u)
    """
    # block name -> (rows, columns, what the column index is)
    blocks = {"tt": (V, V, "key_token"), "pt": (L, V, "key_token"),
              "tp": (V, L, "key_position"), "pp": (L, L, "key_position")}
    out: dict[str, dict[str, sp.Expr]] = {}
    for kind, ratio in (("key_token", t_u), ("key_position", t_v)):
        members = [shape for shape in blocks.values() if shape[2] == kind]
        out[kind] = {
            "entries": sp.expand(sum(rows * columns for rows, columns, _ in members)),
            "variance": len(members) * ratio * s_entry,
        }
    return out


@lru_cache(maxsize=None)
def effective_invariants() -> dict[str, sp.Expr]:
    r""":math:`q_{\rm eff}, m_{\rm eff}` from the row moments of :math:`\Phi` (population lemma, r = n = L).

    The per-sequence :math:`\mathbb E[X^TA^TAX]` of step 2 has trace :math:`q(1 - 1/V) + r/V`;
    the same trace summed over the L rows is :math:`L\,\mathbb E\sum_a\Phi_a^2`.  Likewise
    :math:`\mathbb E[X^TA^TY]` has trace :math:`m(1-1/V) + n/V = L\,\mathbb E\,\Phi_{x_{i-1}}`.

    >>> effective = effective_invariants()
    >>> sp.factor(effective["q"])
    L*(Q_Phi*V - 1)/(V - 1)
    """
    trace_C = quadratic_form_average(q, r).trace(V)
    trace_B = quadratic_form_average(m, n).trace(V)
    q_solution = sp.solve(sp.Eq(trace_C.subs(r, L), L * row_square), q)
    m_solution = sp.solve(sp.Eq(trace_B.subs(n, L), L * row_target), m)
    if len(q_solution) != 1 or len(m_solution) != 1:
        raise ArithmeticError("expected one effective invariant each")
    return {"q": sp.factor(q_solution[0]), "m": sp.factor(m_solution[0])}


@lru_cache(maxsize=None)
def laplace_identities() -> tuple[sp.Expr, sp.Expr]:
    r""":math:`\int_0^\infty e^{-\tau Z}d\tau` and :math:`\int_0^\infty \tau e^{-\tau Z}d\tau` (SymPy).

    >>> laplace_identities()
    (1/Z, Z**(-2))
    """
    return (sp.integrate(sp.exp(-tau * Z), (tau, 0, sp.oo)),
            sp.integrate(tau * sp.exp(-tau * Z), (tau, 0, sp.oo)))


@lru_cache(maxsize=None)
def iid_row_averages() -> dict[str, sp.Expr]:
    r"""Row averages for i.i.d. key-position noise as :math:`\tau`-integrands (no token noise).

    Keys :math:`j = 1..L-1` have logits :math:`v_j`, the previous token :math:`g + v_0`;
    :math:`\varphi(\tau) = \mathbb E e^{-\tau e^{v}}`, :math:`\varphi_g(\tau) = \mathbb E e^{-\tau e^{g+v}}`.
    With :math:`1/Z` and :math:`1/Z^2` of :func:`laplace_identities` and independence,

    .. math::
        a = \int_0^\infty (-\varphi_g')\,\varphi^{L-1}\,d\tau, \qquad
        \mathbb E\sum_j A_j^2 = \int_0^\infty \tau\big[\varphi_g''\varphi^{L-1}
        + (L-1)\,\varphi''\,\varphi_g\,\varphi^{L-2}\big]\,d\tau,

    since :math:`\mathbb E[e^{k\ell}e^{-\tau e^{\ell}}] = (-\partial_\tau)^k\varphi_\ell`.
    Returned are the integrands (SymPy functions ``phi``, ``phi_g`` of ``tau``).
    """
    phi, phi_g = sp.Function("phi"), sp.Function("phi_g")
    ell = sp.Symbol("ell", real=True)
    # E[e^{k ell} e^{-tau e^ell}] = (-d/dtau)^k E[e^{-tau e^ell}]: check on one realisation
    for k in (1, 2):
        lhs = sp.exp(k * ell) * sp.exp(-tau * sp.exp(ell))
        rhs = (-1) ** k * sp.diff(sp.exp(-tau * sp.exp(ell)), tau, k)
        if sp.simplify(lhs - rhs) != 0:
            raise ArithmeticError("Laplace derivative identity failed")
    first, second = laplace_identities()
    if first != 1 / Z or second != 1 / Z**2:
        raise ArithmeticError("Laplace identities failed")
    others = phi(tau) ** (L - 1)
    return {
        "aG": -sp.diff(phi_g(tau), tau) * others,
        "square_sum": tau * (sp.diff(phi_g(tau), tau, 2) * others
                             + (L - 1) * sp.diff(phi(tau), tau, 2) * phi_g(tau) * phi(tau) ** (L - 2)),
    }


TRIALS = ("gauge", "product")
"""The Gaussian trials of step 7: ``gauge`` keeps the prior along the flat directions, ``product`` does not."""


@lru_cache(maxsize=None)
def trial_entropy(trial: str = "gauge") -> sp.Expr:
    r""":math:`\mathrm{KL}(Q\,\|\,\text{prior})` of the trial's bulk (mean zero), in :math:`t_u, t_v`.

    ``product``: every entry of a block at its ratio, :math:`(V^2 + LV)I(t_u) + (LV + L^2)I(t_v)`.
    ``gauge``: the product trial on the directions the data can see and the prior on the flat ones
    (:func:`~emergence.theory.copy_head.logit_gauge.flat_directions`).  The trial's covariance acts on the
    key index only and the key covariance is block diagonal, so the flat subspace is invariant under it and
    the two trials have the same law on the informative directions (the same attention, the same data
    term); a flat direction at the prior's variance costs :math:`\mathrm{KL}(\text{prior}\|\text{prior})`,
    checked to be 0 here, so only the informative directions pay:

    .. math:: (V + L - 1)\,[(V - 1)\,I(t_u) + (L - 1)\,I(t_v)].
    """
    if trial not in TRIALS:
        raise ValueError(f"unknown trial {trial!r}; choose one of {TRIALS}")
    per_entry = mean_field_entropy_cost().subs(mu, 0)
    if per_entry.subs(t_var, 1) != 0:
        raise ArithmeticError("a direction at the prior's variance must cost nothing")
    if trial == "product":
        blocks = logit_noise_blocks()
        counts = {"key_token": blocks["key_token"]["entries"], "key_position": blocks["key_position"]["entries"]}
    else:
        flat = flat_directions()
        counts = {kind: flat[kind]["informative"] for kind in ("key_token", "key_position")}
    return counts["key_token"] * per_entry.subs(t_var, t_u) + counts["key_position"] * per_entry.subs(t_var, t_v)


@lru_cache(maxsize=None)
def gauge_trial_shift() -> sp.Expr:
    r""":math:`F_{\rm gauge} - F_{\rm product}` at equal :math:`(g, t_u, t_v)`: the flat directions released.

    Per released direction :math:`-I(t)`; the counts are the flat directions of each column type:

    >>> [2 * gauge_trial_shift().coeff(sp.log(ratio)) for ratio in (t_u, t_v)]
    [L + 2*V - 1, 2*L + V - 1]
    >>> sp.factor(gauge_trial_shift().subs({t_u: t_var, t_v: t_var}))
    -(3*L + 3*V - 2)*(t - log(t) - 1)/2
    """
    return sp.expand(trial_entropy("gauge") - trial_entropy("product"))


@lru_cache(maxsize=None)
def posterior_free_energy(targets: str = "raw", trial: str = "gauge") -> sp.Expr:
    r"""Variational free energy :math:`F(g, t_u, t_v)` of softmax model T in :math:`Q_\Phi, M_\Phi`.

    Copy cost of step 5 (gauge-fixed, entry variance s) + the ``trial``'s entropy
    (:func:`trial_entropy`) + the step-2 data action at :math:`(q_{\rm eff}, m_{\rm eff}, L, L)`.
    Symbols: g, t_u, t_v, Q_Phi, M_Phi, P, L, V, s, lam, beta.
    """
    copy = gauge_fixed_copy_cost("T").subs(sigma2, s_entry)
    entropy = trial_entropy(trial)
    effective = effective_invariants()
    data = population_action("cyclic", targets).subs(
        {q: effective["q"], m: effective["m"], r: L, n: L}, simultaneous=True)
    return copy + entropy + data


__all__ = [
    "TRIALS", "gap", "effective_invariants", "gauge_trial_shift", "iid_row_averages", "laplace_identities",
    "logit_noise_blocks", "mean_field_entropy_cost", "posterior_free_energy", "trial_entropy",
]
