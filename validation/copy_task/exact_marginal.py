r"""Brute-force reference for model M with linear attention: the exact readout marginal :math:`S(G)`.

For :math:`A = G` (or :math:`G/L`) the output :math:`F = \Phi W` is linear in the readout, with
:math:`\Phi = [A X^1; \dots; A X^P] \in \mathbb{R}^{PL\times V}`, so the Gaussian integral over
:math:`W` (prior :math:`\mathcal{N}(0,\lambda)`, likelihood :math:`e^{-\frac{\beta}{2}\|Y-\Phi W\|^2}`)
is the log-evidence of a linear-Gaussian model, column by column of :math:`Y`:

.. math::
    S(G) = \frac{\|G\|^2}{2s} + \sum_{v=1}^{V}\Big[\tfrac12 y_v^\top \Sigma^{-1} y_v + \tfrac12\ln\det\Sigma\Big]
           + \text{const}, \qquad \Sigma = \lambda\,\Phi\Phi^\top + \beta^{-1} I_{PL}

(:func:`marginal_action_dense`, a :math:`PL\times PL` computation).  The same integral in the
:math:`V\times V` (Woodbury) form, with :math:`K = \beta\Phi^\top\Phi + I/\lambda`,
:math:`b = \beta\Phi^\top Y`, is

.. math::
    S(G) = \frac{\|G\|^2}{2s} + \frac{\beta}{2}\|Y\|^2 - \tfrac12\operatorname{tr}(b^\top K^{-1} b)
           + \tfrac{V}{2}\ln\det K + \text{const}

(:func:`marginal_action`, cheap enough for importance sampling).  :func:`posterior_expectations`
integrates :math:`e^{-S(G)}` over :math:`G \in \mathbb{R}^{L\times L}` by self-normalised importance
sampling with a two-component Gaussian proposal (the action is even in :math:`G`), fitted from
a prior-sampling pilot.  Meant for tiny instances (:math:`L^2 \lesssim 9`).
"""

from __future__ import annotations

import math

import torch

from emergence.numerics.order_parameters import copy_order_parameters
from emergence.validation.copy_task.config import CopyTaskConvention


def _design(G: torch.Tensor, X: torch.Tensor, convention: CopyTaskConvention) -> torch.Tensor:
    """:math:`\\Phi` for a batch of logit matrices ``G (n,L,L)`` and one-hot data ``X (P,L,V)``: ``(n, PL, V)``."""
    L = G.shape[-1]
    A = convention.normalise_linear(G, L)
    return torch.einsum("nij,pjv->npiv", A, X).reshape(G.shape[0], -1, X.shape[-1])


def dense_log_evidence(design, targets, lam: float, beta: float) -> torch.Tensor:
    r""":math:`\sum_v [\tfrac12 y_v^\top\Sigma^{-1}y_v + \tfrac12\ln\det\Sigma]`, :math:`\Sigma = \lambda\Phi\Phi^\top + I/\beta`.

    ``design`` :math:`\Phi` ``(..., PL, V)``, ``targets`` ``(PL, V)``: minus the log-evidence of the
    readout (up to :math:`\tfrac{PLV}{2}\ln 2\pi`), a :math:`PL\times PL` computation; shape ``(...)``.
    """
    Sigma = lam * design @ design.transpose(-1, -2) + torch.eye(design.shape[-2], dtype=design.dtype) / beta
    solved = torch.linalg.solve(Sigma, targets.expand(*design.shape[:-2], -1, -1))
    quadratic = 0.5 * (targets * solved).sum(dim=(-2, -1))
    return quadratic + 0.5 * targets.shape[-1] * torch.linalg.slogdet(Sigma)[1]


def marginal_action_dense(G, X, Y, convention: CopyTaskConvention) -> torch.Tensor:
    """:math:`S(G)` (up to a constant) from the :math:`PL\\times PL` log-evidence; shape ``(n,)``."""
    L, V = G.shape[-1], X.shape[-1]
    s, lam, beta = convention.logit_prior_variance(L), convention.readout_prior_variance(L, V), convention.beta(L, V)
    return (G**2).sum(dim=(-2, -1)) / (2 * s) + dense_log_evidence(_design(G, X, convention), Y.reshape(-1, V), lam, beta)


