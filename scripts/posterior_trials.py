"""Compare the posterior theory's Gaussian trials at one (L, P): modes, profile Delta F, importance-weight gap.

Developer measurement behind docs/posterior_free_energy.md ("The gauge-correct trial", "The row trial", "The block
trial in closed form").  Prints one JSON
object: per trial the two modes (F, a_G, g, t_u, t_v), F_copy - F_uniform, the profile's Delta F (the
measurement's estimator, divide 0.3, 4000 Monte Carlo rows) and, with --importance-draws N > 0, the
importance-weighted free energies of both modes on the measurement's training set (seed 0), from each
trial's own draws (the row trial: no profile; its modes only).
With --P-star the posterior P* on the fixed scan of [20, 20000] (16 points, 20000 rows) instead.

    python scripts/posterior_trials.py --L 12 --P 440 --importance-draws 4000
    python scripts/posterior_trials.py --L 12 --P-star
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np
import torch

from emergence.numerics.copy_head.posterior import TRIALS, PosteriorTheory
from emergence.numerics.copy_head.posterior_action import posterior_coexistence
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.posterior_diagnosis import mode_free_energies
from emergence.validation.copy_task.posterior_free_energy import PROFILE_POINTS, PROFILE_RANGE, delta_F_of_profile


def compare(L: int, V: int, P: float, trial: str, importance_draws: int, seed: int) -> dict:
    convention = CopyTaskConvention.parse("", attention="softmax")
    start = time.time()
    modes = PosteriorTheory(L, V, convention, draws=20_000, trial=trial).modes(P)
    result = {"modes": {name: {"F": m.free_energy, "aG": m.aG, "g": m.g, "t_u": m.t_u, "t_v": m.t_v}
                        for name, m in modes.items()},
              "mode_difference": modes["copy"].free_energy - modes["uniform"].free_energy}
    if trial != "row":  # the row trial has no fixed-a_G profile
        grid = np.linspace(*PROFILE_RANGE, PROFILE_POINTS)
        profile = PosteriorTheory(L, V, convention, draws=4000, trial=trial).profile(P, grid)
        result["profile_delta_F"] = delta_F_of_profile(grid, profile["F"], 0.3)
    if importance_draws > 0:
        importance = mode_free_energies(L, V, int(P), modes, convention, importance_draws, seed, trial=trial)
        result["importance"] = {name: {key: importance[name][key] for key in ("F_trial", "F_IS", "F_IS_error", "gap_error",
                                                                                  "log_weight_sd")}
                                for name in ("uniform", "copy")}
        for name in ("uniform", "copy"):
            result["importance"][name]["gap"] = importance[name]["F_trial"] - importance[name]["F_IS"]
        result["importance"]["delta_F_IS"] = importance["delta"]["F_IS"]
        result["importance"]["delta_F_IS_error"] = importance["delta_error"]
    result["seconds"] = time.time() - start
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, required=True)
    parser.add_argument("--V", type=int, default=4)
    parser.add_argument("--P", type=float)
    parser.add_argument("--P-star", action="store_true", dest="P_star")
    parser.add_argument("--trials", default=",".join(TRIALS))
    parser.add_argument("--importance-draws", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    trials = args.trials.split(",")
    if (args.L < 2 or args.V < 2 or set(trials) - set(TRIALS) or (args.P is not None) == args.P_star
            or ("block" in trials and args.importance_draws > 0)):
        print(f"need --L >= 2, --V >= 2, trials among {','.join(TRIALS)}, exactly one of --P, --P-star, and no "
              "--importance-draws with the block trial (importance_sampled_free_energy has no block sampler)", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    out: dict = {"L": args.L, "V": args.V, "P": args.P, "seed": args.seed, "machine": platform.processor() or platform.machine(),
                 "versions": {"torch": torch.__version__, "numpy": np.__version__}}
    for trial in trials:
        if args.P_star:
            start = time.time()
            scan = np.geomspace(20, 20_000, 16)
            P_star = posterior_coexistence(PosteriorTheory(args.L, args.V, CopyTaskConvention.parse("", attention="softmax"),
                                                           draws=20_000, trial=trial), scan)
            out[trial] = {"P_star": P_star, "seconds": time.time() - start}
        else:
            out[trial] = compare(args.L, args.V, args.P, trial, args.importance_draws, args.seed)
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
