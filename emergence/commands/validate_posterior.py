"""Sample the copy-task posterior with replica exchange and compare it with the posterior-level theory.

``predicted`` is the posterior theory (mean-field bulk of W_QK; softmax model T only; null with
a reason otherwise), ``saddle`` the MAP prediction (the reduced action's phase diagram), and
``measured`` the replica-exchange posterior (target rung T = 1) with R-hat, bulk ESS and swap
acceptance.  With ``--out`` each finished P is stored atomically and a rerun resumes.  Both
theories are our own reconstruction (only the paper's abstract is available).
"""

from __future__ import annotations

NAME = "posterior"
HELP = "replica-exchange posterior sampling of copy-task models against the posterior theory and the saddle (MAP)"


def add_arguments(parser):
    from emergence.validation.copy_task.config import POSTERIOR_DEFAULTS as DEFAULTS

    parser.add_argument("--attention", choices=("linear", "softmax"), required=True)
    parser.add_argument("--L", type=int, required=True, help="sequence length")
    parser.add_argument("--V", type=int, required=True, help="vocabulary size")
    parser.add_argument("--P-grid", default="geom:200:2000:5", help="comma list of P, or geom:LOW:HIGH:POINTS")
    parser.add_argument("--replicas", type=int, default=DEFAULTS["replicas"], help="rungs per ladder (default %(default)s)")
    parser.add_argument("--coldest", type=float, default=DEFAULTS["coldest"],
                        help="lowest temperature (< 1 allowed with likelihood tempering; default %(default)s)")
    parser.add_argument("--hottest", type=float, default=DEFAULTS["hottest"], help="highest temperature (default %(default)s)")
    parser.add_argument("--tempering", choices=("likelihood", "full"), default=DEFAULTS["tempering"])
    parser.add_argument("--chains", type=int, default=DEFAULTS["chains"], help="ladders per P (default %(default)s)")
    parser.add_argument("--burn-in", type=int, default=DEFAULTS["burn_in"], help="moves before measuring")
    parser.add_argument("--draws", type=int, default=DEFAULTS["draws"], help="draws per chain (>= 4)")
    parser.add_argument("--thin", type=int, default=DEFAULTS["thin"], help="moves between draws")
    parser.add_argument("--theory-draws", type=int, default=None,
                        help="Monte Carlo draws of the posterior theory (softmax: rows, default 20000; "
                             "linear: weight draws under the law, default 256)")
    parser.add_argument("--convention", default="", help="e.g. architecture=T,a=0,c=0,d=1,e=0 (model T defaults)")
    parser.add_argument("--workers", type=int, default=None, help="local worker processes (default: CPU count)")
    parser.add_argument("--json", default=None, help="write the JSON report to PATH, or - for stdout")
    parser.add_argument("--plot", default=None, help="write the plot to PATH (png, pdf, svg)")
    parser.add_argument("--seed", type=int, default=0, help="seed of data and initialisation")
    parser.add_argument("--out", default=None, help="folder for resumable per-point results")


