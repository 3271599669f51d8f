r"""Softmax model T's readout-marginal action and previous-token attention, with a hand-derived backward.

The umbrella sampler (:mod:`~emergence.validation.copy_task.free_energy`) and marginal MAP training need,
at every step, the data part of the readout-marginal action and :math:`a_G` of ``R`` runs,

.. math::
    S_r = \frac{\beta}{2}\big[D - \varepsilon\operatorname{tr}(B^\top M^{-1}B)\big] + \frac{V}{2}\ln\det M,
    \quad M = I + \varepsilon C, \qquad a_G = \frac{1}{PL}\sum_\mu\sum_\ell A^\mu_{\ell,\ell-1},

with :math:`C = \sum_\mu\Phi^{\mu\top}\Phi^\mu`, :math:`B = \sum_\mu\Phi^{\mu\top}Y^\mu`, the design
:math:`\Phi^\mu = A^\mu X^\mu`, and :math:`A^\mu = \operatorname{softmax}_{row}(G^\mu)`,
:math:`G^\mu_{\ell\ell'} = W_{tt}[x_\ell, x_{\ell'}] + W_{tp}[x_\ell, \ell'] + W_{pt}[\ell, x_{\ell'}] + W_{pp}[\ell, \ell']`
(:mod:`~emergence.validation.copy_task.token_position_logits`).

**Forward.** The exponentials factorise block by block (each block's exponential taken relative to its
row maximum, which cancels in every softmax row): for the query :math:`(\ell, u = x_\ell)`,

.. math::
    e_a[v] = e^{W_{tt}}[u, v]\, e^{W_{pt}}[\ell, v], \qquad e_b[\ell'] = e^{W_{tp}}[u, \ell']\, e^{W_{pp}}[\ell, \ell'],

so :math:`A_{\ell\ell'} = e_a[x_{\ell'}]\, e_b[\ell']/Z_\ell`, :math:`\Phi_{\ell v} = e_a[v] K_v / Z_\ell` with the key sums
:math:`K_v = \sum_{\ell'} X_{\ell' v}\, e_b[\ell']` and :math:`Z_\ell = \sum_v e_a[v] K_v`, and
:math:`A_{\ell,\ell-1} = e_a[x_{\ell-1}]\, e_b[\ell-1] / Z_\ell`: :math:`V(L + 1)` multiply-adds per query, no
per-sequence ``L x L`` array (:mod:`~emergence.validation.copy_task.compiled_marginal_action` runs the loops).

**Backward (derived, checked against autograd in tests/test_softmax_marginal_action.py).** With the
posterior-mean readout :math:`\hat W = \varepsilon M^{-1}B`,
:math:`\partial S/\partial B = -\beta\hat W` and :math:`\partial S/\partial C = \tfrac{\beta}{2}\hat W\hat W^\top + \tfrac{V\varepsilon}{2}M^{-1}`, so

.. math::
    \bar\Phi = \bar S\,\big[\Phi(\beta\hat W\hat W^\top + V\varepsilon M^{-1}) - \beta\, Y\hat W^\top\big],
    \qquad \bar p = \bar a_G / (PL)

for the incoming gradients :math:`\bar S, \bar a_G` (per run).  The softmax backward
:math:`\bar G = A\circ(\bar A - s)`, :math:`\bar A_{\ell\ell'} = \bar\Phi_{\ell, x_{\ell'}} + \bar p\,\delta_{\ell', \ell-1}`,
:math:`s_\ell = \sum_v \Phi_{\ell v}\bar\Phi_{\ell v} + \bar p\, A_{\ell,\ell-1}`, contracted with the keys' one-hot
rows, gives the two query-side gradients

.. math::
    Q = \Phi\circ(\bar\Phi - s) + \bar p\, A_{\ell,\ell-1} X_{\ell-1}, \qquad
    \bar G = e_b \circ (H X^\top) + \bar p\, A_{\ell,\ell-1}\,\delta_{\ell',\ell-1}, \quad H = e_a\circ(\bar\Phi - s)/Z,

and, since each logit block is read at the query's token or position only,
:math:`\bar W_{tt} = \sum_\mu X^\top Q`, :math:`\bar W_{pt} = \sum_\mu Q`, :math:`\bar W_{tp} = \sum_\mu X^\top\bar G`,
:math:`\bar W_{pp} = \sum_\mu \bar G`: each query adds its :math:`V + L` entries to two rows of each block.

Shapes: weights ``(R, V + L, V + L)``; the runs of one count :math:`P` are one group ``(R_g, P, L, V)``
(:meth:`~emergence.validation.copy_task.data.CopyTaskBatch.run_major_groups` without cache blocks).
"""

