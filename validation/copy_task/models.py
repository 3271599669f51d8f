r"""Single-layer attention for the copy task, batched over ``R`` independent runs.

Every run has its own logit weights :math:`\theta_r` and readout :math:`W_r \in \mathbb{R}^{V\times V}`,
stored as one tensor with a leading run axis, so ``R`` models train as one tensor program.

* Model M: :math:`\theta = G \in \mathbb{R}^{L\times L}` (positional logits, shared by all sequences).
* Model T: :math:`\theta = W_{QK} \in \mathbb{R}^{(V+L)\times(V+L)}`, logits
  :math:`G^\mu_{\ell\ell'} = z_\ell^\top W_{QK} z_{\ell'}` with :math:`z_\ell = x_\ell \oplus e_\ell`,
  i.e. :math:`G_{\ell\ell'} = W_{tt}[x_\ell, x_{\ell'}] + W_{tp}[x_\ell, \ell'] + W_{pt}[\ell, x_{\ell'}] + W_{pp}[\ell, \ell']`
  (batched matrix products with the one-hot :math:`X^\mu` laid out run by run, ``(R_g, P_g, L, V)`` per group of runs with equal :math:`P`).

Attention :math:`A = G` or :math:`G/L` (linear, per ``normalisation``) or :math:`\operatorname{softmax}_{row}(G)`;
output :math:`F^\mu = A^\mu X^\mu W` (:math:`X^\mu W` is a gather of rows of :math:`W`). The potential is the theory's

.. math::
    U_r = \frac{\beta}{2}\sum_{\mu \le P_r}\|Y^\mu - A^\mu X^\mu W_r\|_F^2 + \frac{\|\theta_r\|^2}{2s} + \frac{\|W_r\|^2}{2\lambda},

so Adam on :math:`U` is MAP with the priors as weight decay, and SGLD with ``nbeta=1`` samples :math:`e^{-U}`.

>>> from emergence.validation.copy_task.config import CopyTaskConvention
>>> from emergence.validation.copy_task.data import copy_task_batch
>>> model = CopyAttentionModel(3, L=4, V=2, convention=CopyTaskConvention(architecture="M"))
>>> batch = copy_task_batch([2, 3, 4], L=4, V=2, seeds=[0, 1, 2])
>>> tuple(model.potential(batch).shape)
(3,)
"""

from __future__ import annotations

import math

import torch

from emergence.numerics.order_parameters import cyclic_shift
from emergence.base.errors import EmergenceError, InvalidSizeError
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import CopyTaskBatch, RunMajorGroup

STARTS: tuple[str, ...] = ("uniform", "copy")

COPY_START_WEIGHT = 0.9
"""Softmax copy start: attention weight on the previous token."""


