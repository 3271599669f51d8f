r"""The posterior theory with the block trial: one variance ratio per block of :math:`W_{QK}`, KL in closed form.

The block trial (:mod:`~emergence.numerics.copy_head.block_trial`) gives the four blocks of :math:`W_{QK}` their
own ratios :math:`t_{tt}, t_{tp}, t_{pt}, t_{pp}` (here with :math:`t_d = t_{tt}` on the ``tt`` diagonal and no
diagonal mean: the row-average closure has no row function for either).  A query row's logits are
:math:`W_{tt}[x_q, \cdot] + W_{pt}[q, \cdot]` on the key tokens and :math:`W_{tp}[x_q, \cdot] + W_{pp}[q, \cdot]` on
the key positions, so the row-average closure sees the per-row sums only and the data term is the gauge-correct
trial's at

.. math:: 2t_u = t_{tt} + t_{pt},\qquad 2t_v = t_{tp} + t_{pp}.

The KL from the prior is derived in :mod:`emergence.theory.copy_head.block_trial` (six symmetry sectors of the
flat subspace):

.. math::
    \mathrm{KL} = \frac{(L-1)g^2}{2s} + \sum_e I(t_e) - \sum_\sigma m_\sigma\rho_\sigma,\qquad
    \rho_\sigma = \tfrac12\big[\operatorname{tr}F_1^{-1}F_t - k_\sigma + \ln\det F_1^{-1}F_{1/t}\big],

with the sector forms of :func:`flat_sector_forms`.  Because the data term depends on the split only through
:math:`(t_u, t_v)`, the theory's free energy at :math:`(g, t_u, t_v)` takes the split that minimises the KL,
:math:`t_{tt} = 2t_u\sigma(\eta_u)`, :math:`t_{pt} = 2t_u\sigma(-\eta_u)`, :math:`t_{tp} = 2t_v\sigma(\eta_v)`,
:math:`t_{pp} = 2t_v\sigma(-\eta_v)` (:func:`kl_optimal_split`).  Without a diagonal ratio the six sectors
collapse to one closed form per key-column type (:func:`column_kl`), so the two splits are 1-D minimisations.  The theory keeps the
Gaussian trials' coordinates :math:`(g, \ln t_u, \ln t_v)`.  :math:`\eta = 0` is the gauge-correct trial, so
its F is never above the gauge-correct trial's.  Nothing here imports SymPy; ``tests/test_block_posterior.py``
checks the sector forms against the SymPy derivation and the KL against the dense
:meth:`~emergence.numerics.copy_head.block_trial.BlockTrial.kl_from_prior`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import minimize_scalar

from emergence.numerics.copy_head.posterior import TRIAL_THEORIES, PosteriorMode, PosteriorTheory, entropy_rate

SPLIT_BOUND = 12.0
"""The split coordinates :math:`\\eta_u, \\eta_v` are searched on ``[-SPLIT_BOUND, SPLIT_BOUND]``."""


def flat_sector_forms(L: int, V: int, w: dict[str, float]) -> list[tuple[int, np.ndarray]]:
    r"""``[(m_sigma, F_w (k, k))]``: the flat subspace's sectors at entry weights ``w`` (keys ``tt, tp, pt, pp, d``).

    The forms of :func:`emergence.theory.copy_head.block_trial.flat_sectors` (tested against it), in its order.
    """
    cross = w["d"] - w["tt"]
    return [(V, np.array([[L * w["tp"]]])), (L, np.array([[V * w["pt"]]])), (L, np.array([[L * w["pp"]]])),
            (L - 1, np.array([[V * w["tp"] + L * w["pp"]]])), (1, np.array([[(V - 1) * w["tt"] + w["d"]]])),
            (V - 1, np.array([[(V - 1) * w["tt"] + w["d"], cross], [cross, (V - 1) * w["tt"] + w["d"] + L * w["pt"]]]))]


def flat_release(L: int, V: int, ratios: dict[str, float]) -> float:
    r""":math:`\sum_\sigma m_\sigma\rho_\sigma` (module docstring): what the prior on the flat subspace gives back."""
    full = {**ratios, "d": ratios.get("diag", ratios["tt"])}
    forms = zip(flat_sector_forms(L, V, dict.fromkeys(full, 1.0)), flat_sector_forms(L, V, full),
                flat_sector_forms(L, V, {key: 1.0 / value for key, value in full.items()}))
    release = 0.0
    for (multiplicity, one), (_, ratio), (_, inverse) in forms:
        unit = np.linalg.inv(one)
        release += multiplicity * 0.5 * (np.trace(unit @ ratio) - len(one) + np.linalg.slogdet(unit @ inverse)[1])
    return float(release)


def block_kl(L: int, V: int, s: float, g: float, delta: float, ratios: dict[str, float]) -> float:
    r"""KL(block trial :math:`\|` prior) in closed form, ``ratios`` as :class:`~.block_trial.BlockTrial`'s."""
    t_d = ratios.get("diag", ratios["tt"])
    product = (V * (V - 1) * entropy_rate(ratios["tt"]) + V * entropy_rate(t_d)
               + V * L * (entropy_rate(ratios["tp"]) + entropy_rate(ratios["pt"])) + L**2 * entropy_rate(ratios["pp"]))
    return float(product - flat_release(L, V, ratios) + ((L - 1) * g**2 + (V - 1) * delta**2) / (2 * s))


