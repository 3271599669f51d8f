"""The linear posterior theory with the trial-averaged data term: transitions, c1 and the importance-weight gap at one L.

Developer measurement behind docs/posterior_free_energy.md ("Linear attention: the trial average of the action").
Prints one JSON object: the theory's predicted gauge-fixed c1, cG on geomspace(8, 1024) (--points), P1 (the
gauge-fixed c1 first at twice the prior's, the validation's estimator) and the crossover (steepest rise of cG),
for --data-term (trial_average, the second-order correction, or averaged_statistics), and at each --gap-P the
importance-weighted free energies of the theory's trial there (F_Q, F_IS, gap; the training set of data seed 0).
With --compare-P and --compare-c1, the trial average of the exact action less the action at the averaged
statistics (Monte Carlo over --compare-draws trial draws of the attention noise) beside the second-order
terms, on that training set, at the theory's (cG, t_u, t_v) at --compare-P and each c1.

    python scripts/linear_trial_average.py --L 8 --gap-P 32,128,256
    python scripts/linear_trial_average.py --L 16 --points 2 --compare-P 128 --compare-c1 0,1.5,2.99
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import torch


def compare_exact(theory, convention, P: int, c1_values, draws: int, seed: int, chunk: int = 100) -> list[dict]:
    """E_Q S - S(C_bar, B_bar) by Monte Carlo over the trial against the second-order terms, on the training set of ``seed``."""
    from emergence.numerics.copy_head.linear_posterior import LinearNoise, noise_attention
    from emergence.numerics.copy_head.linear_trial_average import (FluctuationMoments, second_order_terms,
                                                                   statistics_law)
    from emergence.numerics.order_parameters import cyclic_shift
    from emergence.validation.copy_task.data import copy_task_batch
    from emergence.validation.copy_task.free_energy import training_data_seed

    L, V = theory.L, theory.V
    tokens = copy_task_batch([P], L, V, [training_data_seed(seed, P)], convention.shift, convention.targets).tokens.numpy()
    moments = FluctuationMoments.from_tokens(tokens, V)
    _, cG, t_u, t_v, _ = theory.mean_field(P)
    epsilon, beta = theory.beta * theory.lam, theory.beta
    X = np.eye(V)[tokens]
    Y = np.roll(X, 1, axis=1)

    def action(C, B):
        M = np.eye(V) + epsilon * C
        return -0.5 * beta * epsilon * np.einsum("...ab,...ab->...", B, np.linalg.solve(M, B)) + 0.5 * V * np.linalg.slogdet(M)[1]

    rng, rows = np.random.default_rng(seed), []
    for c1 in c1_values:
        law = statistics_law(moments, c1, cG, t_u * theory.sG, t_v * theory.sG, P)
        values = []
        for _ in range(-(-draws // chunk)):
            noise = LinearNoise(rng.standard_normal((chunk, V, V)), rng.standard_normal((chunk, V, L)),
                                rng.standard_normal((chunk, L, V)), rng.standard_normal((chunk, L, L)), tokens)
            A = c1 * np.ones((L, L)) / L + cG * cyclic_shift(L) + noise_attention(noise, t_u * theory.sG, t_v * theory.sG)
            Phi = np.einsum("deij,ejc->deic", A, X)
            values.append(action(np.einsum("deia,deib->dab", Phi, Phi), np.einsum("deia,eib->dab", Phi, Y)))
        shift = np.concatenate(values)[:draws] - action(law.C, law.B)
        terms = second_order_terms(law, epsilon, beta)
        rows.append({"c1": c1, "cG": cG, "t_u": t_u, "t_v": t_v, "exact": float(shift.mean()),
                     "exact_error": float(shift.std() / np.sqrt(len(shift))), "second_order": float(sum(terms.values())),
                     **terms})
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, required=True)
    parser.add_argument("--V", type=int, default=4)
    parser.add_argument("--points", type=int, default=40)
    parser.add_argument("--draws", type=int, default=256)
    parser.add_argument("--data-term", default="trial_average", choices=("trial_average", "averaged_statistics"))
    parser.add_argument("--gap-P", default="")
    parser.add_argument("--gap-draws", type=int, default=4000)
    parser.add_argument("--compare-P", type=int, default=0)
    parser.add_argument("--compare-c1", default="")
    parser.add_argument("--compare-draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        gap_P = [int(x) for x in args.gap_P.split(",") if x]
        compare_c1 = [float(x) for x in args.compare_c1.split(",") if x]
    except ValueError:
        gap_P = compare_c1 = None
    if (args.L < 2 or args.V < 2 or args.points < 2 or args.draws < 2 or args.gap_draws < 2 or gap_P is None
            or compare_c1 is None or args.compare_P < 0 or args.compare_draws < 2):
        print("need --L >= 2, --V >= 2, --points >= 2, --draws >= 2, --gap-draws >= 2, --compare-draws >= 2, "
              "--compare-P >= 0, --gap-P as integers and --compare-c1 as numbers", file=sys.stderr)
        return 2
    from emergence.base.io import timed_provenance
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
    if args.compare_P and compare_c1:
        out["compare"] = compare_exact(theory, convention, args.compare_P, compare_c1, args.compare_draws, args.seed)
    out.update(timed_provenance(vars(args), args.seed, time.time() - started))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
