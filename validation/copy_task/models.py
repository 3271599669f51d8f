r"""Single-layer attention for the copy task, batched over ``R`` independent runs.

Every run has its own logit weights :math:`\theta_r` and readout :math:`W_r \in \mathbb{R}^{V\times V}`,
stored as one tensor with a leading run axis, so ``R`` models train as one tensor program.

* Model M: :math:`\theta = G \in \mathbb{R}^{L\times L}` (positional logits, shared by all sequences).
* Model T: :math:`\theta = W_{QK} \in \mathbb{R}^{(V+L)\times(V+L)}`, logits
  :math:`G^\mu_{\ell\ell'} = z_\ell^\top W_{QK} z_{\ell'}` with :math:`z_\ell = x_\ell \oplus e_\ell`,
  i.e. :math:`G_{\ell\ell'} = W_{tt}[x_\ell, x_{\ell'}] + W_{tp}[x_\ell, \ell'] + W_{pt}[\ell, x_{\ell'}] + W_{pp}[\ell, \ell']`
  (batched matrix products with the one-hot :math:`X^\mu` laid out run by run, ``(R, P_max, L, V)``).

Attention :math:`A = G` or :math:`G/L` (linear, per ``normalisation``) or :math:`\operatorname{softmax}_{row}(G)`;
output :math:`F^\mu = A^\mu X^\mu W` (:math:`X^\mu W` is a gather of rows of :math:`W`). The potential is the theory's

.. math::
    U_r = \frac{\beta}{2}\sum_{\mu \le P_r}\|Y^\mu - A^\mu X^\mu W_r\|_F^2 + \frac{\|\theta_r\|^2}{2s} + \frac{\|W_r\|^2}{2\lambda},

so Adam on :math:`U` is MAP with the priors as weight decay, and SGLD with ``nbeta=1`` samples :math:`e^{-U}`.

>>> from validation.copy_task.config import CopyTaskConvention
>>> from validation.copy_task.data import copy_task_batch
>>> model = CopyAttentionModel(3, L=4, V=2, convention=CopyTaskConvention(architecture="M"))
>>> batch = copy_task_batch([2, 3, 4], L=4, V=2, seeds=[0, 1, 2])
>>> tuple(model.potential(batch).shape)
(3,)
"""

from __future__ import annotations

import math

import torch

from numerics.order_parameters import cyclic_shift
from theory.errors import InvalidSizeError
from validation.copy_task.config import CopyTaskConvention
from validation.copy_task.data import CopyTaskBatch

STARTS: tuple[str, ...] = ("uniform", "copy")

COPY_START_WEIGHT = 0.9
"""Softmax copy start: attention weight on the previous token."""


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
        self.readout_prior_variance = convention.readout_prior_variance(V)
        self.beta = convention.beta(L, V)

    def logits(self, batch: CopyTaskBatch | None = None) -> torch.Tensor:
        """``(R, L, L)`` for model M (no data needed), ``(N, L, L)`` per sequence for model T."""
        if self.convention.architecture == "M":
            return self.logit_weights
        *_, run, index = batch.run_major()
        return self._run_major_logits(batch)[run, index]

    def _run_major_logits(self, batch: CopyTaskBatch) -> torch.Tensor:
        r"""Model T logits of every run's sequences, ``(R, P_max, L, L)`` (padding rows included).

        :math:`G^\mu = (X^\mu W_{tt} + W_{pt}) X^{\mu\top} + X^\mu W_{tp} + W_{pp}`: one batched
        product per run, :math:`X [W_{tt} \mid W_{tp}]` (``(R, P_max L, V) @ (R, V, V + L)``), then
        the token columns are gathered at :math:`x_{\ell'}` (the product with the one-hot
        :math:`X^\top`, :math:`O(L^2)` instead of :math:`O(L^2 V)`) and :math:`W_{pp}` is broadcast.
        No per-sequence copies of the weights.
        """
        X, _, tokens, _, _ = batch.run_major()
        R, width, L, V = X.shape
        W = self.logit_weights
        left = (X.reshape(R, width * L, V) @ W[:, :V, :]).reshape(R, width, L, V + L)
        by_token = left[..., :V] + W[:, None, V:, :V]
        columns = torch.gather(by_token, -1, tokens[:, :, None, :].expand(R, width, L, L))
        return columns + left[..., V:] + W[:, None, V:, V:]

    def _normalise(self, G: torch.Tensor) -> torch.Tensor:
        if self.convention.attention == "softmax":
            return torch.softmax(G, dim=-1)
        return G / self.L if self.convention.normalisation == "G/L" else G

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

        Model M uses the sufficient statistics of the batch (cost independent of :math:`P`):
        :math:`D - 2\langle W, \sum_{ij} A_{ij} Q[i,j,\cdot,\cdot]\rangle
        + \operatorname{tr}(W^\top M_2 W)`, :math:`M_2 = \sum_{jk}(A^\top A)_{jk} K[j,k,\cdot,\cdot]`.
        Model T's attention depends on every token of the sequence, so no statistics of fixed
        size exist; its residuals are summed in the run-major layout
        (:meth:`~validation.copy_task.data.CopyTaskBatch.run_major`): batched products over
        ``(R, P_max)``, cost :math:`O(P L^2 V)` per run, no scatter in the backward pass.
        """
        R, L, V = self.runs, self.L, self.V
        if self.convention.architecture == "M":
            K, Q, D = batch.statistics()
            A, W = self.attention(), self.readout
            linear = (A.reshape(R, 1, L * L) @ Q.reshape(R, L * L, V * V)).reshape(R, V, V)
            gram = ((A.transpose(-1, -2) @ A).reshape(R, 1, L * L) @ K.reshape(R, L * L, V * V)).reshape(R, V, V)
            return D - 2 * (W * linear).sum(dim=(-2, -1)) + (W * (gram @ W)).sum(dim=(-2, -1))
        X, Y, *_ = batch.run_major()
        width = X.shape[1]
        A = self._normalise(self._run_major_logits(batch))
        values = (X.reshape(R, width * L, V) @ self.readout).reshape(R, width, L, V)
        residual = Y - A @ values
        return (residual * residual).sum(dim=(1, 2, 3))

    def prior_energy(self) -> torch.Tensor:
        r""":math:`\|\theta\|^2/(2s) + \|W\|^2/(2\lambda)`, shape ``(R,)``."""
        return (self.logit_weights**2).sum(dim=(-2, -1)) / (2 * self.logit_prior_variance) + (
            self.readout**2
        ).sum(dim=(-2, -1)) / (2 * self.readout_prior_variance)

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
        scale = 1.0 if self.convention.normalisation == "G/L" else 1.0 / L
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
