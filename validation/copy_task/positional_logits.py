r"""Model M's attention logits: one positional matrix :math:`G_r \in \mathbb{R}^{L\times L}` per run, shared by all sequences.

The attention :math:`A_r = \operatorname{norm}(G_r)` does not see the tokens, so the data enter only
through the batch's sufficient statistics :math:`K_r[j,k,u,w]`, :math:`Q_r[i,j,u,v]`, :math:`D_r`
(:meth:`~emergence.validation.copy_task.data.CopyTaskBatch.statistics`), and the readout statistics
(:mod:`~emergence.validation.copy_task.readout_head`) are contractions over positions:

.. math::
    B = \sum_{ij} A_{ij}\, Q[i,j], \qquad C = \sum_{jk} (A^\top A)_{jk}\, K[j,k],

at a cost independent of :math:`P`.
"""

from __future__ import annotations

import torch

from emergence.base.errors import EmergenceError
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import CopyTaskBatch
from emergence.validation.copy_task.normalisation import attention_normalisation
from emergence.validation.copy_task.readout_head import ReadoutHead


class PositionalLogits(torch.nn.Module):
    """``weights (R, L, L)``: the positional logits :math:`G_r` of ``R`` model-M runs."""

    def __init__(self, runs: int, L: int, V: int, convention: CopyTaskConvention, dtype=torch.float64, device="cpu"):
        super().__init__()
        self.L, self.V = L, V
        self.normalise = attention_normalisation(convention, L)
        self.weights = torch.nn.Parameter(torch.zeros(runs, L, L, dtype=dtype, device=device))

    def positional_block(self, theta: torch.Tensor) -> torch.Tensor:
        """The part of one run's weights ``theta (L, L)`` that are positional logits: all of it."""
        return theta

    def constant_block(self, theta: torch.Tensor) -> torch.Tensor:
        """The part of ``theta (L, L)`` whose constant value gives every logit that value: all of it."""
        return theta

    def logits(self, batch: CopyTaskBatch | None = None) -> torch.Tensor:
        """:math:`G`, ``(R, L, L)`` (no data needed)."""
        return self.weights

    def per_sequence(self, attention: torch.Tensor, batch: CopyTaskBatch) -> torch.Tensor:
        """Run attention ``(R, L, L)`` repeated for each sequence of ``batch``, ``(N, L, L)``."""
        return torch.index_select(attention, 0, batch.run)

    def run_average(self, values: torch.Tensor, batch: CopyTaskBatch) -> torch.Tensor:
        """Values of the run attentions ``(R,)`` are already per run."""
        return values

    def readout_statistics(self, batch: CopyTaskBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``C (R, V, V)``, ``B (R, V, V)``, ``D (R,)`` from the batch's sufficient statistics (module docstring)."""
        R, L, V = self.weights.shape[0], self.L, self.V
        K, Q, D = batch.statistics()  # (R, L, L, V, V), (R, L, L, V, V), (R,)
        A = self.normalise(self.weights)  # (R, L, L)
        B = (A.reshape(R, 1, L * L) @ Q.reshape(R, L * L, V * V)).reshape(R, V, V)
        C = ((A.transpose(-1, -2) @ A).reshape(R, 1, L * L) @ K.reshape(R, L * L, V * V)).reshape(R, V, V)
        return C, B, D

    def squared_errors(self, batch: CopyTaskBatch, head: ReadoutHead) -> torch.Tensor:
        r""":math:`\sum_{\mu \in r} \|Y^\mu - F^\mu\|^2`, ``(R,)``, from the readout statistics."""
        return head.squared_errors_from_statistics(*self.readout_statistics(batch))

    def previous_attention_statistics(self, batch: CopyTaskBatch, with_statistics: bool):
        """Model M has no per-sequence previous-token attention to differentiate (see model T)."""
        raise EmergenceError("previous_token_attention covers softmax model T")
