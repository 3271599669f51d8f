"""Train copy-task attention models (Adam MAP or SGLD) over a P grid and compare with the copy-head theory.

The models and the potential are the theory's own (``--convention``); every P point trains
all seeds and both starts (uniform, copy) as one batched tensor program.  With ``--out`` each
finished point is stored atomically and a rerun resumes.  The theory side (``predicted``) is
null with a reason where the solvers do not cover the convention (for example centred
targets or the open shift).
"""

from __future__ import annotations

NAME = "copy-head"
HELP = "train/sample copy-task models over a P grid and compare order parameters with the theory"

DEFAULT_BISECTIONS = {"linear": 4, "softmax": 0}
"""``--bisect`` when not given: a linear sweep bisects while a bracket straddles a bound of the agreement
factor (at most this many points; it stops once every bracket decides)."""


def add_arguments(parser):
    from emergence.cli.commands._token_arguments import add_token_arguments
    from emergence.cli.commands._checks import (
        PLOT_FORMATS,
        add_executor_arguments,
        argument_type,
        integer,
        learning_rate,
        output_file,
        seed,
    )

    parser.add_argument("--attention", choices=("linear", "softmax"), required=True)
    parser.add_argument("--optimizer", choices=("adam", "sgld"), default="adam")
    parser.add_argument("--objective", choices=("joint", "marginal"), default="marginal",
                        help="marginal: the theory's readout-marginal action S(W_QK), W integrated out exactly (Adam: "
                             "its MAP, the theory's saddle); joint: U(W_QK, W) over both weights (Adam: the joint MAP, "
                             "which lacks S's Occam term and orders earlier) (default %(default)s)")
    parser.add_argument("--L", type=integer(2, what="L"), required=True, help="sequence length")
    parser.add_argument("--V", type=integer(2, what="V"), required=True, help="vocabulary size")
    parser.add_argument("--P-grid", default=None, type=argument_type(_P_grid_argument),
                        help="comma list of P, or geom:LOW:HIGH:POINTS (default: built around the theory's "
                             "transitions at the convention: softmax, 8 points spanning [P*/3, 3P*] (around the onset "
                             "where the theory's copy head switches on continuously); linear, 5 "
                             "points over each of [P1/2, 2 P1] and [P_G/2, 2 P_G])")
    parser.add_argument("--bisect", type=integer(0), default=None,
                        help="after the grid, run up to this many extra points, each at the geometric midpoint of a "
                             "measured bracket: softmax, the jump's (every time); linear, and softmax with a continuous "
                             "predicted onset, a transition's whose bracket straddles a bound of the factor 2 (until "
                             "every bracket decides), or one grid step above the grid where its steepest rise "
                             "lies on the grid's last interval (default: "
                             + ", ".join(f"{a} {n}" for a, n in DEFAULT_BISECTIONS.items()) + ")")
    parser.add_argument("--seeds", type=integer(1), default=2, help="independent data sets per P (default 2)")
    parser.add_argument("--convention", default="", help="e.g. architecture=T,a=0,c=0,d=1,e=0 (model T defaults)")
    add_token_arguments(parser, "of the training data and the theory")
    parser.add_argument("--steps", type=integer(1), default=2000, help="Adam steps (default 2000)")
    parser.add_argument("--lr", type=learning_rate, default=0.05,
                        help="Adam's initial learning rate, decayed geometrically to 1e-4 (default %(default)s)")
    parser.add_argument("--burn-in", type=integer(0), default=2000, help="SGLD burn-in steps (default 2000)")
    parser.add_argument("--draws", type=integer(4), default=50, help="SGLD draws per chain (default 50)")
    parser.add_argument("--thin", type=integer(1), default=20, help="SGLD steps between draws (default 20)")
    parser.add_argument("--chains", type=integer(1), default=2, help="SGLD chains per seed and start (default 2)")
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float32",
                        help="torch dtype of the models (default float32: the potential and its gradient agree with "
                        "float64 to 1e-7 and 1e-6 at L=32, V=8, P=1024, tests/test_float32_training.py; "
                        "float64 for the last digits)")
    parser.add_argument("--json", default=None, type=output_file(".json", stdout=True), help="write the JSON report to PATH, or - for stdout")
    parser.add_argument("--plot", default=None, type=output_file(*PLOT_FORMATS), help="write the plot to PATH (png, pdf, svg)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None,
                        help="torch device (default: cuda when torch sees a GPU)")
    parser.add_argument("--seed", type=seed, default=0, help="base seed of data and initialisation")
    add_executor_arguments(parser, "P points")


def parse_P_grid(text: str, minimum_points: int = 2) -> list[int]:
    """``"10,20,40"`` (whole numbers) or ``"geom:LOW:HIGH:POINTS"`` (rounded) as sorted, distinct ints.

    Refuses (``EmergenceError``) non-numbers, nan, inf, fractions in a list (``8.5`` is not a
    number of sequences), values below 1 and grids of fewer than ``minimum_points`` distinct points.
    """
    from emergence.base.errors import EmergenceError

    values = _P_grid_values(text)
    for value in values:
        _check_P_value(text, value, whole=not text.startswith("geom:"))
    grid = sorted({int(round(v)) for v in values})
    if len(grid) < minimum_points:
        raise EmergenceError(f"--P-grid {text!r} has {len(grid)} distinct point(s); transitions need at least 2 "
                             f"({_P_GRID_USAGE})")
    return grid


