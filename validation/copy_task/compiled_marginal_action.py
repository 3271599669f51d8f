r"""Compiled (Numba) loops for softmax model T's readout-marginal action, :math:`a_G`, and their derived gradient.

The math is in :mod:`~emergence.validation.copy_task.softmax_marginal_action`; here each of its two passes
is one loop over the queries :math:`(r, \mu, \ell)` of a group of runs that builds no per-sequence ``L x L``
array (the tensor paths materialise several).  A sequence's tokens become its one-hot key rows
``keys[v, k]`` :math:`= [x_k = v]` once, so the loops over the keys run contiguously and vectorise instead of
scattering by token.

* :func:`forward_pass`: per query, the key sums
  :math:`K_v = \sum_{\ell'} e^{W_{tp}}[x_\ell, \ell']\, e^{W_{pp}}[\ell, \ell']\,[x_{\ell'} = v]`
  (:math:`VL` multiply-adds), :math:`\Phi_{\ell v} = e_a[v] K_v / Z`, :math:`A_{\ell,\ell-1}`; it accumulates
  :math:`D` and :math:`\sum A_{\ell,\ell-1}` per run (the caller takes :math:`C = \sum\Phi^\top\Phi` and
  :math:`B = \sum\Phi^\top Y` by batched matrix products of the saved design).
* :func:`backward_pass`: per query, :math:`\bar\Phi`, :math:`s`, :math:`Q`, :math:`H`, and the key part of
  :math:`\bar G` summed over the run's sequences by query position and token; the tables multiply that sum
  once per run (``L x V x L`` products, not one per query).

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
    """(flops, bytes) per query of one forward and backward of the loops and the two batched products, a model
    (not a count): forward :math:`2VL + 4V^2 + 7V` flops (key sums against the one-hot key rows, softmax,
    :math:`C` and :math:`B`), backward :math:`4V^2 + 10V + 2VL + L` (the key part summed by query position and
    token); :math:`48V + 48` bytes (the saved design written once and read twice, normaliser and
    :math:`A_{\\ell,\\ell-1}` written once and read once, targets read three times, tokens by both passes)."""
    return 2 * V * L + 4 * V * V + 7 * V + 4 * V * V + 10 * V + 2 * V * L + L, 48 * V + 48


def compiled_action_available() -> bool:
    """Whether Numba is installed and the compiled action is not switched off by the environment."""
    if os.environ.get(GRADIENT_ENVIRONMENT, "").lower() == "autograd":
        return False
    return importlib.util.find_spec("numba") is not None


def kernels(V: int):
    """The two loops for vocabulary ``V``, compiled on first use with ``V`` a constant (its loops unrolled);
    returns ``(forward_pass, backward_pass)``.  Numba caches the machine code on disk (``cache=True``, keyed by the
    source and ``V``), so a fresh worker process loads the loops in under a second instead of compiling them again
    (15 s on the quiet development machine, 54 s at load 6)."""
    if V in _kernels:
        return _kernels[V]
    import numba
    import numpy as np

    @numba.njit(nogil=True, error_model="numpy", fastmath={"reassoc", "contract"}, cache=True)
    def forward_pass(runs, tokens, targets, by_key_token, by_key_position, design, normaliser, previous, D,
                     previous_sum):
        """Fill ``design (R_g, P, L, V)``, ``normaliser`` and ``previous (R_g, P, L)`` of the group's ``runs`` and add
        their ``D`` and ``previous_sum (R,)``; the query tables of all runs ``by_key_token[r, u, i, v]`` :math:`= e_a[v]`
        and ``by_key_position[r, u, i, k]`` :math:`= e_b[k]` (query position i, key position k).  The key sums
        :math:`K_v` run over all keys against the sequence's one-hot rows ``keys[v, k]`` (contiguous, vectorised)."""
        R, P, L = tokens.shape
        keys = np.empty((V, L), dtype=design.dtype)  # keys[v, k] = [x_k = v]
        for g in range(R):
            r = runs[g]
            squares, previous_total = 0.0, 0.0
            for m in range(P):
                x = tokens[g, m]
                for v in range(V):
                    for k in range(L):
                        keys[v, k] = 1.0 if x[k] == v else 0.0
                for i in range(L):
                    u = x[i]
                    token_weights, weights = by_key_token[r, u, i], by_key_position[r, u, i]
                    phi, y = design[g, m, i], targets[g, m, i]
                    total = 0.0
                    for v in range(V):
                        key_sum = 0.0
                        for k in range(L):
                            key_sum += weights[k] * keys[v, k]
                        phi[v] = token_weights[v] * key_sum
                        total += phi[v]
                        squares += y[v] * y[v]
                    inverse = 1.0 / total
                    for v in range(V):
                        phi[v] *= inverse
                    normaliser[g, m, i] = total
                    previous[g, m, i] = token_weights[x[i - 1]] * weights[i - 1] * inverse
                    previous_total += previous[g, m, i]
            D[r] += squares
            previous_sum[r] += previous_total

    @numba.njit(nogil=True, error_model="numpy", fastmath={"reassoc", "contract"}, cache=True)
    def backward_pass(runs, tokens, targets, by_key_token, by_key_position, design, normaliser, previous, of_design,
                      of_targets, action_gradient, previous_gradient, gradient):
        """Add :math:`\\bar W` of the group's ``runs`` to ``gradient (R, V+L, V+L)``, from
        :math:`\\bar\\Phi = \\bar S(\\Phi\\,` ``of_design`` :math:`- Y` ``of_targets`` :math:`)` (``(R, V, V)`` each,
        ``action_gradient`` :math:`\\bar S` ``(R,)``) and :math:`\\bar p` ``previous_gradient (R,)``.
        A run's query terms are summed by query position and token before they reach :math:`\\bar W`:
        ``by_query[i, u]`` holds the sums over the sequences with :math:`x_i = u` of :math:`Q_i` (columns ``:V``)
        and of the key part :math:`H_i[x_k]` of :math:`\\bar G` (columns ``V + k``); once per run, rows ``u`` and
        ``V + i`` of :math:`\\bar W` gain the first and ``by_key_position[r, u, i, k]`` times the second."""
        R, P, L = tokens.shape
        keys = np.empty((V, L), dtype=design.dtype)  # keys[v, k] = [x_k = v]
        phi_gradient, centred = np.empty(V, dtype=design.dtype), np.empty(V, dtype=design.dtype)
        by_query = np.empty((L, V, V + L), dtype=design.dtype)  # [i, u]: Q's row, then the key part of G-bar
        run_gradient = np.empty((V + L, V + L), dtype=design.dtype)
        for g in range(R):
            r = runs[g]
            of_phi, of_y = action_gradient[r] * of_design[r], action_gradient[r] * of_targets[r]
            run_gradient[...] = 0.0
            by_query[...] = 0.0
            for m in range(P):
                x = tokens[g, m]
                for v in range(V):
                    for k in range(L):
                        keys[v, k] = 1.0 if x[k] == v else 0.0
                for i in range(L):
                    u = x[i]
                    token_weights = by_key_token[r, u, i]
                    phi, y = design[g, m, i], targets[g, m, i]
                    weighted_previous = previous_gradient[r] * previous[g, m, i]
                    projected = weighted_previous
                    for v in range(V):
                        total = 0.0
                        for w in range(V):
                            total += phi[w] * of_phi[w, v] - y[w] * of_y[w, v]
                        phi_gradient[v] = total
                        projected += phi[v] * total
                    scale = 1.0 / normaliser[g, m, i]
                    summed = by_query[i, u]
                    for v in range(V):
                        difference = phi_gradient[v] - projected
                        summed[v] += phi[v] * difference  # Q
                        centred[v] = difference * token_weights[v] * scale  # H
                    summed[x[i - 1]] += weighted_previous
                    last = V + (i - 1 if i > 0 else L - 1)
                    run_gradient[u, last] += weighted_previous
                    run_gradient[V + i, last] += weighted_previous
                    for k in range(L):
                        at_key = 0.0
                        for v in range(V):
                            at_key += centred[v] * keys[v, k]
                        summed[V + k] += at_key
            for i in range(L):
                for u in range(V):
                    weights, summed = by_key_position[r, u, i], by_query[i, u]
                    by_token, by_position = run_gradient[u], run_gradient[V + i]
                    for v in range(V):
                        by_token[v] += summed[v]
                        by_position[v] += summed[v]
                    for k in range(L):
                        entry = weights[k] * summed[V + k]
                        by_token[V + k] += entry
                        by_position[V + k] += entry
            gradient[r] += run_gradient

    _kernels[V] = (forward_pass, backward_pass)
    return _kernels[V]
