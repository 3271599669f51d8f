r"""The block trial: the gauge-correct Gaussian trial with per-block variances and a mean on the token-token diagonal.

:math:`W_{QK}` is ``(N, N)``, ``N = V + L`` (rows: query embedding, columns: key embedding, tokens first);
the prior is :math:`\mathcal N(0, sI)`.  The four blocks are named by (query row type, key column type):
``tt`` (:math:`W_{tt}[x_q, x_k]`), ``tp`` (:math:`W_{tp}[x_q, k]`), ``pt`` (:math:`W_{pt}[q, x_k]`) and ``pp``
(:math:`W_{pp}[q, k]`).  The token-row blocks ``tt, tp`` are shared by every query that carries the token;
the position-row blocks ``pt, pp`` by one query position only.  The trial is the product law

.. math::
    D = s\,\mathrm{diag}(t_{b(e)}),\qquad \mu_{\rm raw} = g\,(S - J/L)_{pp} + \delta\,I_{tt},

(:math:`t_b` per block :math:`b` of entry :math:`e`, with its own ratio ``t_diag`` on the token-token
diagonal; :math:`S` the cyclic shift) made gauge-correct: the prior on the flat subspace :math:`\mathcal K`
(:func:`~emergence.numerics.copy_head.logit_gauge.flat_direction_basis`) and, on its orthogonal complement
(orthonormal basis :math:`B`, ``(N^2, n)``), the marginal of :math:`\mathcal N(\mu_{\rm raw}, D)`:

.. math::
    \theta = B(\mu_B + C^{1/2}\xi) + \sqrt s\,K\xi_{\mathcal K},\qquad \mu_B = B^T\mu_{\rm raw},\quad C = B^TDB.

The logits see only :math:`B^T\theta`, so the data term is that of the product law.  With a block variance
per column type only (:math:`t_{tt} = t_{pt} = t_u`, :math:`t_{tp} = t_{pp} = t_v`, :math:`\delta = 0`)
:math:`D` maps :math:`\mathcal K` into itself and this is the theory's gauge-correct trial; separate row
types do not (the logit null :math:`(\mathbf 1_V; -\mathbf 1_L)d^T` mixes token and position rows), hence
the compression.  The density and entropy are those of a nonsingular Gaussian on :math:`\mathbb R^{N^2}`:

.. math::
    \ln Q(\theta) = -\tfrac12|\xi|^2 - \tfrac12|\xi_{\mathcal K}|^2 - \tfrac{N^2}2\ln 2\pi - \tfrac{n_{\mathcal K}}2\ln s
    - \ln\det C^{1/2},\qquad H[Q] = \tfrac{N^2}2(1 + \ln 2\pi) + \tfrac{n_{\mathcal K}}2\ln s + \ln\det C^{1/2}.

:math:`\mathrm{KL}(Q\,\|\,\text{prior})` follows from the same determinant and :math:`\operatorname{tr}C`.
Every block ratio and :math:`\delta` is one number, so the trial keeps the task's symmetry (a token
permutation or a cyclic position shift applied to rows and columns maps it to itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from emergence.numerics.copy_head.logit_gauge import flat_direction_basis
from emergence.numerics.order_parameters import cyclic_shift

BLOCKS = ("tt", "tp", "pt", "pp")
"""The blocks of :math:`W_{QK}` by (query row type, key column type): t = token, p = position."""


@lru_cache(maxsize=8)
def visible_geometry(L: int, V: int) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal bases ``(flat (N^2, n_K), visible (N^2, N^2 - n_K))`` of :math:`\\mathcal K` and its complement."""
    bases = flat_direction_basis(V, L)
    flat = np.concatenate([bases["key_token"], bases["key_position"]], axis=1)
    values, vectors = np.linalg.eigh(np.eye((V + L) ** 2) - flat @ flat.T)
    return flat, vectors[:, values > 0.5]


def block_variances(L: int, V: int, ratios: dict[str, float], s: float) -> np.ndarray:
    """The product law's entrywise variances ``(N, N)``: :math:`s\\,t_b` per block, ``ratios["diag"]`` (if given) on the
    token-token diagonal."""
    variance = np.empty((V + L, V + L))
    variance[:V, :V], variance[:V, V:] = ratios["tt"], ratios["tp"]
    variance[V:, :V], variance[V:, V:] = ratios["pt"], ratios["pp"]
    if "diag" in ratios:
        variance[np.arange(V), np.arange(V)] = ratios["diag"]
    return s * variance