def _at_query(table: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """``table[r, tokens[r, m, l], l, :]``, shape ``(R, P, L, n)``, for ``table (R, V, L, n)`` and ``tokens (R, P, L)``.

    One ``index_select`` over the flattened ``(r, u, l)`` rows: its backward is an ``index_add``,
    about twice as fast on a CPU as the ``index_put`` behind advanced indexing.
    """
    R, V, L, n = table.shape
    run = torch.arange(R, device=tokens.device)[:, None, None]
    rows = ((run * V + tokens) * L + torch.arange(L, device=tokens.device)).flatten()
    return table.reshape(R * V * L, n).index_select(0, rows).reshape(*tokens.shape, n)


class CopyAttentionModel(torch.nn.Module):
    """``R`` independent one-layer attention models (see the module docstring)."""

    def __init__(self, runs: int, L: int, V: int, convention: CopyTaskConvention, dtype=torch.float64, device="cpu"):
        super().__init__()
        if runs < 1 or L < 2 or V < 2:
            raise InvalidSizeError(f"need runs >= 1, L >= 2, V >= 2; got runs={runs}, L={L}, V={V}")
        self.runs, self.L, self.V, self.convention = runs, L, V, convention
        width = L if convention.architecture == "M" else V + L
        self.logit_weights = torch.nn.Parameter(torch.zeros(runs, width, width, dtype=dtype, device=device))
        self.readout = torch.nn.Parameter(torch.zeros(runs, V, V, dtype=dtype, device=device))
        self.logit_prior_variance = convention.logit_prior_variance(L)
        self.readout_prior_variance = convention.readout_prior_variance(L, V)
        self.beta = convention.beta(L, V)

    def logits(self, batch: CopyTaskBatch | None = None) -> torch.Tensor:
        """``(R, L, L)`` for model M (no data needed), ``(N, L, L)`` per sequence for model T."""
        if self.convention.architecture == "M":
            return self.logit_weights
        groups = batch.run_major_groups()
        rows = torch.cat([group.sequences.flatten() for group in groups])
        logits = torch.cat([self._group_logits(group).flatten(0, 1) for group in groups])
        position = torch.empty_like(rows)
        position[rows] = torch.arange(rows.shape[0], device=rows.device)
        return logits[position]

    def _group_logits(self, group: RunMajorGroup) -> torch.Tensor:
        r"""Model T logits of one group's sequences, ``(R_g, P_g, L, L)``.

        :math:`G^\mu = (X^\mu W_{tt} + W_{pt}) X^{\mu\top} + X^\mu W_{tp} + W_{pp}`: one batched
        product per run, :math:`X [W_{tt} \mid W_{tp}]` (``(R_g, P_g L, V) @ (R_g, V, V + L)``), then
        the token columns are gathered at :math:`x_{\ell'}` (the product with the one-hot
        :math:`X^\top`, :math:`O(L^2)` instead of :math:`O(L^2 V)`) and :math:`W_{pp}` is broadcast.
        No per-sequence copies of the weights.
        """
        X, tokens = group.one_hot, group.tokens
        R, width, L, V = X.shape
        W = self.logit_weights[group.runs]
        left = (X.reshape(R, width * L, V) @ W[:, :V, :]).reshape(R, width, L, V + L)
        by_token = left[..., :V] + W[:, None, V:, :V]
        columns = torch.gather(by_token, -1, tokens[:, :, None, :].expand(R, width, L, L))
        return columns + left[..., V:] + W[:, None, V:, V:]

    def _group_design(self, group: RunMajorGroup) -> torch.Tensor:
        r"""Model T's design :math:`\Phi^\mu = A^\mu X^\mu` of one group's sequences, ``(R_g, P_g, L, V)``, without forming :math:`A^\mu`.

        The logits of :meth:`_group_logits` split into a part that sees the key's token and a part
        that sees the key's position, both read from tables indexed by the query's token and position:

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
        if self.convention.attention == "softmax":
            token_weight, position_weight = self._softmax_weights_at_query(group)
            unnormalised = token_weight * (position_weight @ group.one_hot)
            return unnormalised / unnormalised.sum(-1, keepdim=True)
        by_key_token, by_key_position = self._logit_tables(group)
        counts = group.one_hot.sum(dim=-2, keepdim=True)  # (R_g, P_g, 1, V)
        keys = _at_query(by_key_token, group.tokens) * counts + _at_query(by_key_position, group.tokens) @ group.one_hot
        return self.convention.normalise_linear(keys, self.L)

    def _logit_tables(self, group: RunMajorGroup) -> tuple[torch.Tensor, torch.Tensor]:
        """The tables ``a (R_g, V, L, V)`` and ``b (R_g, V, L, L)`` of :meth:`_group_design`."""
        V = self.V
        W = self.logit_weights[group.runs]
        return W[:, :V, None, :V] + W[:, None, V:, :V], W[:, :V, None, V:] + W[:, None, V:, V:]

    def _softmax_weights_at_query(self, group: RunMajorGroup) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Softmax model T's :math:`e^{a[x_\ell, \ell, \cdot]}` ``(R_g, P_g, L, V)`` and :math:`e^{b[x_\ell, \ell, \cdot]}` ``(R_g, P_g, L, L)`` (see :meth:`_group_design`)."""
        by_key_token, by_key_position = self._logit_tables(group)
        token_weight = torch.exp(by_key_token - by_key_token.amax(-1, keepdim=True).detach())
        position_weight = torch.exp(by_key_position - by_key_position.amax(-1, keepdim=True).detach())
        return _at_query(token_weight, group.tokens), _at_query(position_weight, group.tokens)

    def previous_token_attention(self, batch: CopyTaskBatch) -> torch.Tensor:
        r"""Softmax model T's :math:`a_G` per run over its own sequences, ``(R,)`` (differentiable).

        :math:`a_G = \frac{1}{P_r L}\sum_\mu\sum_\ell A^\mu_{\ell,\ell-1}` (cyclic previous position),
        from the tables of :meth:`_group_design` without forming :math:`A^\mu`:
        :math:`A^\mu_{\ell,\ell-1} = e^{a[x_\ell,\ell,x_{\ell-1}]}e^{b[x_\ell,\ell,\ell-1]} / \sum_v e^{a[x_\ell,\ell,v]}K^\mu[\ell, v]`.
        """
        return self.marginal_potential_and_previous_attention(batch, action=False)[1]

    def marginal_potential_and_previous_attention(self, batch: CopyTaskBatch,
                                                  action: bool = True) -> tuple[torch.Tensor | None, torch.Tensor]:
        """Softmax model T: :meth:`marginal_potential` and :meth:`previous_token_attention` from one pass over the tables, each ``(R,)``.

        The umbrella sampler needs both at every gradient; sharing the exponentiated tables saves
        one of the two passes.  ``action=False`` skips the readout statistics (returns ``None`` for the action).
        """
        if self.convention.architecture != "T" or self.convention.attention != "softmax":
            raise EmergenceError("previous_token_attention covers softmax model T")
        R, L, V = self.runs, self.L, self.V
        C, B = self.readout.new_zeros(R, V, V), self.readout.new_zeros(R, V, V)
        D, previous = self.readout.new_zeros(R), self.readout.new_zeros(R)
        positions = torch.arange(L, device=self.readout.device)
        for group in batch.run_major_groups():
            token_weight, position_weight = self._softmax_weights_at_query(group)
            unnormalised = token_weight * (position_weight @ group.one_hot)  # (R_g, P_g, L, V)
            normaliser = unnormalised.sum(-1)
            previous_token = torch.roll(group.tokens, 1, dims=-1)  # x_{l-1}
            numerator = (torch.gather(token_weight, -1, previous_token[..., None])[..., 0]
                         * position_weight[..., positions, (positions - 1) % L])
            previous = previous.index_add(0, group.runs, (numerator / normaliser).sum(dim=(1, 2)))
            if action:
                C, B, D = self._accumulate_statistics(C, B, D, group, unnormalised / normaliser[..., None])
        previous = previous / (batch.counts.to(previous.dtype) * L)
        return (self._marginal_from_statistics(C, B, D) if action else None), previous

    def _normalise(self, G: torch.Tensor) -> torch.Tensor:
        if self.convention.attention == "softmax":
            return torch.softmax(G, dim=-1)
        return self.convention.normalise_linear(G, self.L)

    def attention(self, batch: CopyTaskBatch | None = None) -> torch.Tensor:
        """Attention matrices: ``(R, L, L)`` for model M, ``(N, L, L)`` for model T."""
        return self._normalise(self.logits(batch))

    def outputs(self, batch: CopyTaskBatch, attention: torch.Tensor | None = None) -> torch.Tensor:
        r""":math:`F^\mu = A^\mu X^\mu W`, shape ``(N, L, V)``, computed sequence by sequence."""
        A = self.attention(batch) if attention is None else attention
        if self.convention.architecture == "M":
            A = torch.index_select(A, 0, batch.run)
        values = batch.one_hot() @ torch.index_select(self.readout, 0, batch.run)  # X W: (N, L, V)
        return torch.matmul(A, values)

    def squared_errors(self, batch: CopyTaskBatch) -> torch.Tensor:
        r""":math:`\sum_{\mu \in r} \|Y^\mu - F^\mu\|^2`, shape ``(R,)``.

        Model M uses the readout statistics (:meth:`readout_statistics`, cost independent of
        :math:`P`): :math:`D - 2\langle W, B\rangle + \langle W, C W\rangle`.  Model T's residuals
        are summed directly (no cancellation between large terms, which matters in float32) in
        the run-major layout (:meth:`~emergence.validation.copy_task.data.CopyTaskBatch.run_major_groups`),
        :math:`Y^\mu - \Phi^\mu W` with the design of :meth:`_group_design`, cost :math:`O(P L^2 V)` per run.
        """
        if self.convention.architecture == "M":
            C, B, D = self.readout_statistics(batch)
            W = self.readout
            return D - 2 * (W * B).sum(dim=(-2, -1)) + (W * (C @ W)).sum(dim=(-2, -1))
        errors = self.readout.new_zeros(self.runs)
        for group in batch.run_major_groups():
            residual = group.targets - self._group_design(group) @ self.readout[group.runs][:, None]
            errors = errors.index_add(0, group.runs, (residual * residual).sum(dim=(1, 2, 3)))
        return errors

    def readout_statistics(self, batch: CopyTaskBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        r"""What the data term says about the readout: :math:`C_r, B_r \in \mathbb{R}^{V\times V}` and :math:`D_r`.

        With the design :math:`\Phi^\mu = A^\mu X^\mu` (``L x V``),
        :math:`C = \sum_\mu \Phi^{\mu\top}\Phi^\mu`, :math:`B = \sum_\mu \Phi^{\mu\top} Y^\mu`,
        :math:`D = \sum_\mu \|Y^\mu\|^2`, so that
        :math:`\sum_\mu \|Y^\mu - \Phi^\mu W\|^2 = D - 2\langle W, B\rangle + \langle W, CW\rangle`.
        Model M: from the sufficient statistics of the batch,
        :math:`B = \sum_{ij} A_{ij} Q[i,j]`, :math:`C = \sum_{jk}(A^\top A)_{jk} K[j,k]`.
        Shapes ``(R, V, V)``, ``(R, V, V)``, ``(R,)``.
        """
        R, L, V = self.runs, self.L, self.V
        if self.convention.architecture == "M":
            K, Q, D = batch.statistics()
            A = self.attention()
            B = (A.reshape(R, 1, L * L) @ Q.reshape(R, L * L, V * V)).reshape(R, V, V)
            C = ((A.transpose(-1, -2) @ A).reshape(R, 1, L * L) @ K.reshape(R, L * L, V * V)).reshape(R, V, V)
            return C, B, D
        C = self.readout.new_zeros(R, V, V)
        B = self.readout.new_zeros(R, V, V)
        D = self.readout.new_zeros(R)
        for group in batch.run_major_groups():
            C, B, D = self._accumulate_statistics(C, B, D, group, self._group_design(group))
        return C, B, D

    def _accumulate_statistics(self, C, B, D, group: RunMajorGroup, design: torch.Tensor):
        r"""Add one group's :math:`\Phi^\top\Phi`, :math:`\Phi^\top Y`, :math:`\|Y\|^2` (design ``(R_g, P_g, L, V)``) to its runs."""
        runs, width = group.runs.shape[0], group.one_hot.shape[1]
        design = design.reshape(runs, width * self.L, self.V)
        targets = group.targets.reshape(runs, width * self.L, self.V)
        C = C.index_add(0, group.runs, design.transpose(-1, -2) @ design)
        B = B.index_add(0, group.runs, design.transpose(-1, -2) @ targets)
        D = D.index_add(0, group.runs, (targets * targets).sum(dim=(-2, -1)))
        return C, B, D

    def _readout_posterior(self, C, B, D) -> tuple[torch.Tensor, ...]:
        r"""Cholesky factor of :math:`I + \varepsilon C`, the solve :math:`(I + \varepsilon C)^{-1}B`, :math:`B` and :math:`D`."""
        epsilon = self.beta * self.readout_prior_variance
        identity = torch.eye(self.V, dtype=C.dtype, device=C.device)
        factor, info = torch.linalg.cholesky_ex(identity + epsilon * C)
        # a failed factorisation (non-finite logits) becomes a NaN action: the trainers' divergence check
        factor = torch.where((info == 0)[:, None, None], factor, torch.nan)
        return factor, torch.cholesky_solve(B, factor), B, D

    def marginal_potential(self, batch: CopyTaskBatch) -> torch.Tensor:
        r"""The readout-marginal action :math:`S_r(\theta) = -\ln\int dW\, \mathcal{N}(W; 0, \lambda)\, e^{-U_r + \|W\|^2/2\lambda}`, shape ``(R,)``.

        The Gaussian integral over :math:`W` (Woodbury form, :math:`\varepsilon = \beta\lambda`):

        .. math::
            S(\theta) = \frac{\|\theta\|^2}{2s} + \frac{\beta}{2}\big[D - \varepsilon
            \operatorname{tr}(B^\top (I + \varepsilon C)^{-1} B)\big] + \frac{V}{2}\ln\det(I + \varepsilon C),

        the posterior over the attention weights :math:`e^{-S(\theta)}` that the theory reduces.
        Without the last (Occam) term it is :math:`\min_W U(\theta, W)`, the joint MAP's profile.
        """
        return self._marginal_from_statistics(*self.readout_statistics(batch))

    def _marginal_from_statistics(self, C, B, D) -> torch.Tensor:
        """:meth:`marginal_potential` from the readout statistics ``C, B, D``."""
        factor, solved, B, D = self._readout_posterior(C, B, D)
        epsilon = self.beta * self.readout_prior_variance
        data = 0.5 * self.beta * (D - epsilon * (B * solved).sum(dim=(-2, -1)))
        occam = self.V * torch.log(torch.diagonal(factor, dim1=-2, dim2=-1)).sum(dim=-1)
        return self.logit_prior_energy() + data + occam

    @torch.no_grad()
    def set_posterior_mean_readout(self, batch: CopyTaskBatch) -> None:
        r"""Set :math:`W_r` to its posterior mean given :math:`\theta_r`, :math:`\varepsilon (I + \varepsilon C)^{-1} B` (also :math:`\arg\min_W U`)."""
        _, solved, _, _ = self._readout_posterior(*self.readout_statistics(batch))
        self.readout.copy_(self.beta * self.readout_prior_variance * solved)

    def logit_prior_energy(self) -> torch.Tensor:
        r""":math:`\|\theta\|^2/(2s)`, shape ``(R,)``."""
        return (self.logit_weights**2).sum(dim=(-2, -1)) / (2 * self.logit_prior_variance)

    def prior_energy(self) -> torch.Tensor:
        r""":math:`\|\theta\|^2/(2s) + \|W\|^2/(2\lambda)`, shape ``(R,)``."""
        return self.logit_prior_energy() + (self.readout**2).sum(dim=(-2, -1)) / (2 * self.readout_prior_variance)

    def potential(self, batch: CopyTaskBatch) -> torch.Tensor:
        """The potential :math:`U_r`, shape ``(R,)``."""
        return 0.5 * self.beta * self.squared_errors(batch) + self.prior_energy()

    def forward(self, batch: CopyTaskBatch) -> torch.Tensor:
        """The potential :math:`U_r` of every run, shape ``(R,)``."""
        return self.potential(batch)

    @torch.no_grad()
    def initialise(self, starts: list[str], seeds: list[int], noise: float = 1e-2) -> None:
        """Set run ``r`` to the uniform-pooling or copy pattern of ``starts[r]``, plus seeded noise.

        Uniform: softmax logits 0; linear :math:`A = J/L`.  Copy: softmax weight
        :data:`COPY_START_WEIGHT` on the previous token; linear :math:`A = S`, readout
        :math:`W = I`.  Model T reaches these through the token-token block
        (:math:`W_{tt} \\propto \\mathbb{1}\\mathbb{1}^\\top` gives constant logits) and the
        position-position block (:math:`W_{pp} \\propto S`).
        """
        L, V = self.L, self.V
        scale = float(L) ** (self.convention.attention_normalisation_exponent - 1)
        shift = torch.as_tensor(cyclic_shift(L), dtype=self.readout.dtype, device=self.readout.device)
        for r, (start, seed) in enumerate(zip(starts, seeds)):
            if start not in STARTS:
                raise ValueError(f"unknown start {start!r}; choose {' or '.join(STARTS)}")
            generator = torch.Generator().manual_seed(int(seed) + 7919)
            theta = noise * torch.randn(self.logit_weights.shape[1:], generator=generator, dtype=self.readout.dtype)
            readout = noise * torch.randn(V, V, generator=generator, dtype=self.readout.dtype)
            theta, readout = theta.to(self.readout.device), readout.to(self.readout.device)
            positional = theta if self.convention.architecture == "M" else theta[V:, V:]
            if start == "copy":
                readout += torch.eye(V, dtype=readout.dtype, device=readout.device)
                if self.convention.attention == "softmax":
                    positional += math.log(COPY_START_WEIGHT * (L - 1) / (1 - COPY_START_WEIGHT)) * shift
                else:
                    positional += (L * scale) * shift
            elif self.convention.attention == "linear":
                if self.convention.architecture == "M":
                    theta += scale
                else:
                    theta[:V, :V] += scale
            self.logit_weights[r] = theta
            self.readout[r] = readout

    def per_run_gradient_norm(self) -> torch.Tensor:
        """:math:`\\|\\nabla U_r\\|` from the current ``.grad`` fields, shape ``(R,)``."""
        total = torch.zeros(self.runs, dtype=self.readout.dtype, device=self.readout.device)
        for parameter in (self.logit_weights, self.readout):
            if parameter.grad is not None:
                total = total + (parameter.grad**2).sum(dim=(-2, -1))
        return total.sqrt()
