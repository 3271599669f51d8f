r"""Compiled (Numba) loops for softmax model T's readout-marginal action, :math:`a_G`, and their derived gradient.

The math is in :mod:`~emergence.validation.copy_task.softmax_marginal_action`; here each of its two passes
is one loop over the queries :math:`(r, \mu, \ell)` of a group of runs that keeps a query's key sums
in registers and builds no per-sequence ``L x L`` array (the tensor paths materialise several).

* :func:`forward_pass`: per query, :math:`K_v = \sum_{\ell': x_{\ell'} = v} e^{W_{tp}}[x_\ell, \ell']\, e^{W_{pp}}[\ell, \ell']`
  (:math:`L` multiply-adds), :math:`\Phi_{\ell v} = e_a[v] K_v / Z`, :math:`A_{\ell,\ell-1}`; it accumulates
  :math:`C = \sum\Phi^\top\Phi`, :math:`B = \sum\Phi^\top Y` and :math:`\sum A_{\ell,\ell-1}` per run.
* :func:`backward_pass`: per query, :math:`\bar\Phi`, :math:`s`, :math:`Q`, :math:`H`, and the
  :math:`L` entries of :math:`\bar G` added straight into the four blocks of :math:`\bar W`.

Numba is the optional extra ``fast``; without it (or on a GPU, or with
``EMERGENCE_MARGINAL_GRADIENT=autograd``) :func:`compiled_action_available` is False and the models use the
autograd path.
"""

from __future__ import annotations

import importlib.util
import os

GRADIENT_ENVIRONMENT = "EMERGENCE_MARGINAL_GRADIENT"
"""Environment variable: ``autograd`` forces the autograd path of softmax model T's marginal action."""

_kernels: dict = {}


def work_per_query(L: int, V: int) -> tuple[int, int]:
    """(flops, bytes) per query of one forward and backward of the loops, a model (not a count): forward
    :math:`L + 4V^2 + 7V` flops (key sums by the keys' tokens, softmax, the readout statistics), backward
    :math:`4V^2 + 10V + 5L`;
    :math:`32V + 48` bytes (the saved design, normaliser and :math:`A_{\\ell,\\ell-1}` written once and read once,
    targets and tokens read by both passes)."""
    return L + 4 * V * V + 7 * V + 4 * V * V + 10 * V + 5 * L, 32 * V + 48


def compiled_action_available() -> bool:
    """Whether Numba is installed and the compiled action is not switched off by the environment."""
    if os.environ.get(GRADIENT_ENVIRONMENT, "").lower() == "autograd":
        return False
    return importlib.util.find_spec("numba") is not None


def kernels(V: int):
    """The two loops for vocabulary ``V``, compiled on first use with ``V`` a constant (its loops unrolled);
    returns ``(forward_pass, backward_pass)``."""
    if V in _kernels:
        return _kernels[V]
    import numba
    import numpy as np

    @numba.njit(nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})
    def forward_pass(runs, tokens, targets, by_key_token, by_key_position, design, normaliser, previous, C, B, D,
                     previous_sum):
        """Fill ``design (R_g, P, L, V)``, ``normaliser`` and ``previous (R_g, P, L)`` of the group's ``runs``, and add
        their ``C, B (R, V, V)``, ``D`` and ``previous_sum (R,)``; the query tables of all runs
        ``by_key_token[r, u, i, v]`` :math:`= e_a[v]` and ``by_key_position[r, u, i, k]`` :math:`= e_b[k]` (query position i, key position k)."""
        R, P, L = tokens.shape
        summed = np.empty(V, dtype=design.dtype)  # the position weights summed over the keys holding each token
        for g in range(R):
            r = runs[g]
            for m in range(P):
                x = tokens[g, m]
                for i in range(L):
                    u = x[i]
                    token_weights, weights = by_key_token[r, u, i], by_key_position[r, u, i]
                    phi = design[g, m, i]
                    for v in range(V):
                        summed[v] = 0.0
                    for k in range(L):
                        summed[x[k]] += weights[k]
                    total = 0.0
                    for v in range(V):
                        phi[v] = token_weights[v] * summed[v]
                        total += phi[v]
                    for v in range(V):
                        phi[v] /= total
                    before = x[i - 1]
                    normaliser[g, m, i] = total
                    previous[g, m, i] = token_weights[before] * weights[i - 1] / total
            phi, y = design[g].reshape(-1, V), targets[g].reshape(-1, V)
            C[r] += phi.T @ phi
            B[r] += phi.T @ y
            D[r] += np.sum(y * y)
            previous_sum[r] += np.sum(previous[g])

    @numba.njit(nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})
    def backward_pass(runs, tokens, targets, by_key_token, by_key_position, design, normaliser, previous, of_design,
                      of_targets, action_gradient, previous_gradient, gradient):
        """Add :math:`\\bar W` of the group's ``runs`` to ``gradient (R, V+L, V+L)``, from
        :math:`\\bar\\Phi = \\bar S(\\Phi\\,` ``of_design`` :math:`- Y` ``of_targets`` :math:`)` (``(R, V, V)`` each,
        ``action_gradient`` :math:`\\bar S` ``(R,)``) and :math:`\\bar p` ``previous_gradient (R,)``."""
        R, P, L = tokens.shape
        centred = np.empty(V, dtype=design.dtype)
        phi_gradient = np.empty(V, dtype=design.dtype)
        at_key = np.empty(L, dtype=design.dtype)
        for g in range(R):
            r = runs[g]
            for m in range(P):
                x = tokens[g, m]
                for i in range(L):
                    u = x[i]
                    token_weights, weights = by_key_token[r, u, i], by_key_position[r, u, i]
                    phi, y = design[g, m, i], targets[g, m, i]
                    weighted_previous = previous_gradient[r] * previous[g, m, i]
                    projected = weighted_previous
                    for v in range(V):
                        total = 0.0
                        for w in range(V):
                            total += phi[w] * of_design[r, w, v] - y[w] * of_targets[r, w, v]
                        phi_gradient[v] = action_gradient[r] * total
                        projected += phi[v] * phi_gradient[v]
                    scale = 1.0 / normaliser[g, m, i]
                    for v in range(V):
                        difference = phi_gradient[v] - projected
                        token_part = phi[v] * difference
                        gradient[r, u, v] += token_part
                        gradient[r, V + i, v] += token_part
                        centred[v] = difference * token_weights[v] * scale  # H
                    before = x[i - 1]
                    gradient[r, u, before] += weighted_previous
                    gradient[r, V + i, before] += weighted_previous
                    for k in range(L):
                        at_key[k] = centred[x[k]]
                    by_token, by_position = gradient[r, u, V:], gradient[r, V + i, V:]
                    for k in range(L):
                        entry = weights[k] * at_key[k]
                        by_token[k] += entry
                        by_position[k] += entry
                    by_token[i - 1] += weighted_previous
                    by_position[i - 1] += weighted_previous

    _kernels[V] = (forward_pass, backward_pass)
    return _kernels[V]