from __future__ import annotations

import numpy as np
import torch

from emergence.validation.copy_task.compiled_marginal_action import kernels, scatters_keys
from emergence.validation.copy_task.data import CopyTaskBatch, RunMajorGroup


def _row_exp(block: torch.Tensor) -> torch.Tensor:
    """``exp(block - row max)``: the row maximum cancels in every softmax row that reads the block (module docstring)."""
    return torch.exp(block - block.amax(-1, keepdim=True))


def _query_tables(W: torch.Tensor, V: int) -> list:
    r"""The query tables :math:`e_a` ``(R, V, L, V)`` and :math:`e_b` ``(R, V, L, L)`` of every query token and position,
    products of the row-relative exponentials of the blocks of ``W (R, V+L, V+L)``, as NumPy arrays."""
    ett, ept, etp, epp = (_row_exp(block) for block in (W[:, :V, :V], W[:, V:, :V], W[:, :V, V:], W[:, V:, V:]))
    return [(ett[:, :, None, :] * ept[:, None, :, :]).numpy(), (etp[:, :, None, :] * epp[:, None, :, :]).numpy()]


_NO_TARGET_TOKENS = np.empty((0, 0, 0), dtype=np.int64)
"""What the loops get for ``target_tokens`` where the batch's targets are not tokens (never read there)."""


def _group_data(group: RunMajorGroup) -> tuple:
    """The loops' data arguments of one group: ``runs, tokens, targets, target_tokens`` as NumPy arrays."""
    target_tokens = _NO_TARGET_TOKENS if group.target_tokens is None else group.target_tokens.numpy()
    return group.runs.numpy(), group.tokens.numpy(), group.targets.numpy(), target_tokens


