"""Sample linear model T's posterior over W_QK by HMC at one (L, P) and keep the draws, for the trial diagnosis.

Developer measurement behind docs/posterior_free_energy.md ("Linear attention: which assumption breaks").
The sampler is the linear validation's (validation/copy_task/free_energy.py: half the chains started
uniform, half copy, the readout marginalised), but every recorded draw also keeps W_QK, so the posterior's
moments can be set beside the theory's trial (scripts/linear_posterior_trials.py reads the file).
Writes an .npz with ``weights (chains, draws, V + L, V + L)``, ``c1``, ``cG`` (gauge-fixed, held-out
sequences), ``potential`` and a JSON line of the config, diagnostics and versions on stdout.

    python scripts/linear_posterior_samples.py --L 16 --P 128 --chains 8 --draws 400 --out /tmp/l16p128.npz
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time

import numpy as np
import torch


def sample(L: int, V: int, P: int, chains: int, warmup: int, draws: int, leapfrog: int, seed: int) -> dict:
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.data import copy_task_batch
    from emergence.validation.copy_task.free_energy import EVALUATION_SEQUENCES, training_data_seed
    from emergence.validation.copy_task.models import CopyAttentionModel
    from emergence.validation.copy_task.training import measure_draw
    from emergence.validation.samplers.diagnostics import rhat_and_bulk_ess
    from emergence.validation.samplers.adaptation import adapt_and_sample
    from emergence.validation.samplers.hmc import HMC, HMCSettings

    convention = CopyTaskConvention.parse("", attention="linear")
    data_seed = training_data_seed(seed, P)
    batch = copy_task_batch([P] * chains, L, V, [data_seed] * chains, convention.shift, convention.targets, torch.float64)
    evaluation = copy_task_batch([EVALUATION_SEQUENCES] * chains, L, V, [data_seed + 104_729] * chains,
                                 convention.shift, convention.targets, torch.float64)
    model = CopyAttentionModel(chains, L, V, convention)
    model.initialise(["uniform" if r < chains // 2 else "copy" for r in range(chains)],
                     [seed * 1_000_003 + r for r in range(chains)])

    def record():
        measured = measure_draw(model, batch, evaluation, "marginal", "HMC")
        return {"c1": measured["c1"], "cG": measured["cG"], "potential": measured["potential"],
                "weights": model.logit_weights.detach().clone()}

    settings = HMCSettings(step_size=0.1 * math.sqrt(model.logit_prior_variance), leapfrog_steps=leapfrog)
    sampler = HMC([model.logit_weights], lambda: model.marginal_potential(batch), settings,
                  generator=torch.Generator().manual_seed(seed + 17))
    samples = adapt_and_sample(sampler, warmup, draws, record)
    out = {key: samples[key].cpu().numpy() for key in ("c1", "cG", "potential", "weights")}
    out["diagnostics"] = {key: rhat_and_bulk_ess(out[key]) for key in ("c1", "cG")}
    out["acceptance"] = float(samples["acceptance"].mean())
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, required=True)
    parser.add_argument("--V", type=int, default=4)
    parser.add_argument("--P", type=int, required=True)
    parser.add_argument("--chains", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=150)
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--leapfrog", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.L < 2 or args.V < 2 or args.P < 1 or args.chains < 2 or args.chains % 2 or args.draws < 4:
        print("need --L >= 2, --V >= 2, --P >= 1, an even --chains >= 2, --draws >= 4", file=sys.stderr)
        return 2
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        print(f"no such folder for --out: {args.out}", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    started = time.time()
    result = sample(args.L, args.V, args.P, args.chains, args.warmup, args.draws, args.leapfrog, args.seed)
    record = {**vars(args), "seconds": time.time() - started, "acceptance": result["acceptance"],
              "rhat_ess": result["diagnostics"], "c1_mean": float(result["c1"].mean()),
              "cG_mean": float(result["cG"].mean()), "load": os.getloadavg()[0],
              "machine": platform.processor() or platform.machine(),
              "versions": {"torch": torch.__version__, "numpy": np.__version__}}
    handle, temporary = tempfile.mkstemp(suffix=".npz", dir=os.path.dirname(os.path.abspath(args.out)))
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, c1=result["c1"], cG=result["cG"], potential=result["potential"],
                     weights=result["weights"].astype(np.float32), config=json.dumps(record))
        os.replace(temporary, args.out)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    print(json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