@dataclass(frozen=True)
class BlockTrial:
    """The block trial at ``g, delta, ratios`` (``{"tt", "tp", "pt", "pp"}`` and optionally ``"diag"``; module docstring)."""

    L: int
    V: int
    s: float
    g: float
    delta: float
    ratios: dict[str, float]

    @classmethod
    def gauge(cls, L: int, V: int, s: float, g: float, t_u: float, t_v: float) -> "BlockTrial":
        """The theory's gauge-correct trial at ``(g, t_u, t_v)`` (one ratio per key-column type, no diagonal mean)."""
        return cls(L, V, s, g, 0.0, {"tt": t_u, "tp": t_v, "pt": t_u, "pp": t_v})

    @cached_property
    def _parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
        """``(flat, visible, mean (N^2,), visible root C^{1/2} (Cholesky), ln det C^{1/2})``."""
        N = self.V + self.L
        flat, visible = visible_geometry(self.L, self.V)
        raw = np.zeros((N, N))
        raw[self.V:, self.V:] = self.g * (cyclic_shift(self.L) - 1.0 / self.L)
        raw[np.arange(self.V), np.arange(self.V)] = self.delta
        mean = visible @ (visible.T @ raw.ravel())
        root = np.linalg.cholesky(visible.T @ (block_variances(self.L, self.V, self.ratios, self.s).ravel()[:, None] * visible))
        return flat, visible, mean, root, float(np.log(np.diag(root)).sum())

    def mean(self) -> np.ndarray:
        """The trial's mean ``(N, N)``: :math:`\\mu_{\\rm raw}` projected on the visible directions."""
        N = self.V + self.L
        return self._parts[2].reshape(N, N)

    def entropy(self) -> float:
        """:math:`H[Q]` (module docstring), exact."""
        n_flat = visible_geometry(self.L, self.V)[0].shape[1]
        N2 = (self.V + self.L) ** 2
        return 0.5 * N2 * (1 + np.log(2 * np.pi)) + 0.5 * n_flat * np.log(self.s) + self._parts[4]

    def kl_from_prior(self) -> float:
        r""":math:`\mathrm{KL}(Q\,\|\,\mathcal N(0, sI)) = \tfrac12[(\operatorname{tr}\Sigma + |\mu|^2)/s - N^2 - \ln\det(\Sigma/s)]`, exact."""
        flat, _, mean, root, half_log_det = self._parts
        n_flat, N2 = flat.shape[1], flat.shape[0]
        trace = self.s * n_flat + float((root**2).sum())
        return 0.5 * ((trace + float(mean @ mean)) / self.s - N2 - n_flat * np.log(self.s) - 2 * half_log_det
                      + N2 * np.log(self.s))

    def sample(self, standard: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Draws ``(n, N, N)`` from standard normals ``standard (n, N^2)`` (the first :math:`n_{\\mathcal K}` columns
        drive the flat part) and :math:`\\ln Q` of each, ``(n,)``.  Fixed ``standard`` gives common random numbers."""
        flat, visible, mean, root, half_log_det = self._parts
        n_flat, N2 = flat.shape[1], flat.shape[0]
        theta = mean + np.sqrt(self.s) * standard[:, :n_flat] @ flat.T + standard[:, n_flat:] @ (visible @ root).T
        log_q = -0.5 * (standard**2).sum(1) - 0.5 * N2 * np.log(2 * np.pi) - 0.5 * n_flat * np.log(self.s) - half_log_det
        return theta.reshape(len(standard), self.V + self.L, self.V + self.L), log_q

    def log_density(self, theta: np.ndarray) -> np.ndarray:
        """:math:`\\ln Q` at ``theta (n, N, N)``, ``(n,)`` (inverts :meth:`sample`)."""
        flat, visible, mean, root, _ = self._parts
        centred = theta.reshape(len(theta), -1) - mean
        standard = np.concatenate([centred @ flat / np.sqrt(self.s),
                                   np.linalg.solve(root, visible.T @ centred.T).T], axis=1)
        return self.sample(standard)[1]


__all__ = ["BLOCKS", "BlockTrial", "block_variances", "visible_geometry"]
