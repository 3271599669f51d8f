r"""Stochastic gradient Langevin dynamics: one update, a ``step(state) -> (state, info)`` kernel over it, and a
``torch.optim.Optimizer`` adapter over the same update (devinterp's conventions).

:func:`langevin_update` is the update equation, with its settings a frozen :class:`SGLDSettings`; :class:`Langevin`
is the kernel, whose state (:class:`~emergence.validation.samplers.leapfrog.ChainState`) carries the positions, the potential there and its gradient, so
that each step costs one gradient (the one at the point it moves to); :class:`SGLD` is the optimiser that applies
the same update to ``p.grad`` (training loops that call ``loss.backward()`` themselves).

>>> w = torch.zeros(2, 1, dtype=torch.float64, requires_grad=True)
>>> kernel = Langevin([w], lambda: 0.5 * ((w - 1.0) ** 2).sum(-1), SGLDSettings(noise_level=0.0), step_size=0.1)
>>> state, info = kernel.step(kernel.init())
>>> w[:, 0].tolist(), state.potential.tolist(), info.gradients  # w = 0.05: U = 0.95^2 / 2
([0.05, 0.05], [0.45125, 0.45125], 1)
>>> SGLDSettings(noise_level=-1.0)
Traceback (most recent call last):
...
ValueError: SGLD needs a finite noise level >= 0, got -1.0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from emergence.validation.samplers.leapfrog import ChainState, potential_and_gradient


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


@dataclass(frozen=True)
class SGLDSettings:
    r"""What the SGLD update is set to (:func:`langevin_update`): the noise level :math:`\sigma`, weight decay
    :math:`\lambda`, localization :math:`\gamma` and :math:`n\beta`.  The step size is not here: it is per chain
    (a float or a tensor broadcastable to the positions), held by the kernel or the optimiser."""

    noise_level: float = 1.0
    weight_decay: float = 0.0
    localization: float = 0.0
    nbeta: float = 1.0

    def __post_init__(self):
        if not (math.isfinite(self.noise_level) and self.noise_level >= 0):
            raise ValueError(f"SGLD needs a finite noise level >= 0, got {self.noise_level}")
        if not (math.isfinite(self.weight_decay) and math.isfinite(self.localization)):
            raise ValueError(f"SGLD needs a finite weight decay and localization, got {self.weight_decay}, "
                             f"{self.localization}")
        if not (math.isfinite(self.nbeta) and self.nbeta > 0):
            raise ValueError(f"SGLD needs a positive finite nbeta, got {self.nbeta}")


def check_step_size(step_size: float | torch.Tensor) -> None:
    """Refuse a step size that is not positive (every entry, for a tensor)."""
    if isinstance(step_size, torch.Tensor):
        if not bool((step_size > 0).all()):
            raise ValueError("SGLD needs positive step sizes")
    elif not step_size > 0:
        raise ValueError(f"SGLD needs a positive step size, got lr={step_size}")


@torch.no_grad()
def langevin_update(position: torch.Tensor, gradient: torch.Tensor, step_size: float | torch.Tensor,
                    settings: SGLDSettings, noise: Callable[[], torch.Tensor],
                    anchor: torch.Tensor | None = None) -> None:
    r"""One SGLD update of ``position`` in place, from ``gradient`` :math:`= \nabla\bar\ell(w)` at it:

    .. math::
        \Delta w = -\frac{\epsilon}{2}\big[n\beta\,\nabla\bar\ell(w) + \lambda w + \gamma(w - w_0)\big]
                   + \sqrt{\epsilon}\,\sigma\,\xi,\qquad \xi \sim \mathcal N(0, I),

    with :math:`\epsilon` ``step_size`` (a float, or a tensor broadcastable to ``position``, one per chain),
    :math:`\sigma, \lambda, \gamma, n\beta` from ``settings``, :math:`w_0` ``anchor`` (needed only for
    :math:`\gamma \ne 0`) and :math:`\xi` = ``noise()`` (shaped like ``position``; not drawn for :math:`\sigma = 0`).
    """
    drift = gradient * settings.nbeta
    if settings.weight_decay != 0:
        drift = drift.add(position, alpha=settings.weight_decay)
    if settings.localization != 0:
        drift = drift.add(position - anchor, alpha=settings.localization)
    if isinstance(step_size, torch.Tensor):
        position.sub_(0.5 * step_size.to(position.device, position.dtype) * drift)
    else:
        position.add_(drift, alpha=-0.5 * step_size)
    if settings.noise_level != 0:
        if isinstance(step_size, torch.Tensor):
            position.add_(noise() * (step_size.to(position.device, position.dtype).sqrt() * settings.noise_level))
        else:
            position.add_(noise(), alpha=settings.noise_level * step_size**0.5)


@dataclass(frozen=True)
class SGLDInfo:
    """One update of every chain: the potential ``(R,)`` it started from and the gradients it took."""

    start_potential: torch.Tensor
    gradients: int


class Langevin:
    r"""The SGLD kernel: :func:`langevin_update` of every chain per :meth:`step`, on a potential computed directly.

    ``parameters``: the positions, each ``(R, ...)``; ``potential()`` returns :math:`U` ``(R,)`` at them (the
    update's :math:`\bar\ell`, prior included; use ``nbeta=1``, no weight decay or localization to sample
    :math:`\propto e^{-U}`).  ``step_size``: a float or a tensor broadcastable to every parameter (``(R, 1, ...)``).
    The state keeps the gradient at the current positions, so :meth:`step` takes one gradient, at the point it
    moves to; the localization's :math:`w_0` is where the parameters start.  :meth:`init` (one gradient) is the state at the current parameters: call it again after anything
    else moves them (a replica swap).  ``generator``: the noise's, one standard normal draw per parameter per step.
    """

    def __init__(self, parameters: Sequence[torch.Tensor], potential: Callable[[], torch.Tensor],
                 settings: SGLDSettings, step_size: float | torch.Tensor, generator: torch.Generator | None = None):
        check_step_size(step_size)
        self.parameters = list(parameters)
        self.anchors = [p.detach().clone() if settings.localization != 0 else None for p in self.parameters]
        self.potential = potential
        self.settings = settings
        self.step_size = step_size
        self.generator = generator
        self.gradient_evaluations = 0

    def init(self) -> ChainState:
        """The state at the current parameters: the potential and its gradient (one gradient evaluation)."""
        self.gradient_evaluations += 1
        potential, gradients = potential_and_gradient(self.potential, self.parameters)
        return ChainState(tuple(self.parameters), potential, tuple(gradients))

    def step(self, state: ChainState) -> tuple[ChainState, SGLDInfo]:
        """One update of every chain from ``state`` (which must be at the current parameters)."""
        for position, gradient, anchor in zip(self.parameters, state.gradients, self.anchors):
            langevin_update(position, gradient, self.step_size, self.settings,
                            lambda: block_normal(position.shape, [self.generator], None, position.device,
                                                 position.dtype), anchor)
        return self.init(), SGLDInfo(state.potential, 1)


class SGLD(torch.optim.Optimizer):
    r"""Langevin sampler with devinterp's parameters, as an optimiser: :func:`langevin_update` on ``p.grad``.

    devinterp writes the update for a log-likelihood :math:`\log p(y|x,w)` over a minibatch of
    size :math:`m` as

    .. math::
        \Delta w = \frac{\epsilon}{2}\Big[\frac{n\beta}{m}\sum_{i=1}^m \nabla \log p(y_i|x_i,w)
                   + \gamma (w_0 - w) - \lambda w\Big] + \mathcal{N}(0, \epsilon\sigma^2),

    with step size :math:`\epsilon` (``lr``), inverse temperature times data count
    :math:`n\beta` (``nbeta``), localization :math:`\gamma` (``localization``) around the
    initial point :math:`w_0`, weight decay :math:`\lambda` (``weight_decay``) and noise level
    :math:`\sigma` (``noise_level``); the last four form its :class:`SGLDSettings`.  This optimiser takes the same
    update in "minimise a potential" form: ``p.grad`` must hold the gradient of a **mean loss**
    :math:`\bar\ell(w) = -\frac{1}{m}\sum_i \log p(y_i|x_i,w)` (what ``loss.backward()``
    leaves for a mean negative log-likelihood), so that

    .. math::
        \Delta w = -\frac{\epsilon}{2}\nabla U(w) + \sqrt{\epsilon}\,\sigma\,\xi,\qquad
        U(w) = n\beta\,\bar\ell(w) + \frac{\gamma}{2}\|w - w_0\|^2 + \frac{\lambda}{2}\|w\|^2,
        \quad \xi \sim \mathcal{N}(0, I).

    With :math:`\sigma = 1` and :math:`\epsilon \to 0` the chain samples :math:`\propto e^{-U}`.
    To sample :math:`e^{-U}` for a potential computed directly (prior included), call
    ``U.backward()`` and use ``nbeta=1, weight_decay=0, localization=0`` (or the :class:`Langevin` kernel, which
    takes the gradient itself).  With ``noise_level=0, localization=0, nbeta=1`` and no weight decay,
    ``SGLD(lr=2η)`` is exactly ``SGD(lr=η)``.

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
        check_step_size(lr)
        settings = SGLDSettings(noise_level=noise_level, weight_decay=weight_decay, localization=localization,
                                nbeta=nbeta)
        super().__init__(params, dict(lr=lr, settings=settings))
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
            settings = group["settings"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if settings.localization != 0 and "initial_param" not in state:
                    state["initial_param"] = p.detach().clone()
                langevin_update(p, p.grad, group["lr"], settings,
                                lambda: block_normal(p.shape, self.generators, self.blocks, p.device, p.dtype),
                                state.get("initial_param"))
        return loss
