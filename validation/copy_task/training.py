r"""MAP training (Adam) and posterior sampling (SGLD) of batched copy-task models.

Both act on a sum over independent runs, so its gradient holds every run's own gradient, Adam
(elementwise) trains every run as if alone, and SGLD with ``nbeta=1`` samples each run's law.
The ``objective`` names what is summed (:func:`objective_terms`):

* ``"joint"``: the potential :math:`U_r(\theta, W)` of
  :class:`~emergence.validation.copy_task.models.CopyAttentionModel`, over the logit weights and the readout
  (Adam: the joint MAP; SGLD: samples :math:`e^{-U_r}`);
* ``"marginal"``: the readout-marginal action :math:`S_r(\theta)`
  (:meth:`~emergence.validation.copy_task.models.CopyAttentionModel.marginal_potential`), over the logit
  weights only: the posterior over the attention weights that the theory reduces (Adam: its MAP;
  SGLD: samples :math:`e^{-S_r}`).  The readout is set to its posterior mean wherever the model
  is measured.

* :func:`train_map`: full-batch Adam with a geometric learning-rate decay from ``lr`` to
  ``final_lr``; afterwards the convergence filter asks for a small gradient,
  :math:`\|\nabla U_r\| \le g_{tol}\max(1, |U_r|)`, and a flat potential,
  :math:`|U_r(T) - U_r(T - T/10)| \le f_{tol}\max(1, |U_r|)`.
* :func:`sample_sgld`: one step size per run, :math:`\epsilon_r = \kappa/h_r` with
  :math:`h_r` the largest Hessian eigenvalue of :math:`U_r` at the start (batched power
  iteration with Hessian-vector products) and :math:`\kappa` = ``step_fraction``
  (stable for :math:`\kappa < 4`; the stationary law is biased by :math:`O(\kappa)`);
  burn-in, then every ``thin``-th state is measured.

Non-finite potentials raise :class:`~emergence.base.errors.DivergenceError`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable, Sequence

import torch

from emergence.numerics.order_parameters import copy_order_parameters
from emergence.base.errors import DivergenceError, EmergenceError
from emergence.base.progress import report_steps
from emergence.validation.copy_task.data import CopyTaskBatch
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.samplers.sgld import SGLD, block_normal


OBJECTIVES: tuple[str, ...] = ("joint", "marginal")


def objective_terms(model: CopyAttentionModel, objective: str) -> tuple[Callable[[CopyTaskBatch], torch.Tensor], list]:
    """The per-run potential ``(R,)`` of ``objective`` and the parameters it depends on."""
    if objective == "joint":
        return model.potential, [model.logit_weights, model.readout]
    if objective == "marginal":
        return model.marginal_potential, [model.logit_weights]
    raise EmergenceError(f"unknown objective {objective!r}; choose {' or '.join(OBJECTIVES)}")


@dataclass(frozen=True)
class MapResult:
    """Per-run results of :func:`train_map`, each a tensor of shape ``(R,)``; ``steps_taken``: Adam steps each run made."""

    potential: torch.Tensor
    gradient_norm: torch.Tensor
    relative_change: torch.Tensor
    converged: torch.Tensor
    steps_taken: torch.Tensor


def _check_finite(values: torch.Tensor, what: str) -> None:
    bad = ~torch.isfinite(values)
    if bool(bad.any()):
        raise DivergenceError(
            f"{what} diverged: non-finite potential in {int(bad.sum())} of {values.numel()} runs; "
            "lower the step size"
        )


EARLY_STOP_MARGIN = 0.01
"""Early stopping asks 100x less gradient and change than the ``converged`` verdict: at the
verdict's own tolerances two starts that reach one minimum (tests/test_copy_task.py) still
differed by 4e-6 in U; at the cap they agree to 1e-6."""


class _EarlyStops:
    r"""Which runs have stopped, per point: a point stops when every one of its runs passes the early-stop test.

    ``points (R,)`` names the point of each run.  A stopped run is held where it stopped: its parameter
    values are written back after every optimiser step (Adam moves a parameter with a zero gradient
    through its moments, so masking the gradient would not hold it), and the potential one window
    before its stop is kept for its flatness verdict.  With one point this is the single early stop of
    the whole batch.
    """

    def __init__(self, points: torch.Tensor, parameters: list[torch.Tensor], steps: int):
        self.points, self.parameters = points, parameters
        self.stopped = torch.zeros_like(points, dtype=torch.bool)
        self.any = False
        self.held: list[torch.Tensor] = [p.detach().clone() for p in parameters]
        self.earlier: torch.Tensor | None = None
        self.steps_taken = torch.full_like(points, steps)

    def update(self, passed: torch.Tensor, earlier: torch.Tensor, step: int) -> bool:
        """Stop the points all of whose runs ``passed`` (bool ``(R,)``) at ``step``; True when every point has stopped."""
        failures = torch.bincount(self.points[~passed], minlength=int(self.points.max()) + 1)
        newly = (failures[self.points] == 0) & ~self.stopped
        self.stopped = self.stopped | newly
        self.earlier = earlier if self.earlier is None else torch.where(newly, earlier, self.earlier)
        self.steps_taken = torch.where(newly, step, self.steps_taken)
        with torch.no_grad():
            self.held = [torch.where(_runs(newly, p), p, h) for p, h in zip(self.parameters, self.held)]
        self.any = self.any or bool(newly.any())
        return bool(self.stopped.all())

    @torch.no_grad()
    def hold(self) -> None:
        """Write the stopped runs' parameters back (after an optimiser step)."""
        if self.any:
            for parameter, held in zip(self.parameters, self.held):
                parameter.copy_(torch.where(_runs(self.stopped, parameter), held, parameter))

    def earlier_potential(self, recent: torch.Tensor) -> torch.Tensor:
        """The potential one window before the end: at its stop for a stopped run, else ``recent``."""
        return recent if self.earlier is None else torch.where(self.stopped, self.earlier, recent)