def marginal_action(G, X, Y, convention: CopyTaskConvention) -> torch.Tensor:
    """:math:`S(G)` (up to a constant) in the :math:`V\\times V` form; shape ``(n,)``."""
    L, V = G.shape[-1], X.shape[-1]
    s, lam, beta = convention.logit_prior_variance(L), convention.readout_prior_variance(L, V), convention.beta(L, V)
    Phi = _design(G, X, convention)
    y = Y.reshape(-1, V)
    K = beta * Phi.transpose(-1, -2) @ Phi + torch.eye(V, dtype=G.dtype) / lam
    b = beta * Phi.transpose(-1, -2) @ y
    fit = 0.5 * (b * torch.linalg.solve(K, b)).sum(dim=(-2, -1))
    return (
        (G**2).sum(dim=(-2, -1)) / (2 * s)
        + 0.5 * beta * (y**2).sum()
        - fit
        + 0.5 * V * torch.linalg.slogdet(K)[1]
    )


def gauge_fixed_order_parameters(G: torch.Tensor, convention: CopyTaskConvention) -> dict[str, torch.Tensor]:
    """:math:`\\operatorname{sgn}(m)\\,(c_1, c_G)` of :math:`A(G)` and its coverage, as in ``training.measure``."""
    L = G.shape[-1]
    A = convention.normalise_linear(G, L)
    order = copy_order_parameters(A)
    sign = torch.where(order.m < 0, -1.0, 1.0).to(G.dtype)
    return {"c1": sign * order.c1, "cG": sign * order.cG, "coverage": order.coverage}


def posterior_expectations(
    X, Y, convention: CopyTaskConvention, samples: int = 200_000, seed: int = 0, chunk: int = 50_000
) -> dict[str, tuple[float, float]]:
    r"""Posterior means of the gauge-fixed order parameters under :math:`e^{-S(G)}`, with standard errors.

    Pilot: prior samples weighted by :math:`e^{-(S - \|G\|^2/2s)}`, folded to :math:`m \ge 0`, give a
    mean :math:`\mu` and covariance :math:`\Sigma`.  Main run: proposal
    :math:`q = \tfrac12\mathcal{N}(\mu, 2\Sigma) + \tfrac12\mathcal{N}(-\mu, 2\Sigma)`, weights
    :math:`e^{-S}/q`.  Standard errors use the importance-sampling effective sample size
    :math:`(\sum w)^2/\sum w^2`; ``"ess"`` reports it.
    """
    L = X.shape[-2]
    dtype = X.dtype
    generator = torch.Generator().manual_seed(seed)
    s = convention.logit_prior_variance(L)
    d = L * L

    def actions(G):
        return torch.cat([marginal_action(G[i : i + chunk], X, Y, convention) for i in range(0, G.shape[0], chunk)])

    pilot = math.sqrt(s) * torch.randn(samples // 2, L, L, generator=generator, dtype=dtype)
    log_w = -(actions(pilot) - (pilot**2).sum(dim=(-2, -1)) / (2 * s))
    w = torch.softmax(log_w, dim=0)
    order = copy_order_parameters(pilot)
    folded = (torch.where(order.m < 0, -1.0, 1.0).to(dtype)[:, None, None] * pilot).reshape(-1, d)
    mu = (w[:, None] * folded).sum(0)
    centred = folded - mu
    covariance = 2.0 * (w[:, None, None] * centred[:, :, None] * centred[:, None, :]).sum(0) + 1e-9 * torch.eye(d, dtype=dtype)
    proposal = torch.distributions.MultivariateNormal(mu, covariance_matrix=covariance)
    draws = mu + torch.randn(samples, d, generator=generator, dtype=dtype) @ torch.linalg.cholesky(covariance).T
    signs = torch.where(torch.rand(samples, generator=generator, dtype=dtype) < 0.5, -1.0, 1.0).to(dtype)
    draws = signs[:, None] * draws
    log_q = torch.logaddexp(proposal.log_prob(draws), proposal.log_prob(-draws)) - math.log(2.0)
    G = draws.reshape(-1, L, L)
    log_w = -actions(G) - log_q
    w = torch.softmax(log_w, dim=0)
    ess = float(1.0 / (w**2).sum())
    result: dict[str, tuple[float, float]] = {"ess": (ess, 0.0)}
    for key, values in gauge_fixed_order_parameters(G, convention).items():
        mean = (w * values).sum()
        variance = (w * (values - mean) ** 2).sum()
        result[key] = (float(mean), float(torch.sqrt(variance / ess)))
    return result
