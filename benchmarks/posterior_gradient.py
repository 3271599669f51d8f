r"""One batched gradient of the umbrella sampler's potential: the compiled loops with the derived backward against autograd.

The potential of :func:`~emergence.validation.copy_task.free_energy.run_free_energy_point` (softmax model T,
readout-marginal action plus the harmonic bias :math:`\tfrac{\kappa}{2}(a_G - a_k)^2`, :math:`\kappa = 200`,
float64), at the sizes of the posterior study: ``R`` runs (umbrella windows x chains) on one training set of
``P`` sequences, the runs started as the sampler starts them.  Engine: ``CopyAttentionModel`` with
``compiled_action=True`` (:mod:`~emergence.validation.copy_task.softmax_marginal_action`); alternative: the
same model with ``compiled_action=False`` (the autograd path, the sampler's gradient before).  Both sides
in this process, interleaved, one torch thread (as the sampler runs).  ``ratio`` = autograd / compiled.

Work (counted, not timed): the loops' per-query model
(:func:`~emergence.validation.copy_task.compiled_marginal_action.work_per_query`).  The row's fraction is of the float64 matmul rate;
``engine_bytes`` and ``achieved_bytes_per_second`` give the traffic model's rate against the copy bandwidth.
"""

from __future__ import annotations

import torch

from emergence.base.runtime import torch_threads
from emergence.benchmarks.harness import compare
from emergence.validation.copy_task.compiled_marginal_action import work_per_query
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.free_energy import start_windows, training_data_seed
from emergence.validation.copy_task.models import CopyAttentionModel

SIZES = ((8, 272, 20), (16, 650, 32), (24, 1200, 32))
"""(L, P, runs): L = 8 at the top of its P grid (5 windows x 4 chains), L = 16 and 24 at 8 windows x 4 chains."""
V, KAPPA = 4, 200.0
WORK_COUNTED = "per-query model of the compiled loops (compiled_marginal_action.work_per_query)"


def gradient_call(L: int, P: int, runs: int, compiled: bool, device: str = "cpu", dtype=torch.float64):
    """A call that takes one batched gradient of the biased potential (model, data and start built once, here;
    on ``device`` in ``dtype``, the call synchronised there).  The compiled loops run on a CPU in float64 only:
    elsewhere ``compiled`` must be ``False``."""
    convention = CopyTaskConvention(attention="softmax")
    batch = copy_task_batch([P] * runs, L, V, [training_data_seed(0, P)] * runs, convention.shift, convention.targets,
                            dtype, device)
    model = CopyAttentionModel(runs, L, V, convention, dtype=dtype, device=device, compiled_action=compiled)
    centres = torch.linspace(0.05, 0.75, runs, dtype=dtype, device=device)
    start_windows(model, centres, 0)
    synchronise = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)

    def gradient() -> torch.Tensor:
        action, aG = model.marginal_potential_and_previous_attention(batch)
        grad = torch.autograd.grad((action + 0.5 * KAPPA * (aG - centres) ** 2).sum(), model.logit_weights)[0]
        synchronise()
        return grad

    return gradient


def work(L: int, P: int, runs: int) -> tuple[float, float]:
    """(flops, bytes) of one compiled gradient of ``runs`` runs of ``P`` sequences."""
    flops, traffic = work_per_query(L, V)
    return runs * P * L * flops, runs * P * L * traffic


def run(quick: bool) -> list[dict]:
    """Compiled against autograd at each of :data:`SIZES` (``quick``: the first two, 3 repeats)."""
    sizes, repeats = (SIZES[:2], 3) if quick else (SIZES, 7)
    rows = []
    with torch_threads(1):
        for L, P, runs in sizes:
            engine, alternative = gradient_call(L, P, runs, True), gradient_call(L, P, runs, False)
            difference = (engine() - alternative()).abs().max() / alternative().abs().max()
            flops, traffic = work(L, P, runs)
            row = compare("posterior gradient compiled vs autograd", f"L={L} V={V} P={P}, {runs} runs, cpu",
                          engine, alternative, repeats=repeats, engine_flops=flops, engine_dtype="float64",
                          work_counted=WORK_COUNTED, engine_bytes=traffic, engine_cores=1, alternative_cores=1,
                          engine_device="cpu", alternative_device="cpu",
                          relative_difference=float(difference))
            row["achieved_bytes_per_second"] = traffic / row["engine_seconds"]
            rows.append(row)
    return rows


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
