"""What the block theory's trial still misses in the copy mode: its log importance weights regressed on features of its draws.

Developer measurement behind docs/posterior_free_energy.md ("What the block trial still misses").  Draws W_QK from
the block theory's copy-mode trial at (L, P) (the KL-optimal block ratios, 20000 Monte Carlo rows; no diagonal mean),
computes each draw's log importance weight ln w = -U - ln Q with the model's potential on the training set of data
seed 0, and fits ln w by least squares on groups of features of the draw (first three quarters of the draws),
reporting the R^2 on the last quarter.  Features are read off the draw's attention on the training sequences:

* ``collective``: the draw's a_G (mean attention on the previous token) and its square and cube;
* ``rows``: each query position's own copy attention a_i (mean over sequences of A[i, i-1]) and a_i^2 (2L);
* ``row entropy``: each query position's mean attention entropy and its square (2L);
* ``blocks``: the four blocks' centred squared norms (token/position rows x columns);
* ``additive row law``: :math:`\sum_i B_k(a_i)` for hat functions :math:`B_k` on ``KNOTS`` (one function h of a row's
  copy attention, shared by every row by the task's symmetry: ln w ~ const + sum_i h(a_i)); its fitted h is printed.

A group with held-out R^2 near 0 is a direction along which the trial already matches the posterior; what a group
explains is what a trial that fitted it could remove (for log-normal weights the gap is about var(ln w)/2).
Prints one JSON object.

    python scripts/block_trial_residual.py --L 12 --P 440 --draws 2000
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import torch

from emergence.numerics.copy_head.block_trial import BlockTrial
from emergence.numerics.copy_head.posterior import PosteriorTheory
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.free_energy import training_data_seed
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.copy_task.posterior_diagnosis import held_out_r2, trial_potential

KNOTS = np.linspace(0.0, 1.0, 11)
"""Knots of the hat functions of the additive row law."""
MAX_SIZE = 32
"""V + L above this is refused: the block trial's dense (N^2, N^2) bases."""


def attention_features(theta: np.ndarray, L: int, V: int, P: int, convention) -> dict[str, np.ndarray]:
    """``collective (n, 3)``, ``rows (n, 2L)``, ``row entropy (n, 2L)`` of draws ``theta (n, N, N)`` on the training set."""
    batch = copy_task_batch([P], L, V, [training_data_seed(0, P)], convention.shift, convention.targets,
                            torch.float64, "cpu")
    model = CopyAttentionModel(1, L, V, convention)
    previous = (np.arange(L) - 1) % L
    copy, entropy = [], []
    for draw in theta:
        with torch.no_grad():
            model.logit_weights.copy_(torch.as_tensor(draw[None]))
            A = model.attention(batch).numpy()  # (P, L, L)
        copy.append(A[:, np.arange(L), previous].mean(0))
        entropy.append(-(A * np.log(np.clip(A, 1e-300, None))).sum(-1).mean(0))
    copy, entropy = np.array(copy), np.array(entropy)
    aG = copy.mean(1)
    return {"collective": np.column_stack([aG, aG**2, aG**3]), "rows": np.column_stack([copy, copy**2]),
            "row entropy": np.column_stack([entropy, entropy**2])}


def block_norms(theta: np.ndarray, V: int) -> np.ndarray:
    """The four blocks' centred squared norms, ``(n, 4)``."""
    def centred(block):
        return block - block.mean(2, keepdims=True)
    return np.column_stack([(centred(b) ** 2).sum((1, 2)) for b in (theta[:, :V, :V], theta[:, :V, V:],
                                                                     theta[:, V:, :V], theta[:, V:, V:])])


def hat_features(values: np.ndarray) -> np.ndarray:
    """:math:`\sum_i B_k(v_i)` over the last axis of ``values (n, L)`` for the hat functions on ``KNOTS``, ``(n, K)``."""
    width = KNOTS[1] - KNOTS[0]
    hats = np.clip(1 - np.abs(values[..., None] - KNOTS) / width, 0, None)  # (n, L, K)
    return hats.sum(1)