def split_ratios(t_u: float, t_v: float, eta) -> dict[str, float]:
    r"""Block ratios with per-row sums :math:`2t_u, 2t_v` at split coordinates ``eta = (eta_u, eta_v)``."""
    share_u, share_v = 1.0 / (1.0 + np.exp(-np.asarray(eta, dtype=float)))
    return {"tt": float(2 * t_u * share_u), "pt": float(2 * t_u * (1 - share_u)), "tp": float(2 * t_v * share_v),
            "pp": float(2 * t_v * (1 - share_v))}


def column_kl(token_rows: float, position_rows: float, L: int, V: int) -> float:
    r"""The variance KL of one key-column type per key-difference direction, :math:`t_{\rm tok}` (``token_rows``) in the
    V token rows and :math:`t_{\rm pos}` in the L position rows (no diagonal ratio):

    .. math:: V I(t_{\rm tok}) + L I(t_{\rm pos}) - J,\qquad
        J = \tfrac12\Big[\frac{Vt_{\rm tok} + Lt_{\rm pos}}{V + L} - 1 + \ln\frac{V/t_{\rm tok} + L/t_{\rm pos}}{V + L}\Big],

    so that :math:`\mathrm{KL} = (V-1)\,\text{column\_kl}(t_{tt}, t_{pt}) + (L-1)\,\text{column\_kl}(t_{tp}, t_{pp})`
    (:func:`emergence.theory.copy_head.block_trial.column_form`; tested against :func:`block_kl`).
    """
    x, y = token_rows, position_rows
    release = 0.5 * ((V * x + L * y) / (V + L) - 1.0 + np.log((V / x + L / y) / (V + L)))
    return float(V * entropy_rate(x) + L * entropy_rate(y) - release)


def _best_share(total: float, L: int, V: int) -> tuple[float, float]:
    """``(t_tok, t_pos)`` with ``t_tok + t_pos = total`` minimising :func:`column_kl` (bounded Brent on the logit share)."""
    def objective(eta):
        share = 1.0 / (1.0 + np.exp(-eta))
        return column_kl(total * share, total * (1 - share), L, V)

    eta = minimize_scalar(objective, bounds=(-SPLIT_BOUND, SPLIT_BOUND), method="bounded",
                          options={"xatol": 1e-11}).x
    if objective(eta) > objective(0.0):
        eta = 0.0
    share = 1.0 / (1.0 + np.exp(-eta))
    return total * share, total * (1 - share)


@lru_cache(maxsize=4096)
def kl_optimal_split(L: int, V: int, t_u: float, t_v: float) -> tuple[float, dict[str, float]]:
    """``(variance KL, ratios)``: the block ratios of per-row sums ``2 t_u, 2 t_v`` that minimise the KL (no mean).

    The KL is a sum over the two key-column types (:func:`column_kl`), so each split is a 1-D minimisation.
    """
    tt, pt = _best_share(2 * t_u, L, V)
    tp, pp = _best_share(2 * t_v, L, V)
    return ((V - 1) * column_kl(tt, pt, L, V) + (L - 1) * column_kl(tp, pp, L, V),
            {"tt": float(tt), "pt": float(pt), "tp": float(tp), "pp": float(pp)})


@dataclass(frozen=True)
class BlockMode(PosteriorMode):
    """A :class:`PosteriorMode` of the block trial, with its KL-optimal block ``ratios`` (``tt, tp, pt, pp``)."""

    ratios: dict


class BlockPosteriorTheory(PosteriorTheory):
    """The posterior free energy with the block trial (``PosteriorTheory(..., trial="block")``); see the module docstring.

    Coordinates, bounds, row averages and data term are the gauge-correct trial's; only the KL changes.
    """

    def __init__(self, L: int, V: int, convention=None, draws: int = 20_000, seed: int = 0, kernels=None,
                 trial: str = "block", averages: str = "monte_carlo"):
        super().__init__(L, V, convention, draws, seed, kernels, "gauge", averages)
        self.trial = "block"

    def prior_and_entropy(self, g, t_u, t_v) -> float:
        r""":math:`(L-1)g^2/2s` plus the KL-optimal split's variance KL at per-row sums :math:`2t_u, 2t_v`."""
        return float((self.L - 1) * g**2 / (2 * self.s) + kl_optimal_split(self.L, self.V, float(t_u), float(t_v))[0])

    def mode(self, P, start, g, log_t_u, log_t_v) -> BlockMode:
        base = super().mode(P, start, g, log_t_u, log_t_v)
        return BlockMode(**base.__dict__, ratios=kl_optimal_split(self.L, self.V, base.t_u, base.t_v)[1])


TRIAL_THEORIES["block"] = BlockPosteriorTheory

__all__ = ["BlockMode", "BlockPosteriorTheory", "block_kl", "column_kl", "flat_release", "flat_sector_forms",
           "kl_optimal_split", "split_ratios"]
