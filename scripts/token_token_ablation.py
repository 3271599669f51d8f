"""Softmax model T's copy head with and without its token-token block W_tt: Adam's a_G at a few P, and W_tt's logit share.

Developer measurement behind docs/copy_head_real_text.md ("A real corpus: TinyStories").  Each point is built
exactly as `emergence validate copy-head` builds it (same data seeds, starts, Adam schedule and objective,
default settings unless given); with ``--zero-blocks tt`` W_tt (``tt,tp,pt``: every block that sees a token) is
set to zero after the start and held there (TokenPositionLogits.hold_blocks_at_zero).  Per point it reports every run's a_G, potential and
convergence, the mean and standard deviation of a_G over all runs (seeds x starts), the global MAP's a_G per
seed (lower potential among the converged starts), and, on the evaluation windows, each block's share of the
row-centred logit variance E[b_c^2] / E[G_c^2] (b_c: the block's contribution to G minus its mean over the
keys; softmax ignores that mean).  Prints JSON lines: the settings, then one line per point as it finishes.

    python scripts/token_token_ablation.py --L 16 --V 4 --tokens corpus:tinystories_sample.txt --P 424,580 --zero-blocks tt
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import torch

from emergence.base.errors import EmergenceError
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.experiment import point_config, point_runs, summarise_map, sweep_model
from emergence.validation.copy_task.models import STARTS
from emergence.validation.copy_task.token_position_logits import BLOCKS


def block_shares(weights: torch.Tensor, tokens: torch.Tensor, run: torch.Tensor, V: int) -> dict[str, np.ndarray]:
    """Each block's share of the row-centred logit variance per run, ``(R,)``, on sequences ``tokens (N, L)`` of runs ``run (N,)``."""
    W = weights.detach()[run]  # (N, V + L, V + L)
    N, L = tokens.shape
    query = tokens[:, :, None].expand(N, L, L)
    key = tokens[:, None, :].expand(N, L, L)
    position = torch.arange(L)
    rows = torch.arange(N)[:, None, None]
    blocks = {
        "tt": W[rows, query, key],
        "tp": W[rows, query, V + position[None, None, :]],
        "pt": W[rows, V + position[None, :, None], key],
        "pp": W[:, V:, V:],
    }
    centred = {name: b - b.mean(-1, keepdim=True) for name, b in blocks.items()}
    total = sum(centred.values())

    def per_run(values: torch.Tensor) -> torch.Tensor:
        return torch.zeros(int(run.max()) + 1, dtype=values.dtype).index_add(0, run, (values**2).mean(dim=(1, 2)))

    denominator = per_run(total)
    return {name: (per_run(b) / denominator).numpy() for name, b in centred.items()}


def run_point(P: int, args: argparse.Namespace) -> dict:
    """Train one point's runs (seeds x starts) with Adam; the per-run and summary numbers (module docstring)."""
    convention = CopyTaskConvention.parse("", attention="softmax")
    config = point_config("softmax", "adam", args.L, args.V, P, args.seeds, convention, seed=args.seed,
                          objective="marginal", adam_steps=args.steps, adam_lr=0.05, dtype="float32",
                          tokens=args.tokens)
    started = time.perf_counter()
    batch, evaluation, model, _ = sweep_model([config], "cpu")
    runs = point_runs(config)  # (seed, start, chain) in the model's run order
    if args.zero_blocks:
        model.attention_logits.hold_blocks_at_zero(args.zero_blocks)
    summary = summarise_map(model, batch, evaluation, runs, config)  # per seed: both starts and the global MAP
    shares = block_shares(model.logit_weights, evaluation.tokens, evaluation.run, args.V)
    index = {(seed, start): i for i, (seed, start, _) in enumerate(runs)}
    per_run = [{"seed": entry["seed"], "start": start, "aG": entry[start]["aG"], "potential": entry[start]["potential"],
                "converged": entry[start]["converged"],
                **{f"share_{k}": float(v[index[entry["seed"], start]]) for k, v in shares.items()}}
               for entry in summary["per_seed"] for start in STARTS]
    aG = np.array([run["aG"] for run in per_run])
    return {
        "P": P, "aG_mean": float(aG.mean()), "aG_std": float(aG.std(ddof=1)),
        "aG_global_per_seed": [entry[entry["global_start"]]["aG"] for entry in summary["per_seed"]],
        "share_mean": {name: float(values.mean()) for name, values in shares.items()},
        "runs": per_run,
        "seconds": time.perf_counter() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, default=16)
    parser.add_argument("--V", type=int, default=4)
    parser.add_argument("--tokens", default="iid")
    parser.add_argument("--P", required=True, help="comma-separated P values")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--zero-blocks", default="", help="comma-separated blocks of W_QK held at zero (tt, tp, pt, pp)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    try:
        grid = [int(p) for p in args.P.split(",")]
    except ValueError:
        print(f"--P: {args.P!r} is not a comma-separated list of whole numbers", file=sys.stderr)
        sys.exit(2)
    args.zero_blocks = tuple(name for name in args.zero_blocks.split(",") if name)
    if not set(args.zero_blocks) <= set(BLOCKS):
        print(f"--zero-blocks: {','.join(args.zero_blocks)!r} names a block outside {', '.join(BLOCKS)}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps({"L": args.L, "V": args.V, "tokens": args.tokens, "seeds": args.seeds, "seed": args.seed,
                      "steps": args.steps, "zero_blocks": list(args.zero_blocks), "torch": torch.__version__}),
          flush=True)
    try:
        for P in grid:
            print(json.dumps(run_point(P, args)), flush=True)
    except EmergenceError as error:
        print(error, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
