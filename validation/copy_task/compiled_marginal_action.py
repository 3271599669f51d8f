r"""Compiled (Numba) loops for softmax model T's readout-marginal action, :math:`a_G`, and their derived gradient.

The math is in :mod:`~emergence.validation.copy_task.softmax_marginal_action`; here each of its two passes
is one loop over the queries :math:`(r, \mu, \ell)` of a group of runs that builds no per-sequence ``L x L``
array (the tensor paths materialise several).  A sequence's tokens become its one-hot key rows
``keys[v, k]`` :math:`= [x_k = v]` once, so the loops over the keys run contiguously and vectorise instead of
scattering by token (the forward scatters where that is measured faster: :func:`scatters_keys`).

* :func:`forward_pass`: per query, the key sums
  :math:`K_v = \sum_{\ell'} e^{W_{tp}}[x_\ell, \ell']\, e^{W_{pp}}[\ell, \ell']\,[x_{\ell'} = v]`
  (:math:`VL` multiply-adds, or :math:`L` scattered additions), :math:`\Phi_{\ell v} = e_a[v] K_v / Z`,
  :math:`A_{\ell,\ell-1}`; it accumulates :math:`D` and :math:`\sum A_{\ell,\ell-1}` per run (the caller takes
  :math:`C = \sum\Phi^\top\Phi` and :math:`B = \sum\Phi^\top Y` by batched matrix products of the saved design).
* :func:`readout_head`: per run, the :math:`V\times V` Cholesky factor of :math:`M = I + \varepsilon C`, the action
  and the head's backward coefficients, in one call (at :math:`V = 4` the batched LAPACK calls and the tensor
  operations they replace cost more than the loops of a small batch).
* :func:`backward_pass`: per query, :math:`\bar\Phi`, :math:`s`, :math:`Q`, :math:`H`, and the key part of
  :math:`\bar G` (:math:`H X^\top`: each key's token picks its entry of :math:`H`, or the one-hot rows where the
  forward uses them) summed over the run's sequences by query position and token; the tables multiply that sum
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


def work_per_query(L: int, V: int, token_targets: bool = True) -> tuple[int, int]:
    """(flops, bytes) per query of one forward and backward of the loops and the two batched products, a model
    (not a count): forward :math:`k + 4V^2 + 7V` flops (key sums, softmax, :math:`C` and :math:`B`), backward
    :math:`4V^2 + 10V + k + L` (the key part summed by query position and token), with :math:`k = 2VL` against
    the one-hot key rows or :math:`k = L` scattered (:func:`scatters_keys`); :math:`48V + 48` bytes (the saved
    design written once and read twice, normaliser and :math:`A_{\\ell,\\ell-1}` written once and read once,
    targets read three times, tokens by both passes).  With ``token_targets`` (raw targets, :func:`kernels`)
    the backward's :math:`Y G_Y` is a row, :math:`V` flops instead of :math:`2V^2`, and the targets are read
    once (by the product for :math:`B`) and their tokens by both passes: :math:`32V + 64` bytes.  The per-run
    head is not counted."""
    keys = L if scatters_keys(L, V) else 2 * V * L
    flops = keys + 4 * V * V + 7 * V + 4 * V * V + 10 * V + keys + L
    return (flops - 2 * V * V + V, 32 * V + 64) if token_targets else (flops, 48 * V + 48)


def compiled_action_available() -> bool:
    """Whether Numba is installed and the compiled action is not switched off by the environment."""
    if os.environ.get(GRADIENT_ENVIRONMENT, "").lower() == "autograd":
        return False
    return importlib.util.find_spec("numba") is not None


def scatters_keys(L: int, V: int) -> bool:
    r"""Whether the forward builds the key sums :math:`K_v` by scattering each key's weight to its token's sum
    (:math:`L` dependent additions) rather than by dot products with the one-hot key rows (:math:`VL`
    vectorised multiply-adds).  Measured (thread time, one core, 2-core Xeon, 2026-12-06), one-hot time over
    scatter time: 1.19 at L = 8, V = 4; 0.84, 0.92, 0.65 at L = 16, 24, 32, V = 4; 1.43 at L = 16, V = 8;
    1.22 at L = 32, V = 8.  So: scatter where :math:`L \le 2V` or :math:`V \ge 8`.  The backward follows the same
    choice for the key part of :math:`\bar G` (gathered: 1.00, 1.08, 1.03 times faster at L = 8, V = 4; L = 16, 32,
    V = 8)."""
    return L <= 2 * V or V >= 8


def kernels(V: int, scatter_keys: bool = False, token_targets: bool = False):
    """The two loops for vocabulary ``V``, compiled on first use with ``V``, ``scatter_keys``
    (:func:`scatters_keys`) and ``token_targets`` constants (the loops over ``V`` unrolled, the other branches
    removed); returns ``(forward_pass, backward_pass, readout_head)``.  With ``token_targets`` the loops read each
    query's target as a token (``target_tokens``, -1 for a zero row:
    :meth:`~emergence.validation.copy_task.data.CopyTaskBatch.target_tokens`) instead of its row of ``targets``:
    :math:`\\|y\\|^2` is 1 or 0 and :math:`y\\,G_Y` is row :math:`t` of :math:`G_Y`, so neither pass streams the
    ``(R_g, P, L, V)`` targets (measured 2 ms of 14 at L = 32, V = 8, 64 runs; thread time, 2026-12-06).  Numba caches the machine code on disk (``cache=True``,
    keyed by the source and the closure's constants), so a fresh worker process loads the loops in under a second
    instead of compiling them again (15 s on the quiet development machine, 54 s at load 6)."""
    if (V, scatter_keys, token_targets) in _kernels:
        return _kernels[V, scatter_keys, token_targets]
    import numba
    import numpy as np

    @numba.njit(nogil=True, cache=True)
    def one_hot_rows(x, keys):
        """``keys[v, k]`` :math:`= [x_k = v]` for one sequence's tokens ``x (L,)``."""
        for v in range(V):
            for k in range(x.shape[0]):
                keys[v, k] = 1.0 if x[k] == v else 0.0

    @numba.njit(nogil=True, error_model="numpy", fastmath={"reassoc", "contract"}, cache=True, inline="always")
    def design_gradient_row(phi, targets, target_tokens, g, m, i, of_phi, of_y, phi_gradient):
        """Fill ``phi_gradient (V,)`` with query ``(g, m, i)``'s row of :math:`\\Phi` ``of_phi`` :math:`- Y` ``of_y``
        (:math:`\\bar\\Phi / \\bar S`): a row of ``of_phi`` at a time (vectorised over v), less row :math:`t` of
        ``of_y`` with ``token_targets``, else less the target row's combination of the rows of ``of_y``."""
        phi_gradient[:] = 0.0
        if token_targets:
            for w in range(V):
                phi_w = phi[w]
                for v in range(V):
                    phi_gradient[v] += phi_w * of_phi[w, v]
            t = target_tokens[g, m, i]
            if t >= 0:
                for v in range(V):
                    phi_gradient[v] -= of_y[t, v]
        else:
            y = targets[g, m, i]
            for w in range(V):
                phi_w, y_w = phi[w], y[w]
                for v in range(V):
                    phi_gradient[v] += phi_w * of_phi[w, v] - y_w * of_y[w, v]

    @numba.njit(nogil=True, error_model="numpy", fastmath={"reassoc", "contract"}, cache=True)
    def forward_pass(runs, tokens, targets, target_tokens, by_key_token, by_key_position, design, normaliser, previous,
                     D, previous_sum):
        """Fill ``design (R_g, P, L, V)``, ``normaliser`` and ``previous (R_g, P, L)`` of the group's ``runs`` and add
        their ``D`` and ``previous_sum (R,)`` (the targets ``targets (R_g, P, L, V)``, or ``target_tokens (R_g, P, L)``
        with ``token_targets``); the query tables of all runs ``by_key_token[r, u, i, v]`` :math:`= e_a[v]`
        and ``by_key_position[r, u, i, k]`` :math:`= e_b[k]` (query position i, key position k).  The key sums
        :math:`K_v` run over all keys: each key's weight added to its token's sum (``scatter_keys``), or dot
        products with the sequence's one-hot rows ``keys[v, k]`` (contiguous, vectorised)."""
        R, P, L = tokens.shape
        keys = np.empty((V, L), dtype=design.dtype)  # keys[v, k] = [x_k = v]
        key_sums = np.empty(V, dtype=design.dtype)
        for g in range(R):
            r = runs[g]
            squares, previous_total = 0.0, 0.0
            for m in range(P):
                x = tokens[g, m]
                if not scatter_keys:
                    one_hot_rows(x, keys)
                for i in range(L):
                    u = x[i]
                    token_weights, weights = by_key_token[r, u, i], by_key_position[r, u, i]
                    phi = design[g, m, i]
                    if scatter_keys:
                        for v in range(V):
                            key_sums[v] = 0.0
                        for k in range(L):
                            key_sums[x[k]] += weights[k]
                    else:
                        for v in range(V):
                            key_sum = 0.0
                            for k in range(L):
                                key_sum += weights[k] * keys[v, k]
                            key_sums[v] = key_sum
                    total = 0.0
                    for v in range(V):
                        phi[v] = token_weights[v] * key_sums[v]
                        total += phi[v]
                    if token_targets:
                        squares += 1.0 if target_tokens[g, m, i] >= 0 else 0.0
                    else:
                        y = targets[g, m, i]
                        for v in range(V):
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
    def backward_pass(runs, tokens, targets, target_tokens, by_key_token, by_key_position, design, normaliser, previous,
                      of_design, of_targets, action_gradient, previous_gradient, gradient):
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
                if not scatter_keys:
                    one_hot_rows(x, keys)
                for i in range(L):
                    u = x[i]
                    token_weights = by_key_token[r, u, i]
                    phi = design[g, m, i]
                    weighted_previous = previous_gradient[r] * previous[g, m, i]
                    design_gradient_row(phi, targets, target_tokens, g, m, i, of_phi, of_y, phi_gradient)
                    projected = weighted_previous
                    for v in range(V):
                        projected += phi[v] * phi_gradient[v]
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
                    if scatter_keys:  # H X^T: each key's token picks its entry of H
                        for k in range(L):
                            summed[V + k] += centred[x[k]]
                    else:
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

    @numba.njit(nogil=True, error_model="numpy", cache=True)
    def readout_head(C, B, D, beta, epsilon, action, of_design, of_targets):
        r"""The marginal head of every run from ``C, B (R, V, V)`` and ``D (R,)``: with the Cholesky factor
        :math:`F` of :math:`M = I + \varepsilon C` (its lower triangle), :math:`M^{-1} = F^{-\top}F^{-1}`, and
        :math:`\hat W = \varepsilon M^{-1}B`, fill ``action (R,)`` :math:`= \tfrac{\beta}{2}(D - \langle B, \hat W\rangle)
        + V\sum_j \ln F_{jj}`, ``of_design`` :math:`= \beta\hat W\hat W^\top + V\varepsilon M^{-1}` and ``of_targets``
        :math:`= \beta\hat W^\top`.  A run whose :math:`M` is not positive definite (non-finite logits) gets NaN."""
        factor, inverse = np.empty((V, V), dtype=C.dtype), np.empty((V, V), dtype=C.dtype)
        M_inverse, readout = np.empty((V, V), dtype=C.dtype), np.empty((V, V), dtype=C.dtype)
        for r in range(C.shape[0]):
            factor[...] = 0.0
            inverse[...] = 0.0
            definite = True
            for j in range(V):  # Cholesky, column by column
                pivot = 1.0 + epsilon * C[r, j, j]
                for k in range(j):
                    pivot -= factor[j, k] * factor[j, k]
                if not pivot > 0.0:
                    definite = False
                    break
                factor[j, j] = np.sqrt(pivot)
                for i in range(j + 1, V):
                    entry = epsilon * C[r, i, j]
                    for k in range(j):
                        entry -= factor[i, k] * factor[j, k]
                    factor[i, j] = entry / factor[j, j]
            if not definite:
                action[r] = np.nan
                of_design[r] = np.nan
                of_targets[r] = np.nan
                continue
            for j in range(V):  # F^{-1}, lower triangular
                inverse[j, j] = 1.0 / factor[j, j]
                for i in range(j + 1, V):
                    entry = 0.0
                    for k in range(j, i):
                        entry -= factor[i, k] * inverse[k, j]
                    inverse[i, j] = entry / factor[i, i]
            for a in range(V):  # M^{-1} = F^{-T} F^{-1}
                for b in range(V):
                    entry = 0.0
                    for k in range(max(a, b), V):
                        entry += inverse[k, a] * inverse[k, b]
                    M_inverse[a, b] = entry
            log_determinant, fit = 0.0, 0.0
            for a in range(V):
                log_determinant += np.log(factor[a, a])
                for b in range(V):
                    entry = 0.0
                    for k in range(V):
                        entry += M_inverse[a, k] * B[r, k, b]
                    readout[a, b] = epsilon * entry
                    fit += B[r, a, b] * readout[a, b]
            action[r] = 0.5 * beta * (D[r] - fit) + V * log_determinant
            for a in range(V):
                for b in range(V):
                    entry = 0.0
                    for k in range(V):
                        entry += readout[a, k] * readout[b, k]
                    of_design[r, a, b] = beta * entry + V * epsilon * M_inverse[a, b]
                    of_targets[r, a, b] = beta * readout[b, a]

    _kernels[V, scatter_keys, token_targets] = (forward_pass, backward_pass, readout_head)
    return _kernels[V, scatter_keys, token_targets]
