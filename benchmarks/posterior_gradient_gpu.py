r"""One batched gradient of the umbrella sampler's potential on a GPU, against the compiled loops on one CPU core.

The potential of :mod:`~emergence.benchmarks.posterior_gradient` (softmax model T, readout-marginal action plus
the harmonic bias, :math:`\kappa = 200`, ``R`` runs on one training set of ``P`` sequences), taken by autograd
on the GPU (``torch.cuda``; the compiled loops are CPU code) in float64 and in float32, each against the
compiled loops with the derived backward on one CPU thread (float64, the sampler's CPU path).
``ratio`` = CPU seconds / GPU seconds, both synchronised, interleaved in one process.

Work: the traffic model of the compiled loops
(:func:`~emergence.validation.copy_task.compiled_marginal_action.work_per_query`: each query's design,
normaliser, copy attention and targets as the CPU loops and their batched products move them), about the
bytes a fused kernel must move; the
row's fraction is of the GPU's own measured device-to-device copy bandwidth.  Autograd moves several times
these bytes, so the fraction says how far the GPU path is from a fused kernel's bound.  Without a GPU: no
records.  Its own module, so that ``emergence bench --only posterior_gradient_gpu`` runs the GPU rows alone
(``scripts/gpu_checks.sh`` does).
"""

from __future__ import annotations

import torch

from emergence.base.runtime import torch_threads
from emergence.benchmarks.hardware_limits import sides
from emergence.benchmarks.harness import compare
from emergence.benchmarks.posterior_gradient import gradient_call, work

SIZES = ((16, 650, 32), (24, 1200, 32), (32, 1821, 32))
"""(L, P, runs): the posterior study's sizes, 8 windows x 4 chains, P near the posterior theory's P* (L = 32: 1821)."""
WORK_COUNTED = "traffic model of the compiled loops (compiled_marginal_action.work_per_query): a fused kernel's bytes"


def run(quick: bool = False) -> list[dict]:
    """float64 and float32 on the GPU against the compiled CPU loops at each of :data:`SIZES` (5 repeats;
    ``quick``: 2, as the prepared GPU run asks); no records where torch sees no GPU."""
    if not torch.cuda.is_available():
        return []
    repeats = 2 if quick else 5
    rows = []
    with torch_threads(1):
        for L, P, runs in SIZES:
            cpu = gradient_call(L, P, runs, compiled=True)
            reference = cpu()
            for dtype in (torch.float64, torch.float32):
                gpu = gradient_call(L, P, runs, compiled=False, device="cuda", dtype=dtype)
                difference = (gpu().double().cpu() - reference).abs().max() / reference.abs().max()
                _, traffic = work(L, P, runs)
                row = compare("posterior gradient GPU autograd vs compiled CPU loops",
                              f"L={L} V=4 P={P}, {runs} runs, {str(dtype).removeprefix('torch.')}", gpu, cpu,
                              repeats=repeats, engine_bytes=traffic, engine_dtype=str(dtype).removeprefix("torch."),
                              work_counted=WORK_COUNTED, relative_difference=float(difference),
                              **sides("cuda", None, "cpu", 1))
                rows.append(row)
    return rows


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
