"""What the row trial still misses in the copy mode: its log importance weights regressed on features of its draws.

Developer measurement behind docs/posterior_free_energy.md ("The row trial").  Draws W_QK from the row trial at
the theory's copy mode (L, P; 20000 Monte Carlo rows), computes each draw's log importance weight on the
measurement's training set (seed 0), and fits ln w by least squares on groups of features of the draw (first
three quarters of the draws), reporting the R^2 on the last quarter.  A group with test R^2 near 0 is a
direction along which the trial already matches the posterior; the variance it explains is what a trial that
fitted it could remove (for log-normal weights the gap is about var(ln w)/2).  Prints one JSON object.

    python scripts/row_trial_residual.py --L 12 --P 440 --draws 2000
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np
import torch

from emergence.numerics.copy_head.posterior import PosteriorTheory
from emergence.numerics.copy_head.row_trial import sample_row_trial, trial_geometry
from emergence.validation.copy_task.config import CopyTaskConvention
from emergence.validation.copy_task.data import copy_task_batch
from emergence.validation.copy_task.free_energy import training_data_seed
from emergence.validation.copy_task.models import CopyAttentionModel
from emergence.validation.copy_task.posterior_diagnosis import held_out_r2


def log_weights(theta: np.ndarray, log_q: np.ndarray, L: int, V: int, P: int, convention, chunk: int = 250) -> np.ndarray:
    """ln w = -S_r(theta) + ln prior normaliser - ln Q(theta) for draws ``theta (n, N, N)``."""
    runs = min(chunk, len(theta))
    batch = copy_task_batch([P] * runs, L, V, [training_data_seed(0, P)] * runs, convention.shift, convention.targets,
                            torch.float64, "cpu")
    model = CopyAttentionModel(runs, L, V, convention)
    normaliser = -0.5 * (V + L) ** 2 * math.log(2 * math.pi * model.logit_prior_variance)
    out = []
    for start in range(0, len(theta), runs):
        with torch.no_grad():
            model.logit_weights.copy_(torch.as_tensor(theta[start:start + runs]))
            out.append(-model.marginal_potential(batch).numpy())
    return np.concatenate(out) + normaliser - log_q


def features(theta: np.ndarray, V: int) -> dict[str, np.ndarray]:
    """Feature groups ``(n, k)``: per-row copy boosts and their squares, the token-token diagonal, the four blocks' centred norms."""
    n, N, _ = theta.shape
    L = N - V
    copy = trial_geometry(L, V)["copy"]
    boosts = np.linalg.solve(copy.T @ copy, copy.T @ theta.reshape(n, -1).T).T * np.sqrt(L / (L - 1))

    def centred(block):
        return block - block.mean(2, keepdims=True)
    token_token = centred(theta[:, :V, :V])
    norms = np.column_stack([(centred(b) ** 2).sum((1, 2)) for b in (theta[:, :V, :V], theta[:, :V, V:],
                                                                     theta[:, V:, :V], theta[:, V:, V:])])
    return {"copy boosts (linear, square, sigmoid)": np.column_stack([boosts, boosts**2, 1 / (1 + np.exp(1.5 - boosts))]),
            "token-token diagonal": np.einsum("naa->n", token_token)[:, None],
            "block norms (token/position rows x columns)": norms}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--L", type=int, required=True)
    parser.add_argument("--V", type=int, default=4)
    parser.add_argument("--P", type=int, required=True)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.L < 3 or args.V < 2 or args.P < 1 or not 40 <= args.draws <= 20_000:
        print("need --L >= 3, --V >= 2, --P >= 1 and 40 <= --draws <= 20000", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    start = time.time()
    convention = CopyTaskConvention.parse("", attention="softmax")
    theory = PosteriorTheory(args.L, args.V, convention, draws=20_000, trial="row")
    mode = theory.minimise(float(args.P), "copy")
    theta, log_q = sample_row_trial(mode, args.L, args.V, theory.s, args.draws, np.random.default_rng(args.seed))
    weights = log_weights(theta, log_q, args.L, args.V, args.P, convention)
    groups = features(theta, args.V)
    result = {"L": args.L, "V": args.V, "P": args.P, "draws": args.draws, "seed": args.seed, "aG": mode.aG,
              "log_weight_var": float(weights.var()),
              "gap": float(-weights.mean() - (np.log(len(weights)) - np.logaddexp.reduce(weights))),
              "test_R2": {name: held_out_r2(X, weights) for name, X in groups.items()}}
    result["test_R2"]["all"] = held_out_r2(np.column_stack(list(groups.values())), weights)
    result["versions"] = {"torch": torch.__version__, "numpy": np.__version__}
    result["seconds"] = time.time() - start
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
