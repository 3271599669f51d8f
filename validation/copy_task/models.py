r"""Single-layer attention for the copy task, batched over ``R`` independent runs: a logits module and a readout head.

Every run has its own logit weights :math:`\theta_r` and readout :math:`W_r \in \mathbb{R}^{V\times V}`,
stored as tensors with a leading run axis, so ``R`` models train as one tensor program.  As nanoGPT's
``Block`` composes attention and MLP, :class:`CopyAttentionModel` composes

* a logits module, one per architecture (:data:`LOGITS`, the one place that reads ``convention.architecture``):

  - model M, :class:`~emergence.validation.copy_task.positional_logits.PositionalLogits`:
    :math:`\theta = G \in \mathbb{R}^{L\times L}` (positional logits, shared by all sequences);
  - model T, :class:`~emergence.validation.copy_task.token_position_logits.TokenPositionLogits`:
    :math:`\theta = W_{QK} \in \mathbb{R}^{(V+L)\times(V+L)}`, logits :math:`z_\ell^\top W_{QK} z_{\ell'}`,
    :math:`z_\ell = x_\ell \oplus e_\ell`;

  each normalised by the attention's strategy (:mod:`~emergence.validation.copy_task.normalisation`:
  :math:`A = \operatorname{softmax}_{row}(G)` or :math:`G/L^k`), and each reducing the data to the readout
  statistics :math:`C, B, D`;
* the :class:`~emergence.validation.copy_task.readout_head.ReadoutHead`: output
  :math:`F^\mu = A^\mu X^\mu W`, its prior, the readout-marginal action and the posterior-mean readout.

The potential is the theory's

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

import torch

from emergence.base.errors import InvalidSizeError
from emergence.numerics.order_parameters import cyclic_shift
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import CopyTaskBatch
from emergence.validation.copy_task.positional_logits import PositionalLogits
from emergence.validation.copy_task.compiled_marginal_action import compiled_action_available, work_per_query
from emergence.validation.copy_task.readout_head import ReadoutHead
from emergence.validation.copy_task.softmax_marginal_action import SoftmaxMarginalAction, SoftmaxSquaredErrors
from emergence.validation.copy_task.token_position_logits import TokenPositionLogits

STARTS: tuple[str, ...] = ("uniform", "copy")

LOGITS = {"M": PositionalLogits, "T": TokenPositionLogits}
"""The logits module of each architecture (``convention.architecture``)."""


class CopyAttentionModel(torch.nn.Module):
    """``R`` independent one-layer attention models: ``attention_logits`` then ``head`` (see the module docstring)."""

    def __init__(self, runs: int, L: int, V: int, convention: CopyTaskConvention, dtype=torch.float64, device="cpu",
                 compiled_action: bool | None = None):
        super().__init__()
        if runs < 1 or L < 2 or V < 2:
            raise InvalidSizeError(f"need runs >= 1, L >= 2, V >= 2; got runs={runs}, L={L}, V={V}")
        self.runs, self.L, self.V, self.convention = runs, L, V, convention
        self.logit_prior_variance = convention.logit_prior_variance(L)
        self.readout_prior_variance = convention.readout_prior_variance(L, V)
        self.beta = convention.beta(L, V)
        self.attention_logits = LOGITS[convention.architecture](runs, L, V, convention, dtype=dtype, device=device)
        self.head = ReadoutHead(runs, V, self.readout_prior_variance, self.beta, dtype=dtype, device=device)
        compiled = (convention.architecture, convention.attention) == ("T", "softmax") and torch.device(device).type == "cpu"
        self.compiled_action = compiled and (compiled_action_available() if compiled_action is None else compiled_action)
        """Softmax model T on a CPU: the marginal action and :math:`a_G` from the compiled loops with the derived
        gradient (:mod:`~emergence.validation.copy_task.softmax_marginal_action`); False: the autograd path (the
        tests' oracle).  Default: where Numba is installed."""

    @property
    def logit_weights(self) -> torch.nn.Parameter:
        r""":math:`\theta`: ``(R, L, L)`` (model M) or ``(R, V + L, V + L)`` (model T)."""
        return self.attention_logits.weights

    def compiled_flops(self, batch: CopyTaskBatch) -> float | None:
        """Flops of one gradient by the compiled loops' per-query model
        (:func:`~emergence.validation.copy_task.compiled_marginal_action.work_per_query`); ``None`` on the autograd path."""
        if not self.compiled_action:
            return None
        return float(batch.counts.sum()) * self.L * work_per_query(self.L, self.V, batch.target_tokens() is not None)[0]

    @property
    def gradient_path(self) -> str:
        """``compiled`` where :attr:`compiled_action` holds, else ``autograd``: what a run records of its gradient."""
        return "compiled" if self.compiled_action else "autograd"

    @property
    def readout(self) -> torch.nn.Parameter:
        """:math:`W`, ``(R, V, V)``."""
        return self.head.readout

    def logits(self, batch: CopyTaskBatch | None = None) -> torch.Tensor:
        """``(R, L, L)`` for model M (no data needed), ``(N, L, L)`` per sequence for model T."""
        return self.attention_logits.logits(batch)

    def attention(self, batch: CopyTaskBatch | None = None) -> torch.Tensor:
        """Attention matrices: ``(R, L, L)`` for model M, ``(N, L, L)`` for model T."""
        return self.attention_logits.normalise(self.logits(batch))

    def outputs(self, batch: CopyTaskBatch, attention: torch.Tensor | None = None) -> torch.Tensor:
        r""":math:`F^\mu = A^\mu X^\mu W`, shape ``(N, L, V)``, computed sequence by sequence."""
        A = self.attention(batch) if attention is None else attention
        A = self.attention_logits.per_sequence(A, batch)  # (N, L, L)
        values = batch.one_hot() @ torch.index_select(self.readout, 0, batch.run)  # X W: (N, L, V)
        return torch.matmul(A, values)

    def squared_errors(self, batch: CopyTaskBatch) -> torch.Tensor:
        r""":math:`\sum_{\mu \in r} \|Y^\mu - F^\mu\|^2`, shape ``(R,)``.

        Model M from the readout statistics (cost independent of :math:`P`):
        :math:`D - 2\langle W, B\rangle + \langle W, C W\rangle`; softmax model T in float64 with
        :attr:`compiled_action` from the same statistics by the compiled loops
        (:class:`~emergence.validation.copy_task.softmax_marginal_action.SoftmaxSquaredErrors`); otherwise model T
        residual by residual (no cancellation between large terms, which matters in float32), cost
        :math:`O(P L^2 V)` per run.
        """
        if self.compiled_action and self.readout.dtype == torch.float64:
            return SoftmaxSquaredErrors.apply(self.logit_weights, self.readout, batch)
        return self.attention_logits.squared_errors(batch, self.head)

    def readout_statistics(self, batch: CopyTaskBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        r"""What the data term says about the readout: :math:`C_r, B_r \in \mathbb{R}^{V\times V}` and :math:`D_r`.

        With the design :math:`\Phi^\mu = A^\mu X^\mu`, :math:`C = \sum_\mu \Phi^{\mu\top}\Phi^\mu`,
        :math:`B = \sum_\mu \Phi^{\mu\top} Y^\mu`, :math:`D = \sum_\mu \|Y^\mu\|^2`.  Shapes ``(R, V, V)``, ``(R, V, V)``, ``(R,)``.
        """
        return self.attention_logits.readout_statistics(batch)

    def marginal_potential(self, batch: CopyTaskBatch) -> torch.Tensor:
        r"""The readout-marginal action :math:`S_r(\theta)`, shape ``(R,)`` (:meth:`~emergence.validation.copy_task.readout_head.ReadoutHead.marginal_potential`):

        .. math::
            S(\theta) = \frac{\|\theta\|^2}{2s} + \frac{\beta}{2}\big[D - \varepsilon
            \operatorname{tr}(B^\top (I + \varepsilon C)^{-1} B)\big] + \frac{V}{2}\ln\det(I + \varepsilon C),

        the posterior over the attention weights :math:`e^{-S(\theta)}` that the theory reduces.
        """
        if self.compiled_action:
            return self.logit_prior_energy() + self._compiled_action(batch)[0]
        return self.head.marginal_potential(*self.readout_statistics(batch), self.logit_prior_energy())

    def _compiled_action(self, batch: CopyTaskBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """The data part of the marginal action and :math:`a_G`, each ``(R,)``, by the compiled loops."""
        return SoftmaxMarginalAction.apply(self.logit_weights, batch, self.beta, self.readout_prior_variance)

    def previous_token_attention(self, batch: CopyTaskBatch) -> torch.Tensor:
        r"""Softmax model T's :math:`a_G = \frac{1}{P_r L}\sum_\mu\sum_\ell A^\mu_{\ell,\ell-1}` per run, ``(R,)`` (differentiable)."""
        return self.marginal_potential_and_previous_attention(batch, action=False)[1]

    def marginal_potential_and_previous_attention(self, batch: CopyTaskBatch,
                                                  action: bool = True) -> tuple[torch.Tensor | None, torch.Tensor]:
        """Softmax model T: :meth:`marginal_potential` and :meth:`previous_token_attention` from one pass over the tables, each ``(R,)``.

        The umbrella sampler needs both at every gradient; sharing the exponentiated tables saves
        one of the two passes.  ``action=False`` returns ``None`` for the action; the tensor path then skips the readout
        statistics, the compiled loops (:attr:`compiled_action`) compute :math:`a_G` with them (one forward pass, about a
        third of the tensor path's time at L = 8, V = 4).
        """
        if self.compiled_action:
            data, previous = self._compiled_action(batch)
            return (self.logit_prior_energy() + data if action else None), previous
        statistics, previous = self.attention_logits.previous_attention_statistics(batch, with_statistics=action)
        if statistics is None:
            return None, previous
        return self.head.marginal_potential(*statistics, self.logit_prior_energy()), previous

    @torch.no_grad()
    def set_posterior_mean_readout(self, batch: CopyTaskBatch) -> None:
        r"""Set :math:`W_r` to its posterior mean given :math:`\theta_r`, :math:`\varepsilon (I + \varepsilon C)^{-1} B` (also :math:`\arg\min_W U`)."""
        C, B, _ = self.readout_statistics(batch)
        self.head.set_posterior_mean(C, B)

    def logit_prior_energy(self) -> torch.Tensor:
        r""":math:`\|\theta\|^2/(2s)`, shape ``(R,)``."""
        return (self.logit_weights**2).sum(dim=(-2, -1)) / (2 * self.logit_prior_variance)

    def prior_energy(self) -> torch.Tensor:
        r""":math:`\|\theta\|^2/(2s) + \|W\|^2/(2\lambda)`, shape ``(R,)``."""
        return self.logit_prior_energy() + self.head.prior_energy()

    def potential(self, batch: CopyTaskBatch) -> torch.Tensor:
        """The potential :math:`U_r`, shape ``(R,)``."""
        return 0.5 * self.beta * self.squared_errors(batch) + self.prior_energy()

    def forward(self, batch: CopyTaskBatch) -> torch.Tensor:
        """The potential :math:`U_r` of every run, shape ``(R,)``."""
        return self.potential(batch)

    @torch.no_grad()
    def initialise(self, starts: list[str], seeds: list[int], noise: float = 1e-2) -> None:
        r"""Set run ``r`` to the uniform-pooling or copy pattern of ``starts[r]``, plus seeded noise.

        Uniform: softmax logits 0; linear :math:`A = J/L`.  Copy: softmax weight
        :data:`~emergence.validation.copy_task.normalisation.COPY_START_WEIGHT` on the previous token; linear
        :math:`A = S`, readout :math:`W = I`.  The logits module says where: model M's whole :math:`G`, model T's
        token-token block (:math:`W_{tt} \propto \mathbb{1}\mathbb{1}^\top` gives constant logits) and
        position-position block (:math:`W_{pp} \propto S`).
        """
        L, V = self.L, self.V
        logits, normalise = self.attention_logits, self.attention_logits.normalise
        shift = torch.as_tensor(cyclic_shift(L), dtype=self.readout.dtype, device=self.readout.device)
        for r, (start, seed) in enumerate(zip(starts, seeds)):
            if start not in STARTS:
                raise ValueError(f"unknown start {start!r}; choose {' or '.join(STARTS)}")
            generator = torch.Generator().manual_seed(int(seed) + 7919)
            theta = noise * torch.randn(self.logit_weights.shape[1:], generator=generator, dtype=self.readout.dtype)
            readout = noise * torch.randn(V, V, generator=generator, dtype=self.readout.dtype)
            theta, readout = theta.to(self.readout.device), readout.to(self.readout.device)
            if start == "copy":
                readout += torch.eye(V, dtype=readout.dtype, device=readout.device)
                block = logits.positional_block(theta)
                block += normalise.copy_logit * shift
            else:
                block = logits.constant_block(theta)
                block += normalise.uniform_logit
            self.logit_weights[r] = theta
            self.readout[r] = readout

    def per_run_gradient_norm(self) -> torch.Tensor:
        r""":math:`\|\nabla U_r\|` from the current ``.grad`` fields, shape ``(R,)``."""
        total = torch.zeros(self.runs, dtype=self.readout.dtype, device=self.readout.device)
        for parameter in (self.logit_weights, self.readout):
            if parameter.grad is not None:
                total = total + (parameter.grad**2).sum(dim=(-2, -1))
        return total.sqrt()
