"""SGLD steps per second.

Our sampler (:class:`emergence.validation.samplers.sgld.SGLD`) on the copy-task potential (model M,
softmax, L = 32, V = 8, P = 128): 64 chains batched in one tensor versus 64 single-chain
samplers in a Python loop; and, where ``devinterp`` is importable, one chain with devinterp's
SGLD against one chain with ours (same potential, same step size).  Without devinterp that
row is skipped cleanly.  ``ratio`` = alternative seconds / our seconds; the first record
also carries ``chain_steps_per_second`` of the batched sampler.
"""

from __future__ import annotations

import importlib.util

from emergence.benchmarks.hardware_limits import torch_sides
from emergence.benchmarks.harness import compare
from emergence.benchmarks.training_sweeps import L, TORCH_WORK, V, run_steps, step_flops, training_stepper
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.samplers.sgld import SGLD
from emergence.base.runtime import resolve_device, torch_threads

P, CHAINS = 128, 64


CONVENTION = CopyTaskConvention(architecture="M", attention="softmax")


def _sampler(optimiser_class, **options):
    return lambda parameters: optimiser_class(parameters, lr=1e-4, **options)


def _chain(optimiser_class, chains: int, steps: int, device: str, **options) -> None:
    step = training_stepper([P] * chains, list(range(chains)), CONVENTION, _sampler(optimiser_class, **options), device)
    run_steps(step, steps, device)


def run(quick: bool) -> list[dict]:
    """Batched chains vs a loop (and devinterp where installed); one torch thread on a CPU, as sweeps use."""
    device = resolve_device(None)
    with torch_threads(1 if device == "cpu" else None):
        return _records(quick, device)


def _records(quick: bool, device: str) -> list[dict]:
    steps, repeats = (10, 2) if quick else (400, 3)
    size = f"L={L} V={V} P={P}, {steps} steps, {device}"
    rows = [compare(
        f"SGLD {CHAINS} chains batched vs loop",
        size,
        lambda: _chain(SGLD, CHAINS, steps, device),
        lambda: [_chain(SGLD, 1, steps, device) for _ in range(CHAINS)],
        repeats=repeats,
        **torch_sides(device),
    )]
    rows[0]["chain_steps_per_second"] = CHAINS * steps / rows[0]["engine_seconds"]
    rows[0] |= {"engine_flops": steps * step_flops([P] * CHAINS, list(range(CHAINS)), CONVENTION, device, _sampler(SGLD)),
                "engine_dtype": "float64", "work_counted": TORCH_WORK}
    if importlib.util.find_spec("devinterp") is not None:
        from devinterp.optim.sgld import SGLD as DevinterpSGLD

        rows.append(compare(
            "SGLD one chain: ours vs devinterp",
            size,
            lambda: _chain(SGLD, 1, steps, device, noise_level=1.0, nbeta=1.0),
            lambda: _chain(DevinterpSGLD, 1, steps, device, noise_level=1.0, nbeta=1.0),
            repeats=repeats,
            **torch_sides(device),
        ))
        rows[-1]["steps_per_second"] = steps / rows[-1]["engine_seconds"]
    return rows


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
