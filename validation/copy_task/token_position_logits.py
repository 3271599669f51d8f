r"""Model T's attention logits: :math:`W_{QK} \in \mathbb{R}^{(V+L)\times(V+L)}` per run over token and position embeddings.

With :math:`z_\ell = x_\ell \oplus e_\ell` the logits of sequence :math:`\mu` are
:math:`G^\mu_{\ell\ell'} = z_\ell^\top W_{QK} z_{\ell'}`, i.e.

.. math::
    G^\mu_{\ell\ell'} = W_{tt}[x_\ell, x_{\ell'}] + W_{tp}[x_\ell, \ell'] + W_{pt}[\ell, x_{\ell'}] + W_{pp}[\ell, \ell'],

computed with batched matrix products on the data laid out run by run, ``(R_g, P_g, L, V)`` per group of
runs with equal :math:`P` (:meth:`~emergence.validation.copy_task.data.CopyTaskBatch.run_major_groups`).
Training never forms the attention matrices: the design :math:`\Phi^\mu = A^\mu X^\mu` and the
previous-token attention are read from tables indexed by the query's token and position
(:meth:`TokenPositionLogits.design`).
"""

from __future__ import annotations

import torch

from emergence.base.errors import EmergenceError
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import CopyTaskBatch, RunMajorGroup
from emergence.validation.copy_task.normalisation import attention_normalisation
from emergence.validation.copy_task.readout_head import ReadoutHead, add_design_statistics


BLOCKS: tuple[str, ...] = ("tt", "tp", "pt", "pp")
"""The blocks of :math:`W_{QK}`: query side then key side, ``t`` token, ``p`` position."""