def tilted_bound(X: np.ndarray, log_weight: np.ndarray) -> dict[str, float]:
    r"""The variational bound of the tilted trial :math:`Q_h \propto Q\,e^{H}`, :math:`H = X\beta` fitted to ln w on the
    first three quarters, estimated on the last quarter by self-normalised reweighting of Q's draws:

    .. math:: F_{Q_h} = \mathbb E_Q[\tilde w_H(-\ln w + H)] - \ln\mathbb E_Q[e^H],\qquad \tilde w_H = e^H/\mathbb E_Q[e^H],

    beside Q's own :math:`F_Q = \mathbb E_Q[-\ln w]` on the same draws and the reweighting's effective sample size.
    """
    design = np.column_stack([np.ones(len(log_weight)), X])
    cut = 3 * len(log_weight) // 4
    coefficients, *_ = np.linalg.lstsq(design[:cut], log_weight[:cut], rcond=None)
    H = design[cut:, 1:] @ coefficients[1:]
    held = log_weight[cut:]
    log_Z = np.logaddexp.reduce(H) - np.log(len(H))
    tilt = np.exp(H - log_Z) / len(H)
    return {"F_Q": float(-held.mean()), "F_Q_tilted": float(tilt @ (-held + H) - log_Z),
            "ess": float(1 / (tilt**2).sum()), "held_out": int(len(held))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, required=True)
    parser.add_argument("--V", type=int, default=4)
    parser.add_argument("--P", type=int, required=True)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.L < 3 or args.V < 2 or args.P < 1 or not 40 <= args.draws <= 20_000 or args.V + args.L > MAX_SIZE:
        print(f"need --L >= 3, --V >= 2, --V + --L <= {MAX_SIZE}, --P >= 1 and 40 <= --draws <= 20000", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    start = time.time()
    convention = CopyTaskConvention.parse("", attention="softmax")
    theory = PosteriorTheory(args.L, args.V, convention, draws=20_000, trial="block")
    mode = theory.minimise(float(args.P), "copy")
    trial = BlockTrial(args.L, args.V, theory.s, mode.g, 0.0, dict(mode.ratios))
    N = args.V + args.L
    theta, log_q = trial.sample(np.random.default_rng(args.seed).standard_normal((args.draws, N * N)))
    log_weight = -trial_potential(args.L, args.V, args.P, convention, seed=0)(theta) - log_q
    groups = attention_features(theta, args.L, args.V, args.P, convention)
    groups["blocks"] = block_norms(theta, args.V)
    groups["additive row law"] = hat_features(groups["rows"][:, :args.L])
    result = {"L": args.L, "V": args.V, "P": args.P, "draws": args.draws, "seed": args.seed, "aG": mode.aG,
              "ratios": dict(mode.ratios), "log_weight_var": float(log_weight.var()),
              "gap": float(-log_weight.mean() - (np.log(len(log_weight)) - np.logaddexp.reduce(log_weight))),
              "draw_aG": {"mean": float(groups["collective"][:, 0].mean()), "sd": float(groups["collective"][:, 0].std())},
              "test_R2": {name: held_out_r2(X, log_weight) for name, X in groups.items()}}
    result["test_R2"]["all"] = held_out_r2(np.column_stack(list(groups.values())), log_weight)
    design = np.column_stack([groups["additive row law"][:, 1:]])  # the first hat is collinear with the intercept
    coefficients, *_ = np.linalg.lstsq(np.column_stack([np.ones(len(log_weight)), design]), log_weight, rcond=None)
    result["tilted_bound"] = tilted_bound(design, log_weight)
    result["additive_row_law_h"] = {f"{k:.1f}": float(c) for k, c in zip(KNOTS[1:], coefficients[1:])}
    result["row_copy_attention_quantiles"] = {q: float(np.quantile(groups["rows"][:, :args.L], q))
                                              for q in (0.01, 0.05, 0.25, 0.5, 0.75, 0.95)}
    slope = np.polyfit(groups["collective"][:, 0], log_weight, 1)
    result["ln_w_slope_in_aG"] = float(slope[0])
    result["versions"] = {"torch": torch.__version__, "numpy": np.__version__}
    result["seconds"] = time.time() - start
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
