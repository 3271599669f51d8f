"""The closed-form F of the gauge-correct and the block theory at their own modes against the exact F_Q of their trials.

Developer measurement behind docs/posterior_free_energy.md ("The block trial in closed form").  For each trial
(``gauge``, ``block``) and mode (uniform, copy), the theory's mode at (L, V, P) (20000 Monte Carlo rows) gives
the closed-form F = KL + S_data(closure); the same parameters as a BlockTrial (numerics/copy_head/block_trial.py;
the block theory's KL-optimal ratios, no diagonal mean or ratio) are drawn --draws times and
F_Q = E_Q[U + ln Q] = E_Q[U] - H[Q] is estimated with the model's potential on the training set of data seed 0.
Both KLs are exact, so F - F_Q is the closure's data-term offset S_data(closure) - E_Q[S_data], with the Monte
Carlo error of E_Q[U].  Prints one JSON object.

    python scripts/block_closure_offset.py --L 12 --P 440 --draws 4000
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np
import torch

from emergence.numerics.copy_head.block_trial import BlockTrial
from emergence.numerics.copy_head.posterior import PosteriorTheory
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.posterior_diagnosis import trial_potential

MAX_SIZE = 32
"""V + L above this is refused: the block trial's dense (N^2, N^2) bases."""


def trial_of(mode, trial: str, L: int, V: int, s: float) -> BlockTrial:
    """The BlockTrial at a theory mode: the gauge-correct trial, or the block theory's KL-optimal ratios."""
    if trial == "gauge":
        return BlockTrial.gauge(L, V, s, mode.g, mode.t_u, mode.t_v)
    return BlockTrial(L, V, s, mode.g, 0.0, dict(mode.ratios))


def offset(mode, trial: BlockTrial, potential, standard: np.ndarray) -> dict[str, float]:
    """Closed-form F, the Monte Carlo F_Q = E_Q[U + ln Q] (= E_Q[U] - H[Q], lower variance) with its error, and F - F_Q."""
    theta, log_q = trial.sample(standard)
    minus_log_weight = potential(theta) + log_q
    F_Q = float(minus_log_weight.mean())
    return {"F_closed": mode.free_energy, "F_Q": F_Q,
            "F_Q_error": float(minus_log_weight.std(ddof=1) / np.sqrt(len(minus_log_weight))),
            "offset": mode.free_energy - F_Q, "aG": mode.aG}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, required=True)
    parser.add_argument("--V", type=int, default=4)
    parser.add_argument("--P", type=int, required=True)
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws (the training data seed is 0)")
    args = parser.parse_args(argv)
    if args.L < 3 or args.V < 2 or args.P < 1 or not 40 <= args.draws <= 40_000 or args.V + args.L > MAX_SIZE:
        print(f"need --L >= 3, --V >= 2, --V + --L <= {MAX_SIZE}, --P >= 1, 40 <= --draws <= 40000", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    start = time.time()
    convention = CopyTaskConvention.parse("", attention="softmax")
    potential = trial_potential(args.L, args.V, args.P, convention, seed=0)
    N = args.V + args.L
    standard = np.random.default_rng(args.seed).standard_normal((args.draws, N * N))
    out: dict = {"L": args.L, "V": args.V, "P": args.P, "config": vars(args), "data_seed": 0,
                 "machine": platform.processor() or platform.machine(),
                 "versions": {"torch": torch.__version__, "numpy": np.__version__}}
    for trial in ("gauge", "block"):
        theory = PosteriorTheory(args.L, args.V, convention, draws=20_000, trial=trial)
        out[trial] = {name: offset(mode, trial_of(mode, trial, args.L, args.V, theory.s), potential, standard)
                      for name, mode in theory.modes(float(args.P)).items()}
    out["seconds"] = time.time() - start
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
