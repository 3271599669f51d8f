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

DEFAULT_P_GRID = "geom:8:1024:8"


def add_arguments(parser):
    parser.add_argument("--attention", choices=("linear", "softmax"), required=True)
    parser.add_argument("--optimizer", choices=("adam", "sgld"), default="adam")
    parser.add_argument("--objective", choices=("joint", "marginal"), default="joint",
                        help="joint: U(W_QK, W) over both weights (Adam: joint MAP); marginal: the theory's "
                             "readout-marginal action S(W_QK), W integrated out exactly (default %(default)s)")
    parser.add_argument("--L", type=int, required=True, help="sequence length")
    parser.add_argument("--V", type=int, required=True, help="vocabulary size")
    parser.add_argument("--P-grid", default=DEFAULT_P_GRID,
                        help="comma list of P, or geom:LOW:HIGH:POINTS (default %(default)s)")
    parser.add_argument("--seeds", type=int, default=2, help="independent data sets per P (default 2)")
    parser.add_argument("--convention", default="", help="e.g. architecture=T,a=0,c=0,d=1,e=0 (model T defaults)")
    parser.add_argument("--steps", type=int, default=2000, help="Adam steps (default 2000)")
    parser.add_argument("--burn-in", type=int, default=2000, help="SGLD burn-in steps (default 2000)")
    parser.add_argument("--draws", type=int, default=50, help="SGLD draws per chain (default 50)")
    parser.add_argument("--thin", type=int, default=20, help="SGLD steps between draws (default 20)")
    parser.add_argument("--chains", type=int, default=2, help="SGLD chains per seed and start (default 2)")
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                        help="torch dtype of the models (default float64; float32 for large GPU sweeps)")
    parser.add_argument("--workers", type=int, default=None, help="local worker processes (CPU; default: CPU count)")
    parser.add_argument("--executor", default="local",
                        help="where points run: local (processes here), dask (a LocalCluster of --workers) "
                        "or dask:ADDRESS (a running scheduler)")
    parser.add_argument("--json", default=None, help="write the JSON report to PATH, or - for stdout")
    parser.add_argument("--plot", default=None, help="write the plot to PATH (png, pdf, svg)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None,
                        help="torch device (default: cuda when torch sees a GPU)")
    parser.add_argument("--seed", type=int, default=0, help="base seed of data and initialisation")
    parser.add_argument("--out", default=None, help="folder for resumable per-point results")


def parse_P_grid(text: str) -> list[int]:
    """``"10,20,40"`` or ``"geom:LOW:HIGH:POINTS"`` (rounded, deduplicated) as sorted ints."""
    import numpy as np

    from emergence.theory.errors import EmergenceError

    try:
        if text.startswith("geom:"):
            _, low, high, points = text.split(":")
            values = np.geomspace(float(low), float(high), int(points))
        else:
            values = [float(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise EmergenceError(f"cannot read --P-grid {text!r}; use 10,20,40 or geom:LOW:HIGH:POINTS") from None
    grid = sorted({int(round(v)) for v in values})
    if not grid or grid[0] < 1:
        raise EmergenceError("--P-grid needs positive numbers of sequences")
    return grid


def run(args) -> int:
    import json
    import sys
    import tempfile
    from functools import partial

    from emergence.numerics.io import provenance, to_json_text, write_json_atomic
    from emergence.theory.errors import EmergenceError, InvalidSizeError
    from emergence.validation.copy_task.analysis import agreement, measured_curves
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.experiment import point_config, run_copy_point
    from emergence.validation.runtime import resolve_device
    from emergence.validation.copy_task.predictions import predicted_phase_diagram
    from emergence.validation.executors import sweep_executor
    from emergence.validation.sweeps import run_sweep

    if args.L < 2 or args.V < 2:
        raise InvalidSizeError(f"need --L >= 2 and --V >= 2, got L={args.L}, V={args.V}")
    if args.seeds < 1 or args.steps < 1 or args.chains < 1 or args.draws < 4 or args.thin < 1:
        raise InvalidSizeError("--seeds, --steps, --chains, --thin must be >= 1 and --draws >= 4")
    device = resolve_device(args.device)
    convention = CopyTaskConvention.parse(args.convention, attention=args.attention)
    grid = parse_P_grid(args.P_grid)
    configs = [
        point_config(
            args.attention, args.optimizer, args.L, args.V, P, args.seeds, convention, seed=args.seed,
            adam_steps=args.steps, sgld_burn_in=args.burn_in, sgld_draws=args.draws,
            sgld_thin=args.thin, chains=args.chains, dtype=args.dtype, objective=args.objective,
        )
        for P in grid
    ]
    executor = sweep_executor(args.executor, args.workers, device)
    out = args.out or tempfile.mkdtemp(prefix="emergence-copy-head-")
    results = run_sweep(partial(run_copy_point, device=device), configs, out, executor=executor,
                        description=f"copy-head {args.attention} {args.optimizer}")
    measured = measured_curves(args.attention, args.optimizer, grid, results)
    try:
        fine = [grid[0] * (grid[-1] / grid[0]) ** (i / 199) for i in range(200)] if len(grid) > 1 else grid
        predicted = predicted_phase_diagram(args.attention, args.L, args.V, convention, fine)
        prediction_note = None
    except EmergenceError as error:
        predicted, prediction_note = None, str(error)
        print(f"emergence: note: no theory curves ({error}); reporting measurements only", file=sys.stderr)
    report = {
        "predicted": predicted,
        "prediction_note": prediction_note,
        "measured": measured,
        "agreement": agreement(args.attention, measured, predicted),
        "results_folder": str(out),
        "provenance": provenance(json.loads(to_json_text(configs[0])) | {"P_grid": grid, "device": device}, args.seed),
    }
    if args.plot:
        from emergence.validation.copy_task.plot import plot_copy_head

        plot_copy_head(args.plot, measured, predicted,
                       f"copy head, {args.attention} attention, {args.optimizer} ({args.objective}), L={args.L}, V={args.V}, "
                       f"model {convention.architecture} (reconstructed theory)")
    if args.json == "-":
        sys.stdout.write(to_json_text(report))
    else:
        if args.json:
            write_json_atomic(args.json, report)
        print(f"{'P':>8} {'c1':>14} {'cG':>14} {'aG':>8} {'loss':>9}")
        for i, P in enumerate(grid):
            print(f"{P:>8} {measured['c1_mean'][i]:>7.3f}±{measured['c1_std'][i]:<6.3f} "
                  f"{measured['cG_mean'][i]:>7.3f}±{measured['cG_std'][i]:<6.3f} "
                  f"{measured['aG_mean'][i]:>8.3f} {measured['loss_mean'][i]:>9.3f}")
        names = ("P_star",) if args.attention == "softmax" else ("P1", "crossover")
        print("measured " + ", ".join(f"{n} = {measured[n]}" for n in names))
    return 0
