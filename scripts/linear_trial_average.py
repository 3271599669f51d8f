"""The linear posterior theory with the trial-averaged data term: transitions, c1 and the importance-weight gap at one L.

Developer measurement behind docs/posterior_free_energy.md ("Linear attention: the trial average of the action").
Prints one JSON object: the theory's predicted gauge-fixed c1, cG on geomspace(8, 1024) (--points), P1 (the
gauge-fixed c1 first at twice the prior's, the validation's estimator) and the crossover (steepest rise of cG),
for --data-term (trial_average, the second-order correction, or averaged_statistics), and at each --gap-P the
importance-weighted free energies of the theory's trial there (F_Q, F_IS, gap; the training set of data seed 0).

    python scripts/linear_trial_average.py --L 8 --gap-P 32,128,256
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np
import torch


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, required=True)
    parser.add_argument("--V", type=int, default=4)
    parser.add_argument("--points", type=int, default=40)
    parser.add_argument("--draws", type=int, default=256)
    parser.add_argument("--data-term", default="trial_average", choices=("trial_average", "averaged_statistics"))
    parser.add_argument("--gap-P", default="")
    parser.add_argument("--gap-draws", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        gap_P = [int(x) for x in args.gap_P.split(",") if x]
    except ValueError:
        gap_P = None
    if args.L < 2 or args.V < 2 or args.points < 2 or args.draws < 2 or args.gap_draws < 2 or gap_P is None:
        print("need --L >= 2, --V >= 2, --points >= 2, --draws >= 2, --gap-draws >= 2, --gap-P as integers", file=sys.stderr)
        return 2
    from emergence.numerics.copy_head.linear_posterior import LinearPosteriorTheory
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.linear_posterior_diagnosis import importance_sampled_linear_free_energy
    from emergence.validation.copy_task.posterior_validation import prior_c1_level, steepest_rise, threshold_crossing

    torch.set_num_threads(1)
    started = time.time()
    convention = CopyTaskConvention.parse("", attention="linear")
    theory = LinearPosteriorTheory(args.L, args.V, convention, draws=args.draws, seed=args.seed, data_term=args.data_term)
    grid = np.geomspace(8.0, 1024.0, args.points)
    points = [theory.minimise(P) for P in grid]
    level = prior_c1_level(theory)
    out = {"L": args.L, "V": args.V, "data_term": args.data_term, "seed": args.seed, "P": grid.tolist(),
           "c1": [p.c1 for p in points], "cG": [p.cG for p in points], "c1_mean_field": [p.c1_mean_field for p in points],
           "cG_mean_field": [p.cG_mean_field for p in points], "t_u": [p.t_u for p in points],
           "t_v": [p.t_v for p in points], "P1_level": level,
           "P1": threshold_crossing(grid, [p.c1 for p in points], level),
           "crossover": steepest_rise(grid, [p.cG for p in points]), "gap": []}
    for P in gap_P:
        c1, cG, t_u, t_v, F = theory.mean_field(P)
        point = {"c1": c1, "cG": cG, "t_u": t_u, "t_v": t_v}
        weighed = importance_sampled_linear_free_energy(args.L, args.V, P, point, convention, args.gap_draws, args.seed)
        law = theory.point(P, c1, cG, t_u, t_v, F)
        out["gap"].append({"P": P, **point, "F_theory": F, "c1_law": law.c1, "cG_law": law.cG,
                           **{key: weighed[key] for key in ("F_Q", "F_Q_single", "F_IS", "F_IS_error", "gap",
                                                            "log_weight_sd", "ess", "c1_weighted", "c1_weighted_error")}})
    out.update(seconds=time.time() - started, load=os.getloadavg()[0], machine=platform.processor() or platform.machine(),
               versions={"torch": torch.__version__, "numpy": np.__version__})
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
