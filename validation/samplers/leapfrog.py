r"""The leapfrog (Störmer–Verlet) integrator of Hamiltonian dynamics, batched over chains.

For :math:`H(\theta, p) = U(\theta) + \tfrac12 p^\top M^{-1} p` (diagonal inverse mass :math:`M^{-1}`),
:func:`leapfrog` takes :math:`n` steps of size :math:`\epsilon` from :math:`(\theta_0, p_0)` given
:math:`\nabla U(\theta_0)`:

.. math::
    p_{1/2} = p_0 - \tfrac{\epsilon}{2}\nabla U(\theta_0),\quad
    \theta_{k+1} = \theta_k + \epsilon M^{-1} p_{k+1/2},\quad
    p_{k+3/2} = p_{k+1/2} - \epsilon\nabla U(\theta_{k+1}),

the last momentum update a half step, so :math:`p_n = p_{n-1/2} - \tfrac{\epsilon}{2}\nabla U(\theta_n)`.
The map is volume preserving and reversible (:math:`(\theta_n, -p_n) \mapsto (\theta_0, -p_0)`), and
its energy error is :math:`O(\epsilon^2)` for a fixed trajectory length.  It costs :math:`n` gradients: the
start gradient is the one the previous trajectory ended with.

Batched chains: every tensor has a leading chain axis ``(R, ...)``, the step size is ``(R,)`` (one per
chain), and ``potential_and_gradient()`` returns the potentials ``(R,)`` and their gradients at the
current positions (each chain's gradient is that of the sum).

>>> theta, p = torch.zeros(1, 1, dtype=torch.float64), torch.ones(1, 1, dtype=torch.float64)
>>> def harmonic():  # U = theta^2 / 2
...     return 0.5 * theta[:, 0] ** 2, [theta.clone()]
>>> U, _ = leapfrog([theta], [p], [torch.zeros_like(theta)], harmonic, torch.tensor([0.1], dtype=torch.float64),
...                 [torch.ones_like(theta)], steps=10)
>>> round(float(U[0] + 0.5 * p[0, 0] ** 2), 3)  # H = 1/2 at the start; the error is O(eps^2): 0.0009
0.501
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

PotentialAndGradient = Callable[[], tuple[torch.Tensor, list[torch.Tensor]]]
"""``() -> (U (R,), [dU/dtheta for each position tensor])`` at the current positions."""


def per_chain(values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """An ``(R,)`` tensor shaped to broadcast against a tensor ``like`` ``(R, ...)``."""
    return values.reshape(-1, *[1] * (like.dim() - 1))


@dataclass(frozen=True)
class ChainState:
    """A kernel's state: the chains' positions (moved in place, ``(R, ...)`` each), the potential ``(R,)`` there and its
    gradients (one per position tensor), so the next step starts from the gradient this one ended with."""

    positions: tuple[torch.Tensor, ...]
    potential: torch.Tensor
    gradients: tuple[torch.Tensor, ...]


def potential_and_gradient(potential: Callable[[], torch.Tensor],
                           positions: Sequence[torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """``potential()`` ``(R,)`` at the current ``positions`` and its gradients (one autograd pass of the sum), detached."""
    with torch.enable_grad():
        value = potential()
        gradients = torch.autograd.grad(value.sum(), list(positions))
    return value.detach(), [g.detach() for g in gradients]


@torch.no_grad()
def leapfrog(positions: Sequence[torch.Tensor], momenta: Sequence[torch.Tensor], gradients: Sequence[torch.Tensor],
             potential_and_gradient: PotentialAndGradient, step_size: torch.Tensor,
             inverse_mass: Sequence[torch.Tensor], steps: int) -> tuple[torch.Tensor, list[torch.Tensor]]:
    r"""``steps`` leapfrog steps (module docstring), moving ``positions`` and ``momenta`` in place.

    ``gradients``: :math:`\nabla U(\theta_0)`, one tensor per position tensor; ``step_size`` ``(R,)``;
    ``inverse_mass``: one tensor per position tensor, broadcastable to it.  Returns :math:`U(\theta_n)` ``(R,)``
    and :math:`\nabla U(\theta_n)`, after ``steps`` calls of ``potential_and_gradient``.
    """
    potential = torch.full((positions[0].shape[0],), float("nan"), dtype=positions[0].dtype, device=positions[0].device)
    for p, g in zip(momenta, gradients):
        p -= 0.5 * per_chain(step_size, p) * g
    for k in range(steps):
        for theta, p, m in zip(positions, momenta, inverse_mass):
            theta += per_chain(step_size, p) * m * p
        potential, gradients = potential_and_gradient()
        scale = 0.5 if k == steps - 1 else 1.0
        for p, g in zip(momenta, gradients):
            p -= scale * per_chain(step_size, p) * g
    return potential, list(gradients)