_P_GRID_USAGE = "use 10,20,40 or geom:LOW:HIGH:POINTS"


def _P_grid_values(text: str) -> list[float]:
    """The numbers ``text`` lists, or the geometric grid it names (unchecked but for the geometric bounds)."""
    import math

    import numpy as np

    from emergence.base.errors import EmergenceError

    try:
        if not text.startswith("geom:"):
            return [float(item) for item in text.split(",") if item.strip()]
        _, low, high, points = text.split(":")
        low, high, count = float(low), float(high), int(points)
    except ValueError:
        raise EmergenceError(f"cannot read --P-grid {text!r}; {_P_GRID_USAGE}") from None
    if not (math.isfinite(low) and math.isfinite(high) and 1 <= low < high):
        raise EmergenceError(f"--P-grid {text!r}: need finite 1 <= LOW < HIGH")
    return [float(v) for v in np.geomspace(low, high, max(count, 0))]


def _check_P_value(text: str, value: float, whole: bool) -> None:
    """Refuse a number of sequences that is not finite, below 1, or (in a list, ``whole``) a fraction."""
    import math

    from emergence.base.errors import EmergenceError

    if not math.isfinite(value):
        raise EmergenceError(f"--P-grid {text!r}: {value} is not a finite number of sequences")
    if value < 1:
        raise EmergenceError(f"--P-grid {text!r}: numbers of sequences must be >= 1, got {value:g}")
    if whole and value != int(value):
        raise EmergenceError(f"--P-grid {text!r}: {value:g} is not a whole number of sequences")


def _P_grid_argument(text: str) -> list[int]:
    """:func:`parse_P_grid` at parse time, before any work.

    A one-point grid passes here so that the memory estimate speaks first about a huge point;
    the experiment refuses it right after.
    """
    return parse_P_grid(text, minimum_points=1)


def _default_grid(args, tokens: str) -> list[int]:
    """The grid when ``--P-grid`` is not given: around the theory's transitions at the convention (what the
    verdict asks for, :func:`emergence.validation.copy_task.copy_experiment.grid_around_prediction`)."""
    from emergence.validation.copy_task.copy_experiment import grid_around_prediction

    return grid_around_prediction(args.attention, args.L, args.V, args.convention, tokens=tokens)


def run(args) -> int:
    import sys

    from emergence.api import CopyExperiment, run_copy_experiment
    from emergence.report.figures import figure_format, save_figure
    from emergence.base.io import to_json_text, write_json_atomic
    from emergence.validation.copy_task.analysis import verdict_lines
    from emergence.cli.commands._token_arguments import token_process_text, token_statistics_line

    tokens = token_process_text(args)
    experiment = CopyExperiment(
        args.attention, args.L, args.V, tuple(_default_grid(args, tokens) if args.P_grid is None else args.P_grid), optimizer=args.optimizer,
        objective=args.objective, seeds=args.seeds, convention=args.convention, adam_steps=args.steps,
        adam_lr=args.lr, sgld_burn_in=args.burn_in, sgld_draws=args.draws, sgld_thin=args.thin, chains=args.chains,
        dtype=args.dtype, seed=args.seed, device=args.device, workers=args.workers, executor=args.executor,
        out=args.out, bisections=DEFAULT_BISECTIONS[args.attention] if args.bisect is None else args.bisect,
        tokens=tokens,
    )
    experiment.check()
    if args.plot:
        figure_format(args.plot)
    validation = run_copy_experiment(experiment)
    if validation.prediction_note:
        print(f"emergence: note: no theory curves ({validation.prediction_note}); reporting measurements only",
              file=sys.stderr)
    report = validation.to_dict()
    if args.plot:
        save_figure(validation.plot(), args.plot)
    if args.json == "-":
        sys.stdout.write(to_json_text(report))
        return 0
    if args.json:
        write_json_atomic(args.json, report)
    if validation.predicted and "token_statistics" in validation.predicted:
        print(token_statistics_line(validation.predicted["token_statistics"]))
    _print_table(validation.P, validation.measured)
    print("\n".join(verdict_lines(args.attention, validation.measured, report["agreement"])))
    return 0


def _print_table(P_grid, measured: dict) -> None:
    """One line per P: the measured order parameters (mean ± spread over seeds), loss and convergence."""
    print(f"{'P':>8} {'c1':>14} {'cG':>14} {'aG':>8} {'cos²(A,S)':>9} {'loss':>9} {'converged':>9}")
    for i, P in enumerate(P_grid):
        print(f"{P:>8} {measured['c1_mean'][i]:>7.3f}±{measured['c1_std'][i]:<6.3f} "
              f"{measured['cG_mean'][i]:>7.3f}±{measured['cG_std'][i]:<6.3f} "
              f"{measured['aG_mean'][i]:>8.3f} {measured['copy_fraction_mean'][i]:>9.3f} {measured['loss_mean'][i]:>9.3f} "
              f"{'yes' if measured['converged'][i] else 'no':>9}")
