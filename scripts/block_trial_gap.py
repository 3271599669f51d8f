"""Is the token-row structure what the gauge-correct trial misses? The block trial's exact free energy, minimised, and its gap.

Developer measurement behind docs/posterior_free_energy.md ("The block trial").  The block trial
(emergence/numerics/copy_head/block_trial.py) is the gauge-correct Gaussian trial Q of W_QK with a mean delta on the
token-token diagonal and one variance ratio per block (tt, tp: the token rows W_tt[x_q, .], W_tp[x_q, .], shared
by every query of that token; pt, pp: the position rows), optionally a ratio of its own on the W_tt diagonal.
Its free energy is estimated without the theory's row-average closure, with the model's true potential U
(prior and readout-marginal data action on the measurement's training set, data seed 0):

    F_Q = E_Q[U] - H[Q] >= F = -ln Z,   H[Q] exact,   E_Q[U] by Monte Carlo over --fit-draws draws,

with common random numbers (fixed standard normals), so F_Q is a smooth function of the parameters, minimised
by Nelder-Mead from the gauge-correct theory's mode (20000 rows) at (L, P), for each family of --families:

- ``gauge``: the gauge-correct trial, (g, ln t_u, ln t_v);
- ``diagonal_mean``: the same with the diagonal mean, (g, delta, ln t_u, ln t_v);
- ``row_variances``: (g, ln t_tt, ln t_tp, ln t_pt, ln t_pp [, ln t_diag]), delta = 0;
- ``block``: (g, delta, ln t_tt, ln t_tp, ln t_pt, ln t_pp [, ln t_diag]).

The theory's own trial (its (g, t_u, t_v), not minimised) and each minimised trial are then drawn --draws times
afresh (the same standard normals for all) and reported with F_Q = E_Q[-ln w], F_IS = -ln mean w and the gap
F_Q - F_IS (a lower bound on KL(Q || posterior); bootstrap errors over draws), w = e^{-U}/Q, and with F_Q minus the
theory trial's (paired over the common draws).  Prints one JSON object (after each mode).

    python scripts/block_trial_gap.py --L 12 --P 440 --modes copy --diag --families gauge,diagonal_mean,row_variances,block
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np
import torch
from scipy.optimize import minimize

from emergence.numerics.copy_head.block_trial import BLOCKS, BlockTrial, visible_geometry
from emergence.numerics.copy_head.posterior import PosteriorTheory
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.posterior_diagnosis import importance_summary, trial_potential


FAMILIES = ("gauge", "diagonal_mean", "row_variances", "block")
"""The trial families minimised on the exact F_Q (module docstring); the theory's trial is always reported."""


def full_parameters(family: str, p, diag: bool) -> list[float]:
    """``(g, delta, ln t_tt, ln t_tp, ln t_pt, ln t_pp, ln t_diag)`` of a family's free parameters ``p``.

    ``gauge``: (g, ln t_u, ln t_v); ``diagonal_mean``: (g, delta, ln t_u, ln t_v); ``row_variances``: (g, four block
    ratios [, diagonal ratio]), delta = 0; ``block``: (g, delta, four block ratios [, diagonal ratio]).  Without
    ``diag`` the diagonal ratio is t_tt's.
    """
    p = [float(value) for value in p]
    if family in ("gauge", "diagonal_mean"):
        g, delta, log_u, log_v = p if family == "diagonal_mean" else (p[0], 0.0, p[1], p[2])
        return [g, delta, log_u, log_v, log_u, log_v, log_u]
    full = p if family == "block" else [p[0], 0.0, *p[1:]]
    return full if diag else full + [full[2]]


def free_start(family: str, mode, diag: bool) -> np.ndarray:
    """A family's free parameters at the theory's gauge-correct mode (delta = 0, t_tt = t_pt = t_u, t_tp = t_pp = t_v)."""
    g, log_u, log_v = mode.g, np.log(mode.t_u), np.log(mode.t_v)
    ratios = [log_u, log_v, log_u, log_v] + ([log_u] if diag else [])
    return np.array({"gauge": [g, log_u, log_v], "diagonal_mean": [g, 0.0, log_u, log_v],
                     "row_variances": [g, *ratios], "block": [g, 0.0, *ratios]}[family])


def block_trial(x, L: int, V: int, s: float) -> BlockTrial:
    """The block trial at ``x = (g, delta, ln t_tt, ln t_tp, ln t_pt, ln t_pp, ln t_diag)``."""
    ratios = dict(zip(BLOCKS + ("diag",), np.exp(x[2:]).tolist()))
    return BlockTrial(L, V, s, float(x[0]), float(x[1]), ratios)


