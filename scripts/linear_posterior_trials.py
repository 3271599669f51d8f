"""Weigh the linear posterior theory's Gaussian trial against linear model T's posterior at one (L, P).

Developer measurement behind docs/posterior_free_energy.md ("Linear attention: which assumption breaks").
Prints one JSON object: the theory's minimum (c1, cG, t_u, t_v, F, predicted posterior means), the
importance-weighted free energies of its trial on the measurement's training set (seed 0; F_Q, F_IS with
bootstrap error, gap, ESS, weighted and trial means of the gauge-fixed c1, cG), and the data term three
ways: the theory's (population, trial-averaged statistics), the model's exact action at the trial's mean, and
the model's exact action averaged over the trial, with its fit and Occam terms split (at most 1000 draws).  With --scan c1,c1,... the same trial (the theory's cG,
t_u, t_v) at each c1: the theory's F and the trial's F_Q with the exact data term.

    python scripts/linear_posterior_trials.py --L 16 --P 128 --draws 8000
    python scripts/linear_posterior_trials.py --L 16 --P 128 --draws 2000 --scan 1.5,2,2.5,3
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np
import torch


def dense_kl(mean: np.ndarray, covariance: np.ndarray, s: float) -> float:
    """KL(N(mean, covariance) || N(0, s I)) of ``W.ravel()``."""
    d = covariance.shape[0]
    return 0.5 * (np.trace(covariance) / s + (mean**2).sum() / s - d + d * math.log(s) - np.linalg.slogdet(covariance)[1])


def data_terms(theory, convention, P: int, point: dict, F_Q_single: float) -> dict:
    """The theory's data term, the exact one at the trial's mean and the exact one averaged over the trial (F_Q less the KL)."""
    from emergence.validation.copy_task.data import copy_task_batch
    from emergence.validation.copy_task.free_energy import training_data_seed
    from emergence.validation.copy_task.linear_posterior_diagnosis import mean_weights, trial_covariance
    from emergence.validation.copy_task.models import CopyAttentionModel

    L, V = theory.L, theory.V
    s = convention.logit_prior_variance(L)
    mean = mean_weights(V, L, point["c1"], point["cG"], convention.attention_normalisation_exponent)
    kl = dense_kl(mean.ravel(), trial_covariance(V, L, point["t_u"], point["t_v"], s, theory.trial), s)
    model = CopyAttentionModel(1, L, V, convention)
    batch = copy_task_batch([P], L, V, [training_data_seed(0, P)], convention.shift, convention.targets, torch.float64)
    with torch.no_grad():
        model.logit_weights.copy_(torch.as_tensor(mean[None]))
        at_mean = float(model.marginal_potential(batch) - model.logit_prior_energy())
    F = float(theory.free_energy(point["c1"], point["cG"], point["t_u"], point["t_v"], P)[0])
    tiny = 1e-9  # the theory's data term without noise: F at t_u = t_v -> 0 less that trial's KL
    kl_tiny = dense_kl(mean.ravel(), trial_covariance(V, L, tiny, tiny, s, theory.trial), s)
    no_noise = float(theory.free_energy(point["c1"], point["cG"], tiny, tiny, P)[0]) - kl_tiny
    return {"trial_kl": kl, "theory": F - kl, "theory_without_noise": no_noise, "exact_at_mean": at_mean,
            "exact_trial_average": F_Q_single - kl}


def action_parts(theory, convention, P: int, point: dict, draws: int, seed: int) -> dict:
    """The readout-marginal action's fit and Occam terms over ``draws`` trial draws, at their averaged C, B, and the
    fit term with C at its mean and B per draw (what dropping only the C fluctuations would give)."""
    from emergence.validation.copy_task.data import copy_task_batch
    from emergence.validation.copy_task.free_energy import training_data_seed
    from emergence.validation.copy_task.linear_posterior_diagnosis import mean_weights, trial_covariance
    from emergence.validation.copy_task.models import CopyAttentionModel

    L, V = theory.L, theory.V
    s = convention.logit_prior_variance(L)
    mean = mean_weights(V, L, point["c1"], point["cG"], convention.attention_normalisation_exponent).ravel()
    cholesky = np.linalg.cholesky(trial_covariance(V, L, point["t_u"], point["t_v"], s, theory.trial))
    theta = mean + np.random.default_rng(seed).standard_normal((draws, mean.size)) @ cholesky.T
    model = CopyAttentionModel(draws, L, V, convention)
    batch = copy_task_batch([P] * draws, L, V, [training_data_seed(seed, P)] * draws, convention.shift,
                            convention.targets, torch.float64)
    with torch.no_grad():
        model.logit_weights.copy_(torch.as_tensor(theta.reshape(draws, V + L, V + L)))
        C, B, D = model.readout_statistics(batch)
    epsilon, identity = model.beta * model.readout_prior_variance, torch.eye(V, dtype=C.dtype)

    def fit(B, C):
        return -0.5 * model.beta * epsilon * (B * (torch.linalg.inv(identity + epsilon * C) @ B)).sum((-2, -1))

    def occam(C):
        return 0.5 * V * torch.logdet(identity + epsilon * C)

    C_bar, B_bar = C.mean(0), B.mean(0)
    return {"fit_average": float(fit(B, C).mean()), "fit_at_averaged_statistics": float(fit(B_bar, C_bar)),
            "fit_averaged_C": float(fit(B, C_bar).mean()), "occam_average": float(occam(C).mean()),
            "occam_at_averaged_C": float(occam(C_bar)),
            "action_at_averaged_statistics": float(0.5 * model.beta * D.mean() + fit(B_bar, C_bar) + occam(C_bar))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, required=True)
    parser.add_argument("--V", type=int, default=4)
    parser.add_argument("--P", type=int, required=True)
    parser.add_argument("--draws", type=int, default=8000)
    parser.add_argument("--trial", default="gauge", choices=("gauge", "product"))
    parser.add_argument("--scan", default="")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        scan = [float(x) for x in args.scan.split(",") if x]
    except ValueError:
        scan = None
    if args.L < 2 or args.V < 2 or args.P < 1 or args.draws < 2 or scan is None:
        print("need --L >= 2, --V >= 2, --P >= 1, --draws >= 2 and --scan as numbers separated by commas", file=sys.stderr)
        return 2
    from emergence.base.io import timed_provenance
    from emergence.numerics.copy_head.linear_posterior import LinearPosteriorTheory
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.linear_posterior_diagnosis import importance_sampled_linear_free_energy

    torch.set_num_threads(1)
    started = time.time()
    convention = CopyTaskConvention.parse("", attention="linear")
    theory = LinearPosteriorTheory(args.L, args.V, convention, draws=256, trial=args.trial)
    c1, cG, t_u, t_v, F = theory.mean_field(args.P)
    predicted = theory.point(args.P, c1, cG, t_u, t_v, F)
    point = {"c1": c1, "cG": cG, "t_u": t_u, "t_v": t_v}
    weighed = importance_sampled_linear_free_energy(args.L, args.V, args.P, point, convention, args.draws, args.seed,
                                                    args.trial)
    out = {"L": args.L, "V": args.V, "P": args.P, "seed": args.seed,
           "theory": {**point, "F": F, "c1_law": predicted.c1, "cG_law": predicted.cG},
           "importance": weighed, "data_term": data_terms(theory, convention, args.P, point, weighed["F_Q_single"]),
           "action_parts": action_parts(theory, convention, args.P, point, min(args.draws, 1000), args.seed),
           "scan": []}
    for value in scan:
        trial_point = {**point, "c1": value}
        result = importance_sampled_linear_free_energy(args.L, args.V, args.P, trial_point, convention, args.draws,
                                                       args.seed, args.trial)
        out["scan"].append({"c1": value, "F_theory": float(theory.free_energy(value, cG, t_u, t_v, args.P)[0]),
                            **{key: result[key] for key in ("F_Q_single", "F_Q", "F_IS", "F_IS_error")},
                            "data_term": data_terms(theory, convention, args.P, trial_point, result["F_Q_single"]),
                            "action_parts": action_parts(theory, convention, args.P, trial_point, min(args.draws, 1000),
                                                         args.seed)})
    out.update(timed_provenance(vars(args), args.seed, time.time() - started))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
