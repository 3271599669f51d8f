r"""The readout of the copy-task models: ``R`` linear maps :math:`W_r \in \mathbb{R}^{V\times V}` and what the data say about them.

Whatever the architecture, the output is linear in the readout: :math:`F^\mu = \Phi^\mu W` with the
design :math:`\Phi^\mu = A^\mu X^\mu` (``L x V``).  The data term therefore enters only through the
readout statistics

.. math::
    C = \sum_\mu \Phi^{\mu\top}\Phi^\mu, \quad B = \sum_\mu \Phi^{\mu\top} Y^\mu, \quad D = \sum_\mu \|Y^\mu\|^2,
    \qquad \sum_\mu \|Y^\mu - \Phi^\mu W\|^2 = D - 2\langle W, B\rangle + \langle W, CW\rangle,

which a logits module computes (:mod:`~emergence.validation.copy_task.positional_logits`,
:mod:`~emergence.validation.copy_task.token_position_logits`), and the Gaussian prior
:math:`W \sim \mathcal{N}(0, \lambda)` makes the readout integrable in closed form
(:meth:`ReadoutHead.marginal_potential`).  With :math:`\varepsilon = \beta\lambda` the posterior of
:math:`W_r` given the logit weights is Gaussian with mean :math:`\varepsilon(I + \varepsilon C)^{-1}B`.
"""

from __future__ import annotations

import torch

from emergence.validation.copy_task.data import RunMajorGroup


class ReadoutHead(torch.nn.Module):
    r"""``R`` readouts ``readout (R, V, V)`` with prior variance :math:`\lambda` at inverse temperature :math:`\beta`."""

    def __init__(self, runs: int, V: int, prior_variance: float, beta: float, dtype=torch.float64, device="cpu"):
        super().__init__()
        self.V, self.prior_variance, self.beta = V, prior_variance, beta
        self.readout = torch.nn.Parameter(torch.zeros(runs, V, V, dtype=dtype, device=device))

    def prior_energy(self) -> torch.Tensor:
        r""":math:`\|W\|^2/(2\lambda)`, shape ``(R,)``."""
        return (self.readout**2).sum(dim=(-2, -1)) / (2 * self.prior_variance)

    def squared_errors_from_statistics(self, C, B, D) -> torch.Tensor:
        r""":math:`D - 2\langle W, B\rangle + \langle W, CW\rangle` per run, ``(R,)`` (cost independent of :math:`P`)."""
        W = self.readout
        return D - 2 * (W * B).sum(dim=(-2, -1)) + (W * (C @ W)).sum(dim=(-2, -1))

    def group_squared_errors(self, group: RunMajorGroup, design: torch.Tensor) -> torch.Tensor:
        r""":math:`\sum_\mu \|Y^\mu - \Phi^\mu W\|^2` of one group's runs, ``(R_g,)``, summed residual by residual
        (no cancellation between large terms, which matters in float32) from the design ``(R_g, P_g, L, V)``."""
        residual = group.targets - design @ self.readout[group.runs][:, None]  # (R_g, P_g, L, V)
        return (residual * residual).sum(dim=(1, 2, 3))

    def _posterior(self, C, B) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Cholesky factor of :math:`I + \varepsilon C` ``(R, V, V)`` and the solve :math:`(I + \varepsilon C)^{-1}B` ``(R, V, V)``."""
        epsilon = self.beta * self.prior_variance
        identity = torch.eye(self.V, dtype=C.dtype, device=C.device)
        factor, info = torch.linalg.cholesky_ex(identity + epsilon * C)
        # a failed factorisation (non-finite logits) becomes a NaN action: the trainers' divergence check
        factor = torch.where((info == 0)[:, None, None], factor, torch.nan)
        return factor, torch.cholesky_solve(B, factor)

    def marginal_potential(self, C, B, D, logit_prior_energy: torch.Tensor) -> torch.Tensor:
        r"""The readout-marginal action :math:`S_r(\theta) = -\ln\int dW\, \mathcal{N}(W; 0, \lambda)\, e^{-U_r + \|W\|^2/2\lambda}`, ``(R,)``.

        The Gaussian integral over :math:`W` (Woodbury form, :math:`\varepsilon = \beta\lambda`), given the
        statistics ``C, B, D`` and the logit weights' prior energy :math:`\|\theta\|^2/2s`:

        .. math::
            S(\theta) = \frac{\|\theta\|^2}{2s} + \frac{\beta}{2}\big[D - \varepsilon
            \operatorname{tr}(B^\top (I + \varepsilon C)^{-1} B)\big] + \frac{V}{2}\ln\det(I + \varepsilon C).

        Without the last (Occam) term it is :math:`\min_W U(\theta, W)`, the joint MAP's profile.
        """
        factor, solved = self._posterior(C, B)
        epsilon = self.beta * self.prior_variance
        data = 0.5 * self.beta * (D - epsilon * (B * solved).sum(dim=(-2, -1)))
        occam = self.V * torch.log(torch.diagonal(factor, dim1=-2, dim2=-1)).sum(dim=-1)
        return logit_prior_energy + data + occam

    @torch.no_grad()
    def set_posterior_mean(self, C, B) -> None:
        r"""Set :math:`W_r` to its posterior mean :math:`\varepsilon (I + \varepsilon C)^{-1} B` (also :math:`\arg\min_W U`)."""
        _, solved = self._posterior(C, B)
        self.readout.copy_(self.beta * self.prior_variance * solved)


def add_design_statistics(C, B, D, group: RunMajorGroup, design: torch.Tensor):
    r"""``C, B, D`` plus one group's :math:`\Phi^\top\Phi`, :math:`\Phi^\top Y`, :math:`\|Y\|^2` (design ``(R_g, P_g, L, V)``) at its runs."""
    runs, width, L, V = design.shape
    design = design.reshape(runs, width * L, V)
    targets = group.targets.reshape(runs, width * L, V)
    C = C.index_add(0, group.runs, design.transpose(-1, -2) @ design)
    B = B.index_add(0, group.runs, design.transpose(-1, -2) @ targets)
    D = D.index_add(0, group.runs, (targets * targets).sum(dim=(-2, -1)))
    return C, B, D