def minimise_exact(make, x0: np.ndarray, potential, standard: np.ndarray, maxfev: int) -> tuple[np.ndarray, float, int]:
    """Nelder-Mead on F_Q(x) = mean U(theta(x, standard)) - H[Q_x]; returns the minimiser, F_Q there, evaluations."""
    def free_energy(x):
        trial = make(x)
        return float(potential(trial.sample(standard)[0]).mean() - trial.entropy())
    simplex = np.vstack([x0] + [x0 + 0.15 * np.eye(len(x0))[i] for i in range(len(x0))])
    result = minimize(free_energy, x0, method="Nelder-Mead",
                      options={"maxfev": maxfev, "xatol": 0.01, "fatol": 0.005, "initial_simplex": simplex})
    return result.x, float(result.fun), int(result.nfev)


def report(trial: BlockTrial, potential, standard: np.ndarray, seed: int, reference=None) -> dict:
    """:func:`importance_summary` of ``trial`` on ``standard``'s draws, its exact-entropy F_Q, its parameters and, given the
    ``reference`` trial's log-weights on the same draws, F_Q minus the reference's with its paired standard error."""
    theta, log_q = trial.sample(standard)
    U = potential(theta)
    log_weight = -U - log_q
    summary = importance_summary(log_weight, seed)
    summary["log_weight"] = log_weight
    summary["data"] = U - (theta**2).sum((1, 2)) / (2 * trial.s) - 0.5 * theta[0].size * np.log(2 * np.pi * trial.s)
    summary["data_action"] = float(summary["data"].mean())
    if reference is not None:
        difference = reference - log_weight
        summary["F_Q_minus_theory"] = float(difference.mean())
        summary["F_Q_minus_theory_error"] = float(difference.std(ddof=1) / np.sqrt(len(difference)))
    summary["gap"] = summary["F_trial"] - summary["F_IS"]
    summary["F_Q_exact_entropy"] = float(U.mean() - trial.entropy())
    summary["F_Q_exact_entropy_error"] = float(U.std(ddof=1) / np.sqrt(len(U)))
    summary["parameters"] = {"g": trial.g, "delta": trial.delta, **trial.ratios}
    return summary


def measure_mode(mode, L: int, V: int, s: float, potential, families: list[str], args) -> dict:
    """The theory's trial and each family minimised at one theory mode, reported on the same fresh draws."""
    n = (V + L) ** 2
    fit_standard = np.random.default_rng(args.seed + 1).standard_normal((args.fit_draws, n))
    standard = np.random.default_rng(args.seed + 2).standard_normal((args.draws, n))
    start = free_start("gauge", mode, args.diag)
    result = {"theory_mode": {"aG": mode.aG, "F_theory": mode.free_energy, "g": mode.g, "t_u": mode.t_u, "t_v": mode.t_v},
              "theory": report(block_trial(full_parameters("gauge", start, args.diag), L, V, s), potential, standard,
                               args.seed)}
    for family in families:
        def make(p, family=family):
            return block_trial(full_parameters(family, p, args.diag), L, V, s)
        best, F_fit, evaluations = minimise_exact(make, free_start(family, mode, args.diag), potential, fit_standard,
                                                  args.maxfev)
        result[family] = {**report(make(best), potential, standard, args.seed, result["theory"]["log_weight"]),
                          "F_Q_fit_draws": F_fit, "evaluations": evaluations}
    if "block" in families:
        result["block_same_rows"] = split_checks(result, L, V, s, potential, standard, args.seed)
    for family in ("theory", *families):
        for key in ("log_weight", "data"):
            result[family].pop(key)
    return result


