r"""Stochastic gradient Langevin dynamics as a ``torch.optim.Optimizer`` (devinterp's conventions).

:class:`SGLD` states its update equation and parameters.
"""

from __future__ import annotations

from typing import Sequence

import torch


def block_normal(shape, generators: Sequence[torch.Generator | None], blocks: Sequence[int] | None,
                 device=None, dtype=None) -> torch.Tensor:
    r"""Standard normal draws of ``shape``; with ``blocks``, the leading axis split into consecutive blocks,
    block :math:`i` (``blocks[i]`` rows) drawn by ``generators[i]`` alone.

    Block :math:`i` equals ``torch.randn((blocks[i], *shape[1:]), generator=generators[i])``: what a batch of
    that block's rows alone would draw.  Without ``blocks``, one draw of ``shape`` by ``generators[0]``.

    >>> a, b = torch.Generator().manual_seed(1), torch.Generator().manual_seed(2)
    >>> both = block_normal((3, 2), [a, b], [1, 2])
    >>> bool((both[1:] == torch.randn((2, 2), generator=torch.Generator().manual_seed(2))).all())
    True
    """
    if blocks is None:
        return torch.randn(shape, generator=generators[0], device=device, dtype=dtype)
    return torch.cat([torch.randn((size, *shape[1:]), generator=generator, device=device, dtype=dtype)
                      for generator, size in zip(generators, blocks)])


class SGLD(torch.optim.Optimizer):
    r"""Langevin sampler with devinterp's parameters and update.

    devinterp writes the update for a log-likelihood :math:`\log p(y|x,w)` over a minibatch of
    size :math:`m` as

    .. math::
        \Delta w = \frac{\epsilon}{2}\Big[\frac{n\beta}{m}\sum_{i=1}^m \nabla \log p(y_i|x_i,w)
                   + \gamma (w_0 - w) - \lambda w\Big] + \mathcal{N}(0, \epsilon\sigma^2),

    with step size :math:`\epsilon` (``lr``), inverse temperature times data count
    :math:`n\beta` (``nbeta``), localization :math:`\gamma` (``localization``) around the
    initial point :math:`w_0`, weight decay :math:`\lambda` (``weight_decay``) and noise level
    :math:`\sigma` (``noise_level``).  This optimiser takes the same update in "minimise a
    potential" form: ``p.grad`` must hold the gradient of a **mean loss**
    :math:`\bar\ell(w) = -\frac{1}{m}\sum_i \log p(y_i|x_i,w)` (what ``loss.backward()``
    leaves for a mean negative log-likelihood), so that

    .. math::
        \Delta w = -\frac{\epsilon}{2}\nabla U(w) + \sqrt{\epsilon}\,\sigma\,\xi,\qquad
        U(w) = n\beta\,\bar\ell(w) + \frac{\gamma}{2}\|w - w_0\|^2 + \frac{\lambda}{2}\|w\|^2,
        \quad \xi \sim \mathcal{N}(0, I).

    With :math:`\sigma = 1` and :math:`\epsilon \to 0` the chain samples :math:`\propto e^{-U}`.
    To sample :math:`e^{-U}` for a potential computed directly (prior included), call
    ``U.backward()`` and use ``nbeta=1, weight_decay=0, localization=0``.  With ``noise_level=0,
    localization=0, nbeta=1`` and no weight decay, ``SGLD(lr=2η)`` is exactly ``SGD(lr=η)``.

    Batched chains: a parameter of shape ``(R, ...)`` holds ``R`` independent chains (each
    element gets its own noise).  ``lr`` may then be a tensor broadcastable to the parameter
    (``(R, 1, ..., 1)``), one step size per chain; a float is shared.  Pass a
    ``torch.Generator`` for reproducible noise, or a list of generators and the ``blocks`` they
    draw for: the leading axis is then split into consecutive blocks of chains, block :math:`i`'s
    noise drawn by generator :math:`i` (:func:`block_normal`), so that a batch of several sweep
    points draws for each point what an SGLD over that point alone draws.  The discretisation biases the stationary
    law by :math:`O(\epsilon\,h)` for curvature :math:`h` (for a Gaussian, variance
    :math:`1/(h(1-\epsilon h/4))`), and the chain diverges for :math:`\epsilon h > 4`.

    >>> w = torch.nn.Parameter(torch.zeros(3))
    >>> sampler = SGLD([w], lr=0.1, noise_level=0.0)
    >>> (0.5 * (w - 1.0).pow(2).sum()).backward()
    >>> sampler.step()
    >>> w.detach().tolist()
    [0.05000000074505806, 0.05000000074505806, 0.05000000074505806]
    """

    def __init__(
        self,
        params,
        lr: float | torch.Tensor = 1e-3,
        noise_level: float = 1.0,
        weight_decay: float = 0.0,
        localization: float = 0.0,
        nbeta: float = 1.0,
        generator: torch.Generator | Sequence[torch.Generator] | None = None,
        blocks: Sequence[int] | None = None,
    ):
        if not isinstance(lr, torch.Tensor) and lr <= 0:
            raise ValueError(f"SGLD needs a positive step size, got lr={lr}")
        if isinstance(lr, torch.Tensor) and not bool((lr > 0).all()):
            raise ValueError("SGLD needs positive step sizes")
        defaults = dict(
            lr=lr,
            noise_level=noise_level,
            weight_decay=weight_decay,
            localization=localization,
            nbeta=nbeta,
        )
        super().__init__(params, defaults)
        if isinstance(generator, torch.Generator) or generator is None:
            generator, blocks = [generator], None
        elif blocks is None or len(blocks) != len(generator):
            raise ValueError("a list of generators needs one block size per generator")
        self.generators, self.blocks = list(generator), blocks

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr = group["lr"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if group["localization"] != 0 and "initial_param" not in state:
                    state["initial_param"] = p.detach().clone()
                drift = p.grad * group["nbeta"]
                if group["weight_decay"] != 0:
                    drift = drift.add(p, alpha=group["weight_decay"])
                if group["localization"] != 0:
                    drift = drift.add(p - state["initial_param"], alpha=group["localization"])
                if isinstance(lr, torch.Tensor):
                    p.sub_(0.5 * lr.to(p.device, p.dtype) * drift)
                else:
                    p.add_(drift, alpha=-0.5 * lr)
                if group["noise_level"] != 0:
                    noise = block_normal(p.shape, self.generators, self.blocks, p.device, p.dtype)
                    if isinstance(lr, torch.Tensor):
                        p.add_(noise * (lr.to(p.device, p.dtype).sqrt() * group["noise_level"]))
                    else:
                        p.add_(noise, alpha=group["noise_level"] * lr**0.5)
        return loss