def _runs(mask: torch.Tensor, parameter: torch.Tensor) -> torch.Tensor:
    """A run mask ``(R,)`` broadcast over a parameter ``(R, ...)``."""
    return mask.reshape(-1, *([1] * (parameter.dim() - 1)))


def train_map(
    model: CopyAttentionModel,
    batch: CopyTaskBatch,
    steps: int = 2000,
    lr: float = 0.05,
    final_lr: float = 1e-4,
    gradient_tolerance: float = 1e-3,
    flatness_tolerance: float = 1e-4,
    objective: str = "joint",
    stop_when_converged: bool = True,
    points: torch.Tensor | None = None,
) -> MapResult:
    r"""Minimise every run's ``objective`` with Adam; return the convergence diagnostics.

    Run r has converged when \|\nabla U_r\| \le ``gradient_tolerance`` max(|U_r|, 1) and U_r changed
    by at most ``flatness_tolerance`` max(|U_r|, 1) over the last ``window`` = steps/10 steps.  With
    ``stop_when_converged`` the test, with both tolerances tightened by :data:`EARLY_STOP_MARGIN`,
    is made every ``window`` steps and a point stops as soon as every one of its runs passes it
    (``points (R,)``: the sweep point of each run, default one point; a stopped point is held while the
    others train, :class:`_EarlyStops`), and training ends when every point has stopped (the
    learning-rate schedule still spans ``steps``, which is the cap).  So every point of a batch of
    points trains exactly as it would alone.  ``converged`` is the verdict at the normal tolerances either way.
    """
    potential_of, parameters = objective_terms(model, objective)
    optimiser = torch.optim.Adam(parameters, lr=lr)
    decay = (final_lr / lr) ** (1.0 / max(steps - 1, 1))
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimiser, gamma=decay)
    window = max(steps // 10, 1)
    recent: deque[torch.Tensor] = deque(maxlen=window + 1)
    points = torch.zeros(model.runs, dtype=torch.long, device=model.readout.device) if points is None else points
    stops = _EarlyStops(points, parameters, steps)
    for step in range(steps):
        optimiser.zero_grad(set_to_none=True)
        potential = potential_of(batch)
        potential.sum().backward()
        if stop_when_converged and step % window == 0 and len(recent) == window + 1:
            passed = _passes(potential.detach(), recent[0], model.per_run_gradient_norm(),
                             EARLY_STOP_MARGIN * gradient_tolerance, EARLY_STOP_MARGIN * flatness_tolerance)
            if stops.update(passed, recent[0], step):
                break
        optimiser.step()
        stops.hold()
        scheduler.step()
        recent.append(potential.detach())
        if step % 200 == 0:
            _check_finite(potential.detach(), "Adam")
            report_steps(step, steps)
    optimiser.zero_grad(set_to_none=True)
    final = potential_of(batch)
    final.sum().backward()
    final = final.detach()
    _check_finite(final, "Adam")
    gradient_norm = model.per_run_gradient_norm()
    optimiser.zero_grad(set_to_none=True)
    if objective == "marginal":
        model.set_posterior_mean_readout(batch)
    earlier = stops.earlier_potential(recent[0])
    scale = final.abs().clamp(min=1.0)
    relative_change = (final - earlier).abs() / scale
    converged = _passes(final, earlier, gradient_norm, gradient_tolerance, flatness_tolerance)
    return MapResult(final, gradient_norm, relative_change, converged, stops.steps_taken)


def _passes(potential, earlier, gradient_norm, gradient_tolerance: float, flatness_tolerance: float):
    """Per run: small gradient and flat potential, both relative to max(|U|, 1) (bool tensor (R,))."""
    scale = potential.abs().clamp(min=1.0)
    flat = (potential - earlier).abs() / scale <= flatness_tolerance
    return (gradient_norm <= gradient_tolerance * scale) & flat


def largest_curvature(
    model: CopyAttentionModel, batch: CopyTaskBatch, iterations: int = 30, objective: str = "joint",
    blocks: Sequence[int] | None = None,
) -> torch.Tensor:
    r"""Largest Hessian eigenvalue of each run's ``objective`` at the current point, shape ``(R,)``.

    Batched power iteration: the runs are independent, so one Hessian-vector product of
    :math:`\sum_r U_r` is every run's own product.  The start vectors are seeded (0); with ``blocks``
    (the run counts of consecutive sweep points) each point draws its own, as it would alone.  Fails
    (returns a lower bound) when the top eigenvalue is negative-dominated; the result is clamped below
    by the prior curvature.
    """
    potential_of, parameters = objective_terms(model, objective)
    generators = [torch.Generator().manual_seed(0) for _ in (blocks or [None])]
    vectors = [block_normal(p.shape, generators, blocks, dtype=p.dtype).to(p.device) for p in parameters]

    def per_run_norm(tensors):
        return torch.sqrt(sum((t**2).sum(dim=(-2, -1)) for t in tensors))

    eigenvalue = torch.zeros(model.runs, dtype=model.readout.dtype, device=model.readout.device)
    for _ in range(iterations):
        norm = per_run_norm(vectors)
        vectors = [v / norm[:, None, None] for v in vectors]
        gradients = torch.autograd.grad(potential_of(batch).sum(), parameters, create_graph=True)
        dot = sum((g * v).sum() for g, v in zip(gradients, vectors))
        products = torch.autograd.grad(dot, parameters)
        eigenvalue = sum((h * v).sum(dim=(-2, -1)) for h, v in zip(products, vectors)).detach()
        vectors = [h.detach() for h in products]
    floor = 1.0 / model.logit_prior_variance
    if objective == "joint":
        floor = max(floor, 1.0 / model.readout_prior_variance)
    return eigenvalue.abs().clamp(min=floor)


@dataclass(frozen=True)
class ChainSamples:
    """Order parameters and losses along the chains: tensors of shape ``(R, draws)``."""

    c1: torch.Tensor
    cG: torch.Tensor
    aG: torch.Tensor
    coverage: torch.Tensor
    copy_fraction: torch.Tensor
    test_loss: torch.Tensor
    potential: torch.Tensor
    step_size: torch.Tensor


def sample_sgld(
    model: CopyAttentionModel,
    batch: CopyTaskBatch,
    evaluation: CopyTaskBatch,
    burn_in: int = 2000,
    draws: int = 100,
    thin: int = 20,
    step_fraction: float = 0.05,
    seed: int | Sequence[int] = 0,
    objective: str = "joint",
    points: torch.Tensor | None = None,
) -> ChainSamples:
    """Run one SGLD chain per run on ``objective``; measure every ``thin``-th state after ``burn_in`` steps.

    ``points`` (R,): the sweep point of each run, consecutive (as :func:`train_map` takes it); each point
    then draws its noise and its curvature's start vectors from its own generator, seeded by its entry
    of ``seed`` (a list, one per point), so that its chains are the ones it would run alone."""
    potential_of, parameters = objective_terms(model, objective)
    blocks = None if points is None else torch.bincount(points.cpu()).tolist()
    seeds = list(seed) if not isinstance(seed, int) else [seed] * (len(blocks) if blocks else 1)
    curvature = largest_curvature(model, batch, objective=objective, blocks=blocks)
    step_size = step_fraction / curvature
    shape = (-1, 1, 1)
    generators = [torch.Generator(device=model.readout.device).manual_seed(int(s)) for s in seeds]
    sampler = SGLD(parameters, lr=step_size.reshape(shape), generator=generators if blocks else generators[0],
                   blocks=blocks)
    records: dict[str, list[torch.Tensor]] = {k: [] for k in RECORDED}
    for step in range(burn_in + draws * thin):
        sampler.zero_grad(set_to_none=True)
        potential = potential_of(batch)
        potential.sum().backward()
        sampler.step()
        if step % 200 == 0:
            _check_finite(potential.detach(), "SGLD")
            report_steps(step, burn_in + draws * thin)
        if step >= burn_in and (step - burn_in) % thin == thin - 1:
            for key, value in measure_draw(model, batch, evaluation, objective, "SGLD").items():
                records[key].append(value)
    stacked = {key: torch.stack(values, dim=1) for key, values in records.items()}
    return ChainSamples(step_size=step_size, **stacked)


RECORDED: tuple[str, ...] = ("c1", "cG", "aG", "coverage", "copy_fraction", "test_loss", "potential")
"""What a chain records per draw (:func:`measure_draw`)."""


def measure_draw(model: CopyAttentionModel, batch: CopyTaskBatch, evaluation: CopyTaskBatch, objective: str,
                 sampler_name: str) -> dict[str, torch.Tensor]:
    """:func:`measure` plus the ``objective``'s potential, each ``(R,)``; the marginal's readout is set to its posterior mean first."""
    potential_of, _ = objective_terms(model, objective)
    if objective == "marginal":
        model.set_posterior_mean_readout(batch)
    measured = measure(model, evaluation)
    measured["potential"] = potential_of(batch).detach()
    _check_finite(measured["potential"], sampler_name)
    return measured


@torch.no_grad()
def measure(model: CopyAttentionModel, evaluation: CopyTaskBatch) -> dict[str, torch.Tensor]:
    r"""Order parameters of the attention and the test loss per position, each ``(R,)``.

    The attention is averaged over the evaluation sequences (model T's attention depends on
    the tokens; :math:`c_1, c_G, a_G` are linear in :math:`A`, the coverage and the copy fraction are averaged per
    sequence).  Linear attention has the exact symmetry :math:`(\theta, W) \to (-\theta, -W)`,
    so its posterior mean of :math:`c_1, c_G` vanishes; the sign is fixed by the gauge
    :math:`m = \operatorname{tr}(A^\top S) \ge 0` (reported values are :math:`\operatorname{sgn}(m)\,c`).
    Test loss per position, the theory's unit: :math:`\frac{1}{P_{eval} L}\sum_\mu \|Y^\mu - F^\mu\|^2_F`.
    """
    attention = model.attention(evaluation)
    order = copy_order_parameters(attention)
    # model T's attention is per sequence: its order parameters are averaged over each run's sequences
    order = {key: model.attention_logits.run_average(getattr(order, key), evaluation)
             for key in ("c1", "cG", "m", "coverage", "copy_fraction")}
    c1, cG, m = order["c1"], order["cG"], order["m"]
    if model.convention.attention == "linear":
        sign = torch.where(m < 0, -1.0, 1.0).to(c1.dtype)
        c1, cG, m = sign * c1, sign * cG, sign * m
    test_loss = model.squared_errors(evaluation) / (evaluation.counts * model.L)
    return {"c1": c1, "cG": cG, "aG": m / model.L, "coverage": order["coverage"],
            "copy_fraction": order["copy_fraction"], "test_loss": test_loss}
