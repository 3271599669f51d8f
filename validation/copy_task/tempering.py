r"""Replica exchange on the copy-task posterior: ladders of batched models, cold-rung measurements.

A :class:`~emergence.validation.copy_task.models.CopyAttentionModel` with ``chains * K`` runs is
one ladder per chain (run :math:`r = cK + k` at temperature :math:`T_k`, every run on the same
training data); :func:`sample_replica_exchange` moves it with
:class:`~emergence.validation.samplers.replica_exchange.ReplicaExchange` on the ``objective``
(:func:`~emergence.validation.copy_task.training.objective_terms`; the readout marginal by
default) and measures the target rung (:math:`T = 1`, the posterior) every ``thin`` moves.

``tempering="full"`` tempers the whole action (:math:`e^{-S/T}`); ``"likelihood"`` tempers
only the data part, :math:`e^{-\|\theta\|^2/2s - (S - \|\theta\|^2/2s)/T}` (the prior is
kept; at the population level a rung at :math:`T` sees about :math:`P/T` sequences, and rungs
with :math:`T < 1` are allowed).  Step sizes are :math:`\epsilon_r = \kappa\,T_{k(r)}/h_r`
(full) or :math:`\kappa\min(T_{k(r)}, 1)/h_r` (likelihood), with :math:`h_r` the largest
Hessian eigenvalue of run :math:`r`'s action at the start.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from emergence.base.errors import EmergenceError
from emergence.validation.copy_task.data import CopyTaskBatch
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.copy_task.training import (
    RECORDED, ChainSamples, _check_finite, largest_curvature, measure_draw, objective_terms,
)
from emergence.validation.samplers.replica_exchange import ReplicaExchange, ReplicaExchangeSettings

TEMPERINGS: tuple[str, ...] = ("full", "likelihood")


@dataclass(frozen=True)
class TemperedSamples:
    """Cold-rung samples (``(chains, draws)`` tensors) and the swap acceptance per rung pair ``(K-1,)``."""

    cold: ChainSamples
    swap_acceptance: torch.Tensor
    temperatures: torch.Tensor


def sample_replica_exchange(
    model: CopyAttentionModel,
    batch: CopyTaskBatch,
    evaluation: CopyTaskBatch,
    temperatures: torch.Tensor,
    burn_in: int = 2000,
    draws: int = 100,
    thin: int = 20,
    step_fraction: float = 0.05,
    swap_every: int = 10,
    seed: int = 0,
    objective: str = "marginal",
    tempering: str = "full",
) -> TemperedSamples:
    """Parallel tempering of ``model.runs // K`` ladders; measure the cold rung every ``thin`` moves after ``burn_in``."""
    rungs = int(torch.as_tensor(temperatures).numel())
    if model.runs % rungs:
        raise ValueError(f"{model.runs} runs do not split into ladders of {rungs} rungs")
    chains = model.runs // rungs
    if tempering not in TEMPERINGS:
        raise EmergenceError(f"unknown tempering {tempering!r}; choose {' or '.join(TEMPERINGS)}")
    potential_of, parameters = objective_terms(model, objective)
    curvature = largest_curvature(model, batch, objective=objective)
    ladder = torch.as_tensor(temperatures, dtype=curvature.dtype)
    ladder = ladder if tempering == "full" else ladder.clamp(max=1.0)
    step_sizes = step_fraction * ladder.to(curvature.device).repeat(chains) / curvature
    prior_of = model.logit_prior_energy if objective == "marginal" else model.prior_energy

    def split_potential():
        action = potential_of(batch)
        if tempering == "full":
            return action
        prior = prior_of()
        return prior, action - prior

    generator = torch.Generator(device=model.readout.device).manual_seed(int(seed))
    settings = ReplicaExchangeSettings(torch.as_tensor(temperatures).tolist(), chains, swap_every)
    sampler = ReplicaExchange(parameters, split_potential, settings, step_sizes, generator=generator)
    cold = sampler.cold_runs().to(model.readout.device)
    records: dict[str, list[torch.Tensor]] = {k: [] for k in RECORDED}
    state = sampler.init()
    for step in range(burn_in + draws * thin):
        if step % 200 == 0:
            _check_finite(state.potential, "replica exchange")
        state, _ = sampler.step(state)
        if step >= burn_in and (step - burn_in) % thin == thin - 1:
            for key, value in measure_draw(model, batch, evaluation, objective, "replica exchange").items():
                records[key].append(value[cold])
    stacked = {key: torch.stack(values, dim=1) for key, values in records.items()}
    return TemperedSamples(ChainSamples(step_size=step_sizes[cold], **stacked), sampler.swap_acceptance(),
                           torch.as_tensor(temperatures))