class _CompiledPasses:
    """The compiled forward over a batch's groups, kept for the backward: ``C, B (R, V, V)``, ``D``, ``previous_sum (R,)``."""

    def __init__(self, weights: torch.Tensor, batch: CopyTaskBatch):
        R, V = weights.shape[0], batch.V
        L = weights.shape[-1] - V
        groups = batch.run_major_groups(cache_blocks=False)
        token_targets = groups[0].target_tokens is not None
        forward_pass, self.backward_pass, self.readout_head = kernels(V, scatters_keys(L, V), token_targets)
        self.shape, self.tables = weights.shape, _query_tables(weights.detach(), V)
        self.C, self.B = weights.new_zeros(R, V, V), weights.new_zeros(R, V, V)
        self.D, self.previous_sum = weights.new_zeros(R), weights.new_zeros(R)
        self.groups = []
        for group in groups:
            R_g, P, _, _ = group.one_hot.shape
            saved = (torch.empty(R_g, P, L, V, dtype=weights.dtype), torch.empty(R_g, P, L, dtype=weights.dtype),
                     torch.empty(R_g, P, L, dtype=weights.dtype))  # design, normaliser, previous
            forward_pass(*_group_data(group), *self.tables, *(t.numpy() for t in saved), self.D.numpy(),
                         self.previous_sum.numpy())
            design, targets = saved[0].reshape(R_g, P * L, V), group.targets.reshape(R_g, P * L, V)
            # C and B by batched products (about 3x cheaper than V x V sums inside the loops)
            self.C.index_add_(0, group.runs, design.transpose(1, 2) @ design)
            self.B.index_add_(0, group.runs, design.transpose(1, 2) @ targets)
            self.groups.append((group, saved))

    def weight_gradient(self, of_design, of_targets, design_weight, previous_weight) -> torch.Tensor:
        r""":math:`\bar W` ``(R, V+L, V+L)`` for :math:`\bar\Phi` = ``design_weight`` :math:`(\Phi\,` ``of_design``
        :math:`- Y` ``of_targets`` :math:`)` and :math:`\bar p` = ``previous_weight`` (each ``(R,)``)."""
        gradient = torch.zeros(self.shape, dtype=self.D.dtype)
        arguments = (of_design.contiguous().numpy(), of_targets.contiguous().numpy(),
                     design_weight.contiguous().numpy(), previous_weight.contiguous().numpy(), gradient.numpy())
        for group, saved in self.groups:
            self.backward_pass(*_group_data(group), *self.tables, *(t.numpy() for t in saved), *arguments)
        return gradient

    def head(self, beta: float, epsilon: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        r"""The action ``(R,)`` and the head's backward coefficients :math:`G_\Phi = \beta\hat W\hat W^\top +
        V\varepsilon M^{-1}` and :math:`G_Y = \beta\hat W^\top` ``(R, V, V)`` (:math:`\bar\Phi = \bar S\,(\Phi\,
        G_\Phi - Y G_Y)`), from :math:`C, B, D` by one compiled loop over the runs (NaN where :math:`M` is not
        positive definite)."""
        action, of_design, of_targets = torch.empty_like(self.D), torch.empty_like(self.C), torch.empty_like(self.C)
        self.readout_head(self.C.numpy(), self.B.numpy(), self.D.numpy(), beta, epsilon, action.numpy(),
                          of_design.numpy(), of_targets.numpy())
        return action, of_design, of_targets


class SoftmaxMarginalAction(torch.autograd.Function):
    r"""``(S, a_G)`` per run, each ``(R,)``, of the module docstring, differentiable in ``weights`` by the derived backward.

    ``apply(weights, batch, beta, prior_variance)``: ``S`` is the data part of the readout-marginal
    action (the logit prior :math:`\|\theta\|^2/2s` is not included), ``prior_variance`` the readout's
    :math:`\lambda`.  CPU tensors (float64 or float32); the loops are
    :mod:`~emergence.validation.copy_task.compiled_marginal_action`'s.
    """

    @staticmethod
    def forward(ctx, weights: torch.Tensor, batch: CopyTaskBatch, beta: float, prior_variance: float):
        passes = _CompiledPasses(weights, batch)
        action, *ctx.coefficients = passes.head(beta, beta * prior_variance)
        ctx.passes, ctx.counts = passes, batch.counts.to(weights.dtype) * (weights.shape[-1] - batch.V)
        return action, passes.previous_sum / ctx.counts

    @staticmethod
    def backward(ctx, action_gradient, previous_gradient):
        zeros = torch.zeros_like(ctx.counts)
        action_gradient = zeros if action_gradient is None else action_gradient
        per_previous = zeros if previous_gradient is None else previous_gradient / ctx.counts
        return ctx.passes.weight_gradient(*ctx.coefficients, action_gradient, per_previous), None, None, None


class SoftmaxSquaredErrors(torch.autograd.Function):
    r""":math:`\sum_\mu\|Y^\mu - \Phi^\mu W\|^2 = D - 2\langle W, B\rangle + \langle W, CW\rangle` per run ``(R,)``, the
    joint potential's data term, differentiable in ``weights`` and ``readout (R, V, V)``:
    :math:`\bar\Phi = \bar E\,(\Phi\, 2WW^\top - Y\, 2W^\top)`, :math:`\bar W = 2\bar E\,(CW - B)`.

    ``apply(weights, readout, batch)``.  From the statistics, so large terms cancel where the fit is
    close: float64 only (the residual-by-residual tensor path serves float32).
    """

    @staticmethod
    def forward(ctx, weights: torch.Tensor, readout: torch.Tensor, batch: CopyTaskBatch):
        passes = _CompiledPasses(weights, batch)
        ctx.passes, ctx.readout = passes, readout.detach()
        return passes.D - 2 * (readout * passes.B).sum(dim=(-2, -1)) + (readout * (passes.C @ readout)).sum(dim=(-2, -1))

    @staticmethod
    def backward(ctx, errors_gradient):
        W, passes = ctx.readout, ctx.passes
        weights_gradient = passes.weight_gradient(2 * W @ W.transpose(-1, -2), 2 * W.transpose(-1, -2), errors_gradient,
                                                  torch.zeros_like(errors_gradient))
        return weights_gradient, 2 * errors_gradient[:, None, None] * (passes.C @ W - passes.B), None