def split_checks(result: dict, L: int, V: int, s: float, potential, standard: np.ndarray, seed: int) -> dict:
    """The minimised block trial with the same per-row logit variances, t_tt + t_pt and t_tp + t_pp (and on the
    diagonal t_diag + t_pt), split otherwise between token and position rows, so that the row-average closure gives
    each the same data term: ``equal`` (t_tt = t_pt, t_tp = t_pp) and ``kl`` (the split minimising the exact
    KL(Q || prior) alone).  Each is reported with its F_Q, its KL and its exact data action E_Q[S_data] minus the
    block trial's (paired over the common draws)."""
    best = result["block"]["parameters"]
    token, position = best["tt"] + best["pt"], best["tp"] + best["pp"]

    def split(x) -> BlockTrial:
        t_pt, t_pp = token / (1 + np.exp(-x[0])), position / (1 + np.exp(-x[1]))
        ratios = {"tt": token - t_pt, "tp": position - t_pp, "pt": t_pt, "pp": t_pp,
                  "diag": max(best["diag"] + best["pt"] - t_pt, 1e-6)}
        return BlockTrial(L, V, s, best["g"], best["delta"], ratios)

    kl_split = minimize(lambda x: split(x).kl_from_prior(), np.zeros(2), method="Nelder-Mead",
                        options={"xatol": 1e-4, "fatol": 1e-6}).x
    checks = {}
    for name, trial in (("equal", split(np.zeros(2))), ("kl", split(kl_split))):
        check = report(trial, potential, standard, seed, result["theory"]["log_weight"])
        difference = check.pop("data") - result["block"]["data"]
        check.pop("log_weight")
        check["kl"] = trial.kl_from_prior()
        check["data_action_minus_block"] = float(difference.mean())
        check["data_action_minus_block_error"] = float(difference.std(ddof=1) / np.sqrt(len(difference)))
        checks[name] = check
    checks["block_kl"] = block_trial([best["g"], best["delta"], *np.log([best[b] for b in (*BLOCKS, "diag")])],
                                     L, V, s).kl_from_prior()
    return checks


MAX_SIZE = 32
"""Largest N = V + L: the trial's bases come from a dense eigendecomposition of an (N^2, N^2) projector (N = 20: seconds)."""
MEMORY_LIMIT = 8 * 2**30
"""Bytes the dense geometry and the draws may take (the trial's bases are dense (N^2, N^2) matrices)."""


def refusal(args, modes: list[str], families: list[str]) -> str | None:
    """One line saying what is wrong with the arguments (invalid, or too large for MEMORY_LIMIT), or None."""
    if (args.L < 3 or args.V < 2 or args.P < 1 or set(modes) - {"copy", "uniform"} or set(families) - set(FAMILIES)
            or not 40 <= args.fit_draws <= 20_000 or not 40 <= args.draws <= 40_000 or args.maxfev < 1):
        return ("need --L >= 3, --V >= 2, --P >= 1, --modes among copy,uniform, --families among " + ",".join(FAMILIES)
                + ", 40 <= --fit-draws <= 20000, 40 <= --draws <= 40000, --maxfev >= 1")
    n = (args.V + args.L) ** 2
    memory = 8 * (4 * n * n + 3 * (args.fit_draws + args.draws) * n)
    if args.V + args.L > MAX_SIZE:
        return f"--V + --L = {args.V + args.L} > {MAX_SIZE}: the dense (N^2, N^2) bases take O(N^6) time"
    if memory > MEMORY_LIMIT:
        return f"--L {args.L} --V {args.V} needs about {memory / 2**30:.0f} GiB (limit {MEMORY_LIMIT / 2**30:.0f} GiB)"
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, required=True)
    parser.add_argument("--V", type=int, default=4)
    parser.add_argument("--P", type=int, required=True)
    parser.add_argument("--modes", default="copy,uniform")
    parser.add_argument("--families", default="gauge,block", help=f"among {','.join(FAMILIES)}")
    parser.add_argument("--fit-draws", type=int, default=300, dest="fit_draws")
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--maxfev", type=int, default=350)
    parser.add_argument("--diag", action="store_true", help="a variance ratio of its own on the W_tt diagonal")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws (the training data seed is 0)")
    args = parser.parse_args(argv)
    modes, families = args.modes.split(","), args.families.split(",")
    problem = refusal(args, modes, families)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    convention = CopyTaskConvention.parse("", attention="softmax")
    s = convention.logit_prior_variance(args.L)
    visible_geometry(args.L, args.V)
    out: dict = {"L": args.L, "V": args.V, "P": args.P, "config": vars(args), "data_seed": 0,
                 "machine": platform.processor() or platform.machine(),
                 "versions": {"torch": torch.__version__, "numpy": np.__version__}}
    theory_modes = PosteriorTheory(args.L, args.V, convention, draws=20_000, trial="gauge").modes(float(args.P))
    potential = trial_potential(args.L, args.V, args.P, convention, seed=0)
    for name in modes:
        start = time.time()
        out[name] = measure_mode(theory_modes[name], args.L, args.V, s, potential, families, args)
        out[name]["seconds"] = time.time() - start
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