def _at_query(table: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """``table[r, tokens[r, m, l], l, :]``, shape ``(R, P, L, n)``, for ``table (R, V, L, n)`` and ``tokens (R, P, L)``.

    One ``index_select`` over the flattened ``(r, u, l)`` rows: its backward is an ``index_add``,
    about twice as fast on a CPU as the ``index_put`` behind advanced indexing.
    """
    R, V, L, n = table.shape
    run = torch.arange(R, device=tokens.device)[:, None, None]
    rows = ((run * V + tokens) * L + torch.arange(L, device=tokens.device)).flatten()
    return table.reshape(R * V * L, n).index_select(0, rows).reshape(*tokens.shape, n)


class TokenPositionLogits(torch.nn.Module):
    """``weights (R, V + L, V + L)``: :math:`W_{QK}` of ``R`` model-T runs, blocks ``[[W_tt, W_tp], [W_pt, W_pp]]``."""

    def __init__(self, runs: int, L: int, V: int, convention: CopyTaskConvention, dtype=torch.float64, device="cpu"):
        super().__init__()
        self.L, self.V, self.convention = L, V, convention
        self.normalise = attention_normalisation(convention, L)
        self._design = {"softmax": self._softmax_design, "linear": self._linear_design}[convention.attention]
        self.weights = torch.nn.Parameter(torch.zeros(runs, V + L, V + L, dtype=dtype, device=device))

    def positional_block(self, theta: torch.Tensor) -> torch.Tensor:
        """:math:`W_{pp}` of one run's weights ``theta (V + L, V + L)``, ``(L, L)``."""
        return theta[self.V:, self.V:]

    def constant_block(self, theta: torch.Tensor) -> torch.Tensor:
        r""":math:`W_{tt}` ``(V, V)``: a constant :math:`W_{tt}` gives every logit that constant."""
        return theta[: self.V, : self.V]

    def block_slices(self, name: str) -> tuple[slice, slice]:
        """Rows and columns of block ``name`` (``tt``, ``tp``, ``pt`` or ``pp``) in the weights' last two axes."""
        if name not in BLOCKS:
            raise EmergenceError(f"unknown block {name!r}; choose from {', '.join(BLOCKS)}")
        token, position = slice(None, self.V), slice(self.V, None)
        return tuple(token if side == "t" else position for side in name)

    @torch.no_grad()
    def hold_blocks_at_zero(self, names: tuple[str, ...]) -> None:
        r"""Set the blocks ``names`` (e.g. ``("tt",)``: :math:`W_{tt}`) of every run to zero and keep them there: an
        ablation of model T (with ``("tt",)`` the attention sees token identity only through :math:`W_{tp}` and
        :math:`W_{pt}`), not the theory's model.

        A gradient hook zeroes their gradient (the prior's included), so Adam, whose step is
        :math:`m/(\sqrt{v}+\epsilon)` with the moments of zero gradients, leaves them at exactly zero;
        the other blocks train as before.  Call after :meth:`~emergence.validation.copy_task.models.CopyAttentionModel.initialise`.
        """
        mask = torch.ones_like(self.weights)
        for name in names:
            rows, columns = self.block_slices(name)
            self.weights[:, rows, columns] = 0.0
            mask[:, rows, columns] = 0.0
        self.weights.register_hook(lambda gradient: gradient * mask)

    def logits(self, batch: CopyTaskBatch) -> torch.Tensor:
        """Per sequence, in the batch's order, ``(N, L, L)``."""
        groups = batch.run_major_groups()
        rows = torch.cat([group.sequences.flatten() for group in groups])
        logits = torch.cat([self._group_logits(group).flatten(0, 1) for group in groups])
        position = torch.empty_like(rows)
        position[rows] = torch.arange(rows.shape[0], device=rows.device)
        return logits[position]

    def per_sequence(self, attention: torch.Tensor, batch: CopyTaskBatch) -> torch.Tensor:
        """The attention ``(N, L, L)`` is per sequence already."""
        return attention

    def run_average(self, values: torch.Tensor, batch: CopyTaskBatch) -> torch.Tensor:
        """Mean over each run's sequences of per-sequence ``values (N,)``, ``(R,)``."""
        return torch.zeros(self.weights.shape[0], dtype=values.dtype, device=values.device).index_add(
            0, batch.run, values) / batch.counts

    def _group_logits(self, group: RunMajorGroup) -> torch.Tensor:
        r"""The logits of one group's sequences, ``(R_g, P_g, L, L)``.

        :math:`G^\mu = (X^\mu W_{tt} + W_{pt}) X^{\mu\top} + X^\mu W_{tp} + W_{pp}`: one batched
        product per run, :math:`X [W_{tt} \mid W_{tp}]` (``(R_g, P_g L, V) @ (R_g, V, V + L)``), then
        the token columns are gathered at :math:`x_{\ell'}` (the product with the one-hot
        :math:`X^\top`, :math:`O(L^2)` instead of :math:`O(L^2 V)`) and :math:`W_{pp}` is broadcast.
        No per-sequence copies of the weights.
        """
        X, tokens = group.one_hot, group.tokens
        R, width, L, V = X.shape
        W = self.weights[group.runs]
        left = (X.reshape(R, width * L, V) @ W[:, :V, :]).reshape(R, width, L, V + L)
        by_token = left[..., :V] + W[:, None, V:, :V]
        columns = torch.gather(by_token, -1, tokens[:, :, None, :].expand(R, width, L, L))
        return columns + left[..., V:] + W[:, None, V:, V:]

    def _logit_tables(self, group: RunMajorGroup) -> tuple[torch.Tensor, torch.Tensor]:
        r"""The tables ``a (R_g, V, L, V)`` and ``b (R_g, V, L, L)`` of :meth:`design`."""
        V = self.V
        W = self.weights[group.runs]
        return W[:, :V, None, :V] + W[:, None, V:, :V], W[:, :V, None, V:] + W[:, None, V:, V:]

    def design(self, group: RunMajorGroup) -> torch.Tensor:
        r"""The design :math:`\Phi^\mu = A^\mu X^\mu` of one group's sequences, ``(R_g, P_g, L, V)``, without forming :math:`A^\mu`.

        The logits split into a part that sees the key's token and a part that sees the key's position,
        both read from tables indexed by the query's token and position:

        .. math::
            G^\mu_{\ell\ell'} = a[x_\ell, \ell, x_{\ell'}] + b[x_\ell, \ell, \ell'], \quad
            a[u, \ell, v] = W_{tt}[u, v] + W_{pt}[\ell, v], \quad
            b[u, \ell, \ell'] = W_{tp}[u, \ell'] + W_{pp}[\ell, \ell'],

        ``a (R_g, V, L, V)`` and ``b (R_g, V, L, L)`` shared by all sequences.  With the key sums
        :math:`K^\mu[\ell, v] = \sum_{\ell'} k[x_\ell, \ell, \ell'] X^\mu_{\ell' v}`,

        * softmax (:math:`k = e^{b}`): :math:`\Phi^\mu_{\ell v} = e^{a[x_\ell,\ell,v]} K^\mu[\ell, v] / \sum_{v'} e^{a[x_\ell,\ell,v']} K^\mu[\ell, v']`;
        * linear (:math:`k = b`): :math:`\Phi^\mu_{\ell v} = (a[x_\ell,\ell,v]\, n^\mu_v + K^\mu[\ell, v]) / L^{k}`,
          with :math:`n^\mu_v = \sum_{\ell'} X^\mu_{\ell' v}` the count of token :math:`v`.

        The one ``(R_g, P_g, L, L)`` tensor is the gathered rows of :math:`k` (the dense route builds and
        differentiates five); the softmax action and gradient are 2.5x faster at L = 64, V = 8, P = 7200 (float32).  The exponentials are
        taken relative to each table row's maximum, which is exact unless the logits of one row span
        more than the dtype's exponent range (about 87 in float32), where the dense softmax stays exact.
        """
        return self._design(group)

    def _softmax_weights_at_query(self, group: RunMajorGroup) -> tuple[torch.Tensor, torch.Tensor]:
        r""":math:`e^{a[x_\ell, \ell, \cdot]}` ``(R_g, P_g, L, V)`` and :math:`e^{b[x_\ell, \ell, \cdot]}` ``(R_g, P_g, L, L)`` (see :meth:`design`)."""
        by_key_token, by_key_position = self._logit_tables(group)
        token_weight = torch.exp(by_key_token - by_key_token.amax(-1, keepdim=True).detach())
        position_weight = torch.exp(by_key_position - by_key_position.amax(-1, keepdim=True).detach())
        return _at_query(token_weight, group.tokens), _at_query(position_weight, group.tokens)

    def _softmax_design(self, group: RunMajorGroup) -> torch.Tensor:
        """Softmax :meth:`design` ``(R_g, P_g, L, V)``."""
        token_weight, position_weight = self._softmax_weights_at_query(group)
        unnormalised = token_weight * (position_weight @ group.one_hot)
        return unnormalised / unnormalised.sum(-1, keepdim=True)

    def _linear_design(self, group: RunMajorGroup) -> torch.Tensor:
        """Linear :meth:`design` ``(R_g, P_g, L, V)``."""
        by_key_token, by_key_position = self._logit_tables(group)
        counts = group.one_hot.sum(dim=-2, keepdim=True)  # (R_g, P_g, 1, V)
        keys = _at_query(by_key_token, group.tokens) * counts + _at_query(by_key_position, group.tokens) @ group.one_hot
        return self.normalise(keys)

    def readout_statistics(self, batch: CopyTaskBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``C (R, V, V)``, ``B (R, V, V)``, ``D (R,)`` summed over the groups' designs."""
        R, V = self.weights.shape[0], self.V
        C, B, D = self.weights.new_zeros(R, V, V), self.weights.new_zeros(R, V, V), self.weights.new_zeros(R)
        for group in batch.run_major_groups():
            C, B, D = add_design_statistics(C, B, D, group, self.design(group))
        return C, B, D

    def squared_errors(self, batch: CopyTaskBatch, head: ReadoutHead) -> torch.Tensor:
        r""":math:`\sum_{\mu \in r} \|Y^\mu - \Phi^\mu W\|^2`, ``(R,)``, residual by residual, cost :math:`O(P L^2 V)` per run."""
        errors = self.weights.new_zeros(self.weights.shape[0])
        for group in batch.run_major_groups():
            errors = errors.index_add(0, group.runs, head.group_squared_errors(group, self.design(group)))
        return errors

    def previous_attention_statistics(self, batch: CopyTaskBatch, with_statistics: bool):
        r"""Softmax only: :math:`a_G` per run ``(R,)`` (differentiable) and, ``with_statistics``, the readout statistics.

        :math:`a_G = \frac{1}{P_r L}\sum_\mu\sum_\ell A^\mu_{\ell,\ell-1}` (cyclic previous position), from the
        tables of :meth:`design` without forming :math:`A^\mu`:
        :math:`A^\mu_{\ell,\ell-1} = e^{a[x_\ell,\ell,x_{\ell-1}]}e^{b[x_\ell,\ell,\ell-1]} / \sum_v e^{a[x_\ell,\ell,v]}K^\mu[\ell, v]`.
        Returns ``((C, B, D) or None, a_G)``.
        """
        if self.convention.attention != "softmax":
            raise EmergenceError("previous_token_attention covers softmax model T")
        R, L, V = self.weights.shape[0], self.L, self.V
        C, B = self.weights.new_zeros(R, V, V), self.weights.new_zeros(R, V, V)
        D, previous = self.weights.new_zeros(R), self.weights.new_zeros(R)
        positions = torch.arange(L, device=self.weights.device)
        for group in batch.run_major_groups():
            token_weight, position_weight = self._softmax_weights_at_query(group)
            unnormalised = token_weight * (position_weight @ group.one_hot)  # (R_g, P_g, L, V)
            normaliser = unnormalised.sum(-1)
            previous_token = torch.roll(group.tokens, 1, dims=-1)  # x_{l-1}
            numerator = (torch.gather(token_weight, -1, previous_token[..., None])[..., 0]
                         * position_weight[..., positions, (positions - 1) % L])
            previous = previous.index_add(0, group.runs, (numerator / normaliser).sum(dim=(1, 2)))
            if with_statistics:
                C, B, D = add_design_statistics(C, B, D, group, unnormalised / normaliser[..., None])
        previous = previous / (batch.counts.to(previous.dtype) * L)
        return ((C, B, D) if with_statistics else None), previous