def run(args) -> int:
    import json
    import sys
    import tempfile
    from functools import partial

    from emergence.commands.validate_copy_head import parse_P_grid
    from emergence.base.io import provenance, to_json_text, write_json_atomic
    from emergence.base.errors import EmergenceError, InvalidSizeError
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.posterior_validation import (
        linear_posterior_agreement, measured_posterior, posterior_agreement, posterior_point_config,
        predicted_linear_posterior, predicted_posterior, run_posterior_point, temperature_ladder,
    )
    from emergence.validation.copy_task.predictions import predicted_phase_diagram
    from emergence.validation.samplers.diagnostics import rhat_and_bulk_ess
    from emergence.base.sweeps import InProcessExecutor, LocalProcessExecutor, run_sweep

    if args.L < 3 or args.V < 2:
        raise InvalidSizeError(f"need --L >= 3 and --V >= 2, got L={args.L}, V={args.V}")
    if args.chains < 2 or args.draws < 4 or args.thin < 1 or args.burn_in < 0 or (
            args.theory_draws is not None and args.theory_draws < 100):
        raise InvalidSizeError("need --chains >= 2 (R-hat), --draws >= 4, --thin >= 1, --burn-in >= 0, --theory-draws >= 100")
    try:
        temperature_ladder(args.replicas, args.coldest, args.hottest)
    except ValueError as error:
        raise EmergenceError(str(error)) from None
    if args.tempering == "full" and args.coldest < 1:
        raise EmergenceError("full tempering needs --coldest 1 (rungs below T = 1 only with likelihood tempering)")
    rhat_and_bulk_ess([[0.0, 1.0, 2.0, 3.0], [1.0, 0.0, 3.0, 2.0]])  # ArviZ present, before any long work
    if args.plot:
        from emergence.figures import figure_format

        figure_format(args.plot)
    convention = CopyTaskConvention.parse(args.convention, attention=args.attention)
    grid = parse_P_grid(args.P_grid)
    predicted, prediction_note = None, None
    if args.attention == "softmax":
        try:
            predicted = predicted_posterior(args.L, args.V, convention, grid, draws=args.theory_draws or 20_000)
        except EmergenceError as error:
            prediction_note = str(error)
    else:
        try:
            predicted = predicted_linear_posterior(args.L, args.V, convention, grid, draws=args.theory_draws or 256)
        except EmergenceError as error:
            prediction_note = str(error)
    if prediction_note:
        print(f"emergence: note: no posterior theory ({prediction_note}); reporting measurements only", file=sys.stderr)
    try:
        fine = [grid[0] * (grid[-1] / grid[0]) ** (i / 199) for i in range(200)] if len(grid) > 1 else grid
        saddle = predicted_phase_diagram(args.attention, args.L, args.V, convention, fine)
        saddle["label"] = "saddle (MAP; bulk dropped)"
    except (EmergenceError, ValueError) as error:  # ValueError: first_order's fold search on some grids
        saddle = None
        print(f"emergence: note: no saddle curves ({error})", file=sys.stderr)
    threshold = predicted.get("copy_threshold", 0.25) if predicted else 0.25
    configs = [posterior_point_config(args.attention, args.L, args.V, P, convention, seed=args.seed,
                                      replicas=args.replicas, coldest=args.coldest, hottest=args.hottest,
                                      tempering=args.tempering, chains=args.chains, burn_in=args.burn_in,
                                      draws=args.draws, thin=args.thin, copy_threshold=threshold)
               for P in grid]
    executor = InProcessExecutor(threads=1) if args.workers == 1 else LocalProcessExecutor(args.workers)
    out = args.out or tempfile.mkdtemp(prefix="emergence-posterior-")
    results = run_sweep(partial(run_posterior_point, device="cpu"), configs, out, executor=executor,
                        description=f"posterior {args.attention}")
    measured = measured_posterior(grid, results)
    report = {
        "predicted": predicted,
        "prediction_note": prediction_note,
        "saddle": saddle,
        "measured": measured,
        "agreement": (posterior_agreement if args.attention == "softmax" else linear_posterior_agreement)(
            measured, predicted),
        "results_folder": str(out),
        "provenance": provenance(json.loads(to_json_text(configs[0])) | {"P_grid": grid}, args.seed),
    }
    if args.plot:
        from emergence.figures import posterior_figure, save_figure

        figure = posterior_figure(report)
        figure.suptitle(f"posterior, {args.attention}, L={args.L}, V={args.V} (reconstructed theory)", fontsize=10)
        save_figure(figure, args.plot)
    if args.json == "-":
        sys.stdout.write(to_json_text(report))
        return 0
    if args.json:
        write_json_atomic(args.json, report)
    print(f"{'P':>7} {'aG':>14} {'copy w':>7} {'R-hat':>6} {'ESS':>6} {'swap':>5}  posterior aG  saddle")
    for i, P in enumerate(grid):
        theory = f"{predicted['aG'][i]:.3f}" if predicted else "-"
        flag = " FLAGGED" if measured["flagged"][i] else ""
        swap = measured["swap_acceptance_min"][i]
        print(f"{P:>7} {measured['aG_mean'][i]:>7.3f}±{measured['aG_sem'][i]:<6.3f} {measured['mode_weight'][i]:>7.2f} "
              f"{measured['rhat_max'][i]:>6.2f} {measured['ess_min'][i]:>6.0f} "
              f"{swap if swap is None else round(swap, 2)!s:>5}  {theory:>12}{flag}")
    if args.attention == "softmax":
        print(f"P* measured {measured['P_star']}, posterior theory {predicted['P_star'] if predicted else None}, "
              f"saddle (MAP) {saddle['transitions'].get('P_star') if saddle else None}; "
              f"passes: {report['agreement']['passes']}")
    else:
        for name in ("P1", "crossover"):
            print(f"{name} measured {measured.get(name)}, posterior theory {predicted.get(name) if predicted else None}, "
                  f"saddle (MAP) {saddle['transitions'].get(name) if saddle else None}")
        print(f"passes: {report['agreement']['passes']} ({report['agreement']['reason']})")
    return 0
