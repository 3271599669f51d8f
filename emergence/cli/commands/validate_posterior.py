"""Sample the copy-task posterior and compare it with the posterior-level theory, the saddle (MAP) beside it.

Softmax (``--method umbrella``, the default): harmonic windows on a_G sampled by HMC and combined
by MBAR give the free-energy profile F(a_G) at each P; the measured P* is where the two basins
have equal free energy.  Linear (``--method hmc``, the default): unbiased HMC posterior means of
c1 and cG along P, with P1 and the crossover.  ``--method replica-exchange`` keeps the older
sampler for comparison.  ``predicted`` is the posterior theory (mean-field bulk of W_QK),
``saddle`` the MAP prediction.  With ``--out`` each finished P is stored atomically and a rerun
resumes.  Both theories are our own reconstruction (only the paper's abstract is available).
"""

from __future__ import annotations

NAME = "posterior"
HELP = "posterior sampling of copy-task models (umbrella+MBAR, HMC) against the posterior theory and the saddle (MAP)"


def add_arguments(parser):
    from emergence.numerics.copy_head.sizes import MINIMUM_L, MINIMUM_V
    from emergence.cli.commands._checks import PLOT_FORMATS, add_executor_arguments, integer, output_file, seed
    from emergence.validation.copy_task.config import POSTERIOR_DEFAULTS as REPLICA
    from emergence.validation.copy_task.config import FREE_ENERGY_DEFAULTS as HMC
    from emergence.numerics.copy_head.posterior import DEFAULT_TRIAL
    from emergence.validation.copy_task.posterior_free_energy import VERDICT_TRIALS
    from emergence.validation.copy_task.posterior_methods import POSTERIOR_METHODS

    parser.add_argument("--attention", choices=("linear", "softmax"), required=True)
    parser.add_argument("--L", type=integer(MINIMUM_L, what="L"), default=None, help="sequence length (or --study)")
    parser.add_argument("--study", type=study_sizes, default=None, metavar="L=L1,L2,...",
                        help="softmax, umbrella: the sampled P*(L) at each L, each grid moved until it brackets the "
                             "sign change of Delta F, beside the saddle's and the posterior theory's (instead of --L)")
    parser.add_argument("--size-settings", type=size_settings, action="append", dest="per_size", default=None,
                        metavar="L:NAME=VALUE,...",
                        help="--study: sampler settings for one L in place of the others (repeat for more sizes); NAME "
                             "is an umbrella option without its dashes (kappa, windows, max-windows, draws, ...) or "
                             "P-grid, the L's starting grid; lists are colon-separated, windows also as "
                             "range:FIRST:LAST:STEP, e.g. 16:windows=range:0.05:0.75:0.05,kappa=800,max-windows=24,"
                             "P-grid=520:570:620:680:740")
    parser.add_argument("--extensions", type=integer(0), default=2,
                        help="--study: grid extensions per L before a size is reported without P* (default %(default)s)")
    parser.add_argument("--V", type=integer(MINIMUM_V, what="V"), required=True, help="vocabulary size")
    parser.add_argument("--method", choices=POSTERIOR_METHODS, default=None,
                        help="umbrella (softmax default), hmc (linear default) or replica-exchange")
    parser.add_argument("--P-grid", default=None,
                        help="comma list of P, or geom:LOW:HIGH:POINTS (default: softmax, 6 points from P*/2.5 to 2P* "
                             "of the posterior theory; linear, geom:8:1024:8)")
    parser.add_argument("--windows", default=None,
                        help=f"umbrella: comma list of window centres in a_G (default {','.join(map(str, HMC['centres']))})")
    parser.add_argument("--kappa", type=stiffness, default=HMC["kappa"],
                        help="umbrella: window stiffness, one number or a comma list of one per --windows centre "
                             "(stiffer windows where the profile bends down on the barrier; default %(default)s)")
    parser.add_argument("--exchange-every", type=integer(0), default=HMC["exchange_every"],
                        help="umbrella: swap neighbouring windows' configurations every N HMC trajectories (0: no "
                             "exchange; default %(default)s)")
    parser.add_argument("--min-overlap", type=float, default=HMC["min_overlap"],
                        help="umbrella: add windows half-way where a neighbour overlap is below this, make a window "
                             "whose chains split (R-hat above 1.1 after 100 or more draws) four times stiffer with windows beside it, and "
                             "rerun (0: one pass; default %(default)s)")
    parser.add_argument("--max-windows", type=integer(2), default=HMC["max_windows"],
                        help="umbrella: the most windows the placement may reach (default %(default)s)")
    parser.add_argument("--divide", type=float, default=HMC["divide"],
                        help="umbrella: a_G dividing the uniform and copy basins (default %(default)s)")
    parser.add_argument("--chains", type=integer(2), default=None,
                        help=f"chains per window (HMC, default {HMC['chains']}) or ladders per P (replica exchange, "
                             f"default {REPLICA['chains']})")
    parser.add_argument("--warmup", type=integer(0), default=HMC["warmup"], help="HMC warm-up trajectories (default %(default)s)")
    parser.add_argument("--draws", type=integer(4), default=None,
                        help=f"draws per chain (HMC default {HMC['draws']}, replica exchange {REPLICA['draws']})")
    parser.add_argument("--first-draws", type=integer(0), default=HMC["first_draws"],
                        help="umbrella: draws per chain before the diagnostics are first checked; the point stops once "
                             "every window meets them and draws on in blocks of 100 up to --draws otherwise (0: always "
                             "--draws; default %(default)s)")
    parser.add_argument("--leapfrog", type=integer(1), default=HMC["leapfrog"], help="HMC leapfrog steps (default %(default)s)")
    parser.add_argument("--data-multiple", type=integer(1), default=HMC["data_multiple"],
                        help="self-averaging probe: the data term of K*P sequences weighted 1/K (run as beta_0/K on "
                             "K*P sequences; default %(default)s, the posterior itself)")
    parser.add_argument("--replicas", type=integer(1), default=REPLICA["replicas"], help="replica exchange: rungs per ladder")
    parser.add_argument("--coldest", type=float, default=REPLICA["coldest"], help="replica exchange: lowest temperature")
    parser.add_argument("--hottest", type=float, default=REPLICA["hottest"], help="replica exchange: highest temperature")
    parser.add_argument("--tempering", choices=("likelihood", "full"), default=REPLICA["tempering"])
    parser.add_argument("--burn-in", type=integer(0), default=REPLICA["burn_in"], help="replica exchange: moves before measuring")
    parser.add_argument("--thin", type=integer(1), default=REPLICA["thin"], help="replica exchange: moves between draws")
    parser.add_argument("--theory-draws", type=integer(100), default=None,
                        help="Monte Carlo draws of the posterior theory (softmax: rows, default 20000 for P* and 4000 "
                             "per profile; linear: weight draws under the law, default 256)")
    parser.add_argument("--trial", choices=tuple(VERDICT_TRIALS), default=DEFAULT_TRIAL,
                        help="softmax, umbrella: the posterior theory's trial, block (KL-optimal per-block variances) "
                             "or gauge (gauge-correct Gaussian); default %(default)s")
    parser.add_argument("--from-record", nargs="+", default=None, metavar="FILE",
                        help="softmax: judge saved umbrella validations (their JSON) against the theory of --trial "
                             "without resampling; several files of one setting are merged point by point, a later "
                             "file's point replacing an earlier one's at the same P")
    parser.add_argument("--importance-draws", type=integer(0), default=0,
                        help="--from-record: draws per mode of the importance-weighted diagnosis of the theory's "
                             "trial (0 skips it; the verdict does not read it; default %(default)s)")
    parser.add_argument("--convention", default="", help="e.g. architecture=T,a=0,c=0,d=1,e=0 (model T defaults)")
    add_executor_arguments(parser, "P points")
    parser.add_argument("--json", default=None, type=output_file(".json", stdout=True),
                        help="write the JSON report to PATH, or - for stdout")
    parser.add_argument("--plot", default=None, type=output_file(*PLOT_FORMATS), help="write the plot to PATH (png, pdf, svg)")
    parser.add_argument("--seed", type=seed, default=0, help="seed of data and initialisation")


def stiffness(text: str) -> float | list[float]:
    """``--kappa 800`` (every window) or ``--kappa 800,3200,800`` (one per ``--windows`` centre, in its order).

    >>> stiffness("800"), stiffness("800,3200")
    (800.0, [800.0, 3200.0])
    """
    import argparse

    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--kappa {text!r}: use a number or a comma list of numbers") from None
    return values[0] if len(values) == 1 else values


def study_sizes(text: str) -> list[int]:
    """``--study L=8,12,16`` (or ``8,12,16``): distinct context lengths, each at least the theory's minimum L."""
    import argparse

    from emergence.numerics.copy_head.sizes import MINIMUM_L

    values = text.removeprefix("L=").split(",")
    if not all(value.strip().isdigit() and int(value) >= MINIMUM_L for value in values):
        raise argparse.ArgumentTypeError(f"--study {text!r}: use L=L1,L2,... with integers >= {MINIMUM_L}")
    return sorted({int(value) for value in values})


SIZE_SETTINGS = {"windows": "centres", "kappa": "kappa", "divide": "divide", "exchange-every": "exchange_every",
                 "min-overlap": "min_overlap", "max-windows": "max_windows", "chains": "chains", "warmup": "warmup",
                 "draws": "draws", "first-draws": "first_draws", "leapfrog": "leapfrog", "data-multiple": "data_multiple",
                 "P-grid": "P"}
"""``--size-settings`` names (the umbrella options without their dashes, and ``P-grid``) -> the API's fields."""
SIZE_SETTINGS_USAGE = ("use L:NAME=VALUE,... with NAME one of " + ", ".join(SIZE_SETTINGS)
                       + "; lists colon-separated, windows also range:FIRST:LAST:STEP")


def size_settings(text: str) -> tuple[int, dict]:
    """``--size-settings 16:kappa=800,windows=range:0.05:0.75:0.05,P-grid=520:570:620`` -> ``(16, {"kappa": 800.0,
    "centres": [0.05, 0.1, ..., 0.75], "P": [520, 570, 620]})``: the L and its settings under the API's names
    (their ranges are checked by :func:`emergence.api.posterior_study`).

    >>> size_settings("16:kappa=800,windows=range:0.1:0.3:0.1,P-grid=520:570,draws=800")
    (16, {'kappa': 800.0, 'centres': [0.1, 0.2, 0.3], 'P': [520, 570], 'draws': 800})
    """
    import argparse

    size, colon, body = text.partition(":")
    pairs = [part.partition("=") for part in body.split(",")] if colon else []
    if not size.strip().isdigit() or not pairs or any(not equals or name not in SIZE_SETTINGS for name, equals, _ in pairs):
        raise argparse.ArgumentTypeError(f"--size-settings {text!r}: {SIZE_SETTINGS_USAGE}")
    try:
        return int(size), {SIZE_SETTINGS[name]: _size_setting(name, value) for name, _, value in pairs}
    except ValueError:
        raise argparse.ArgumentTypeError(f"--size-settings {text!r}: a value is not a number of its kind "
                                         f"({SIZE_SETTINGS_USAGE})") from None


def _size_setting(name: str, value: str):
    """One ``--size-settings`` value: a colon list (windows: numbers, or range:FIRST:LAST:STEP inclusive; P-grid:
    integers; kappa: one number per window), a number (kappa, divide, min-overlap) or an integer (``ValueError``
    otherwise)."""
    if name == "windows" and value.startswith("range:"):
        return _window_range(value.removeprefix("range:"))
    if name in ("windows", "P-grid") or name == "kappa" and ":" in value:
        return [(int if name == "P-grid" else float)(part) for part in value.split(":")]
    return float(value) if name in ("kappa", "divide", "min-overlap") else int(value)


def _window_range(text: str) -> list[float]:
    """``FIRST:LAST:STEP`` -> FIRST, FIRST + STEP, ... up to LAST inclusive (to 1e-9 of a step), rounded to 12
    decimals (``ValueError`` for a step <= 0, LAST below FIRST, a value not finite or more than
    :data:`MAX_WINDOW_RANGE` centres).

    >>> _window_range("0.05:0.2:0.05")
    [0.05, 0.1, 0.15, 0.2]
    """
    import math

    first, last, step = (float(part) for part in text.split(":"))
    if not (step > 0 and last >= first and all(map(math.isfinite, (first, last, step)))):
        raise ValueError(text)
    count = int(math.floor((last - first) / step + 1e-9)) + 1
    if count > MAX_WINDOW_RANGE:
        raise ValueError(text)
    return [round(first + k * step, 12) for k in range(count)]


MAX_WINDOW_RANGE = 1000
"""The most centres ``range:FIRST:LAST:STEP`` may name (far beyond any placement's ``max-windows``)."""


def _settings(args, method: str) -> dict:
    """The sampler fields the API takes, from the arguments of ``method`` (checked by :func:`_check_settings`)."""
    if method == "replica-exchange":
        chosen = {"replicas": args.replicas, "coldest": args.coldest, "hottest": args.hottest,
                  "tempering": args.tempering, "burn_in": args.burn_in, "thin": args.thin}
    else:
        _check_settings(args, method)
        chosen = {"divide": args.divide, "warmup": args.warmup, "leapfrog": args.leapfrog,
                  "first_draws": args.first_draws,
                  "data_multiple": args.data_multiple, "exchange_every": args.exchange_every,
                  "min_overlap": args.min_overlap, "max_windows": args.max_windows}
        chosen["kappa"] = args.kappa
        if args.windows is not None:
            chosen["centres"], chosen["kappa"] = _centres(args.windows, args.kappa)
    for key in ("chains", "draws"):
        if getattr(args, key) is not None:
            chosen[key] = getattr(args, key)
    return chosen


def _check_settings(args, method: str) -> None:
    """One line for sampler settings that cannot run; replica exchange's ladder needs torch (after the memory estimate)."""
    from emergence.base.errors import EmergenceError

    if method == "replica-exchange":
        from emergence.validation.copy_task.posterior_validation import temperature_ladder

        try:
            temperature_ladder(args.replicas, args.coldest, args.hottest)
        except ValueError as error:
            raise EmergenceError(str(error)) from None
        if args.tempering == "full" and args.coldest < 1:
            raise EmergenceError("full tempering needs --coldest 1 (rungs below T = 1 only with likelihood tempering)")
    elif not (min(args.kappa if isinstance(args.kappa, list) else [args.kappa]) > 0 and 0 < args.divide < 1):
        raise EmergenceError(f"need --kappa > 0 and 0 < --divide < 1, got {args.kappa}, {args.divide}")
    elif not 0 <= args.min_overlap < 1:
        raise EmergenceError(f"need 0 <= --min-overlap < 1, got {args.min_overlap}")


def _architecture(text: str) -> str | None:
    """The architecture ``--convention`` names (model T by default), for the memory estimate; ``None`` where the text
    does not parse (the API refuses it in one line after the estimate)."""
    from emergence.base.errors import EmergenceError
    from emergence.validation.copy_task.config import CopyTaskConvention

    try:
        return CopyTaskConvention.parse(text).architecture
    except (EmergenceError, ValueError):
        return None


def _window_centres(text: str) -> list[float]:
    """``--windows 0.1,0.3,0.5`` as given: numbers inside (0, 1), at least two of them distinct."""
    from emergence.base.errors import EmergenceError

    try:
        given = [float(part) for part in text.split(",")]
    except ValueError:
        raise EmergenceError(f"--windows {text!r}: use a comma list of numbers in (0, 1)") from None
    if len(set(given)) < 2 or not all(0 < c < 1 for c in given):
        raise EmergenceError(f"--windows {text!r}: need at least two distinct centres in (0, 1)")
    return given


def _centres(text: str, kappa: float | list[float]) -> tuple[list[float], float | list[float]]:
    """``--windows 0.1,0.3,0.5``: at least two distinct centres inside (0, 1), sorted, each with its ``--kappa``
    where that is a list (one per centre)."""
    from emergence.base.errors import EmergenceError

    given = _window_centres(text)
    if isinstance(kappa, float):
        return sorted(set(given)), kappa
    if len(kappa) != len(given) or len(set(given)) != len(given):
        raise EmergenceError(f"--kappa: one stiffness per --windows centre, got {len(kappa)} for {len(given)} "
                             f"centres{'' if len(set(given)) == len(given) else ' (some repeated)'}")
    pairs = sorted(zip(given, kappa))
    return [c for c, _ in pairs], [k for _, k in pairs]


def _print_umbrella(report) -> None:
    measured, agreement = report["measured"], report["agreement"]
    print(f"{'P':>7} {'Delta F (nats)':>15} {'theory':>7} {'copy mass':>9} {'aG mean':>8} {'theory':>7} "
          f"{'basins (uniform, copy)':>23} {'R-hat':>6} {'ESS':>5} {'overlap':>7}")
    for i in range(len(measured["P"])):
        print(_umbrella_row(report, i))
    print(_P_star_line(report))
    print(f"passes: {agreement['passes']}" + ("" if agreement["passes"] else f" ({'; '.join(agreement['reasons'])})"))
    _print_bulk(measured["bulk"])
    _print_importance_sampled(report)


def _print_bulk(rows) -> None:
    """Per window: sampled t_u, t_v and t_copy against the theory's t_u, t_v (the theory gives the copy diagonal t_v)."""
    print("bulk of W_QK per window (a_G: sampled/theory t_u, t_v, and the copy diagonal's t_copy against t_v):")
    for row in rows:
        t_copy = row.get("t_copy") or [float("nan")] * len(row["aG"])
        cells = "  ".join(f"{a:.2f}: {tu:.2f}/{tu_th:.2f} {tv:.2f}/{tv_th:.2f} {tc:.2f}" for a, tu, tu_th, tv, tv_th, tc in
                          zip(row["aG"], row["t_u"], row["t_u_theory"], row["t_v"], row["t_v_theory"], t_copy))
        print(f"  P = {row['P']}: {cells}")


def _print_importance_sampled(report) -> None:
    """Where the theory's modes coexist: its own two trials importance-weighted, beside the sampled Delta F."""
    rows = [(P, value, measured) for P, value, measured in zip(report["measured"]["P"],
            report["predicted"].get("delta_F_importance_sampled") or [], report["measured"]["delta_F"]) if value]
    if not rows:
        return
    print("the theory's two modes, importance-weighted (a diagnosis of its variational bound, not a prediction):")
    for P, value, measured in rows:
        print(f"  P = {P}: F_copy - F_uniform {value['theory_modes']:.1f} (theory) -> {value['value']:.1f} ± "
              f"{value['error']:.1f} (weighted); sampled Delta F {measured:.1f}")


def _umbrella_row(report, i: int) -> str:
    """Point ``i`` of the umbrella table: Delta F, copy mass, a_G and the basins against the theory, diagnostics."""
    measured, theory = report["measured"], report["predicted"]["points"][i]
    basins = measured["basin_aG"][i]
    shown = ", ".join("-" if basins[k] is None else f"{basins[k]:.2f}" for k in ("uniform", "copy"))
    flag = "" if measured["converged"][i] else "  NOT CONVERGED"
    return (f"{measured['P'][i]:>7} {measured['delta_F'][i]:>8.1f} ± {measured['delta_F_error'][i]:<4.1f} "
            f"{theory['delta_F']:>7.1f} {measured['mode_weight'][i]:>9.3f} {measured['aG_mean'][i]:>8.3f} "
            f"{theory['aG_mean']:>7.3f} {shown:>23} {max(measured['profiles'][i]['window_rhat']):>6.3f} "
            f"{min(measured['profiles'][i]['window_ess']):>5.0f} {_overlap(report, i):>7}{flag}")


def _shown_P_star(P_star: dict) -> str:
    """A sampled P*: the grid bracket it lies in (the measurement's resolution), then the reading inside it with the
    error from Delta F alone; records without a bracket show value and error."""
    error = "" if P_star["error"] is None else f" ± {P_star['error']:.0f}"
    if "bracket" not in P_star:
        return f"{P_star['value']:.0f}{error}"
    low, high = P_star["bracket"]
    return f"[{low}, {high}] (read {P_star['value']:.0f}{error})"


def _P_star_line(report) -> str:
    """The measured P* (with its error when there is one) beside the posterior theory's and the saddle's."""
    P_star, theory, saddle = report["measured"]["P_star"], report["predicted"]["P_star"], report["saddle"]["P_star"]
    if P_star is None:
        shown = "none on the converged grid"
    else:
        shown = _shown_P_star(P_star)
    return (f"P* measured {shown}; posterior theory {'none' if theory is None else f'{theory:.0f}'}; "
            f"saddle (MAP) {saddle if saddle is None else round(saddle)}")


def _overlap(report, i) -> str:
    centres = report["measured"]["profiles"][i]["centres"]
    return "-" if len(centres) < 2 else f"{report['measured']['overlap_min']:.2f}"


def _print_transitions(report) -> None:
    measured, predicted, agreement = report["measured"], report["predicted"], report["agreement"]
    print(f"{'P':>7} {'c1':>14} {'cG':>14} {'R-hat':>6} {'ESS':>6}  posterior c1, cG")
    for i, P in enumerate(measured["P"]):
        flag = " FLAGGED" if measured["flagged"][i] else ""
        theory = f"{predicted['c1'][i]:.3f}, {predicted['cG'][i]:.3f}" if predicted else "-"
        print(f"{P:>7} {measured['c1_mean'][i]:>7.3f}±{measured['c1_sem'][i]:<6.3f} "
              f"{measured['cG_mean'][i]:>7.3f}±{measured['cG_sem'][i]:<6.3f} {measured['rhat_max'][i]:>6.3f} "
              f"{measured['ess_min'][i]:>6.0f}  {theory}{flag}")
    saddle = report["saddle"] or {"transitions": {}}
    for name in ("P1", "crossover"):
        values = [measured.get(name), predicted.get(name) if predicted else None, saddle["transitions"].get(name)]
        shown = ["-" if value is None else f"{value:.3g}" for value in values]
        print(f"{name} measured {shown[0]} (between grid points), posterior theory {shown[1]}, saddle (MAP) {shown[2]}")
    print(f"passes: {agreement['passes']} ({agreement['reason']})")


def _print_replica_exchange(report) -> None:
    measured, predicted = report["measured"], report["predicted"]
    print(f"{'P':>7} {'aG':>14} {'copy w':>7} {'R-hat':>6} {'ESS':>6} {'swap':>5}  posterior aG")
    for i, P in enumerate(measured["P"]):
        theory = f"{predicted['aG'][i]:.3f}" if predicted else "-"
        flag = " FLAGGED" if measured["flagged"][i] else ""
        swap = measured["swap_acceptance_min"][i]
        print(f"{P:>7} {measured['aG_mean'][i]:>7.3f}±{measured['aG_sem'][i]:<6.3f} {measured['mode_weight'][i]:>7.2f} "
              f"{measured['rhat_max'][i]:>6.2f} {measured['ess_min'][i]:>6.0f} "
              f"{swap if swap is None else round(swap, 2)!s:>5}  {theory:>12}{flag}")
    print(f"passes: {report['agreement']['passes']} ({report['agreement']['reason']})")


def run(args) -> int:
    from emergence.api import validate_posterior
    from emergence.base.errors import EmergenceError
    from emergence.cli.commands.validate_copy_head import parse_P_grid
    from emergence.validation.copy_task.posterior_memory import check_posterior_memory
    from emergence.validation.copy_task.posterior_methods import posterior_method

    if args.from_record is not None:
        return _run_from_record(args)
    if args.study is not None:
        return _run_study(args)
    if args.per_size:
        raise EmergenceError("--size-settings goes with --study (use the sampler options themselves with --L)")
    if args.L is None:
        raise EmergenceError("validate posterior needs --L (or --study L=L1,L2,...)")
    method = posterior_method(args.attention, args.method)
    settings = _settings(args, method)
    grid = parse_P_grid(args.P_grid) if args.P_grid else None
    check_posterior_memory(args.attention, method, args.L, args.V, grid, settings, args.theory_draws, args.workers,
                           _architecture(args.convention))
    if method == "replica-exchange":
        _check_settings(args, method)
    _check_before_sampling(args, method)  # after the memory estimate: importing torch and ArviZ takes seconds
    report = validate_posterior(args.attention, args.L, args.V, grid, method=method, convention=args.convention,
                                seed=args.seed, out=args.out, executor=args.executor, workers=args.workers,
                                theory_draws=args.theory_draws, trial=args.trial, **settings).to_dict()
    return _write_report(args, method, report)


def _write_report(args, method: str, report: dict) -> int:
    """The plot, the JSON (a file or stdout) and, unless the JSON went to stdout, the method's table."""
    import sys

    from emergence.base.io import to_json_text, write_json_atomic

    if args.plot:
        _save_plot(args, method, report)
    if args.json == "-":
        sys.stdout.write(to_json_text(report))
        return 0
    if args.json:
        write_json_atomic(args.json, report)
    {"umbrella": _print_umbrella, "hmc": _print_transitions}.get(method, _print_replica_exchange)(report)
    if "cost" in report:
        _print_cost(report["cost"])
    return 0


def _run_from_record(args) -> int:
    """``--from-record``: saved umbrella measurements judged again with ``--trial`` (:func:`emergence.api.judge_posterior`)."""
    from emergence.api import judge_posterior
    from emergence.base.errors import EmergenceError

    if args.attention != "softmax" or args.method not in (None, "umbrella") or args.P_grid or args.study is not None:
        raise EmergenceError("--from-record judges softmax umbrella measurements on their own grid: use it with "
                             "--attention softmax and without --P-grid, --study or another --method")
    for path in args.from_record:
        _check_record(path, args.L, args.V)
    _check_before_sampling(args, "umbrella")
    report = judge_posterior(args.from_record, trial=args.trial, theory_draws=args.theory_draws,
                             importance_draws=args.importance_draws).to_dict()
    if args.json != "-":
        print(f"sampled part reused from {', '.join(args.from_record)} (not resampled); theory: "
              f"{report['predicted']['label']}")
    return _write_report(args, "umbrella", report)


def _check_record(path: str, L: int | None, V: int) -> None:
    """One line for a record that cannot be read, is no softmax umbrella validation, or was sampled at other sizes."""
    from emergence.base.errors import EmergenceError
    from emergence.base.io import read_json
    from emergence.validation.copy_task.posterior_rejudge import record_setting

    try:
        setting = record_setting(read_json(path))
    except OSError as error:
        raise EmergenceError(f"--from-record {path}: cannot read it ({error.strerror})") from None
    if setting["V"] != V or L not in (None, setting["L"]):
        raise EmergenceError(f"--from-record {path} was sampled at L={setting['L']}, V={setting['V']}, not "
                             f"{'' if L is None else f'L={L}, '}V={V}")


def _run_study(args) -> int:
    """``--study``: softmax umbrella validations at each L (:func:`emergence.api.posterior_study`), a row per L."""
    import sys

    from emergence.api import posterior_study
    from emergence.base.errors import EmergenceError
    from emergence.base.io import to_json_text, write_json_atomic
    from emergence.validation.copy_task.posterior_memory import check_posterior_memory

    if args.attention != "softmax" or args.method not in (None, "umbrella") or args.P_grid or args.L is not None:
        raise EmergenceError("--study runs softmax umbrella validations on their own grids: use it with --attention "
                             "softmax and without --L, --P-grid or another --method")
    settings, per_size = _settings(args, "umbrella"), _per_size(args.per_size)
    check_posterior_memory("softmax", "umbrella", max(args.study), args.V, None, settings, args.theory_draws, args.workers,
                           _architecture(args.convention))
    _check_before_sampling(args, "umbrella")
    study = posterior_study(args.study, args.V, convention=args.convention, seed=args.seed, out=args.out,
                            executor=args.executor, workers=args.workers, theory_draws=args.theory_draws,
                            extensions=args.extensions, per_size=per_size, **settings)
    if args.plot:
        from emergence.report.figures import save_figure

        save_figure(study.plot(), args.plot)
    if args.json == "-":
        sys.stdout.write(to_json_text(study.to_dict()))
        return 0
    if args.json:
        write_json_atomic(args.json, study.to_dict())
    _print_study(study.to_dict())
    return 0


def _per_size(given) -> dict[int, dict] | None:
    """The repeated ``--size-settings`` as ``{L: settings}``; one L given twice is refused."""
    from emergence.base.errors import EmergenceError

    per_size: dict[int, dict] = {}
    for L, settings in given or ():
        if L in per_size:
            raise EmergenceError(f"--size-settings: L = {L} is given twice; put all of its settings in one")
        per_size[L] = settings
    return per_size or None


def _print_study(study) -> None:
    """One row per L: sampled P* (± error, or why it is missing), saddle and theory, ratios, P*/(L ln^2 L)."""
    print(f"{'L':>4} {'P* sampled':>26} {'saddle':>8} {'theory':>8} {'sampled/saddle':>15} {'theory/sampled':>15} "
          f"{'P*/(L ln^2 L): sampled, saddle, theory':>40}")
    for row in study["rows"]:
        sampled = row["sampled"]
        shown = "-" if sampled is None else _shown_P_star(sampled)
        ratios = ", ".join("-" if value is None else f"{value:.2f}" for value in row["law_ratio"].values())
        cells = [_number(row["saddle"], ".0f"), _number(row["theory"], ".0f"), _number(row["sampled_over_saddle"], ".2f"),
                 _number(row["theory_over_sampled"], ".2f")]
        print(f"{row['L']:>4} {shown:>26} {cells[0]:>8} {cells[1]:>8} {cells[2]:>15} {cells[3]:>15} {ratios:>40}"
              + (f"  ({row['reason']})" if "reason" in row else ""))
    summary = study["summary"]
    if "law_ratio_sampled" in summary:
        spread = summary["law_ratio_sampled"]
        print(f"sampled P*/(L ln^2 L): {spread['min']:.2f} to {spread['max']:.2f} over {summary['sizes_measured']} "
              f"of {summary['sizes']} sizes (relative spread {spread['relative_spread']:.2f})")
        spread = summary["L_ln_L_ratio_sampled"]
        print(f"sampled P*/(L ln L): {spread['min']:.2f} to {spread['max']:.2f} (relative spread "
              f"{spread['relative_spread']:.2f})")
        for pair in summary["local_exponents"]:
            allowed = f" (its brackets allow {pair['range'][0]:.2f} to {pair['range'][1]:.2f})" if "range" in pair else ""
            print(f"local exponent d ln P*/d ln L, L = {pair['L'][0]}-{pair['L'][1]}: sampled {pair['sampled']:.2f}"
                  f"{allowed}, L ln^2 L {pair['L_ln2_L']:.2f}, L ln L {pair['L_ln_L']:.2f}")
    else:
        print(f"no size has a sampled P* ({summary['sizes']} sizes)")


def _number(value, form: str) -> str:
    return "-" if value is None else format(value, form)


def _check_before_sampling(args, method: str) -> None:
    """Refuse, before any long work, a run whose ArviZ, pymbar (umbrella) or plot format is missing."""
    from emergence.validation.samplers.diagnostics import rhat_and_bulk_ess

    rhat_and_bulk_ess([[0.0, 1.0, 2.0, 3.0], [1.0, 0.0, 3.0, 2.0]])  # ArviZ present, before any long work
    if method == "umbrella":
        from emergence.validation.samplers.umbrella import _pymbar

        _pymbar()
    if args.plot:
        from emergence.report.figures import figure_format

        figure_format(args.plot)


def _save_plot(args, method: str, report: dict) -> None:
    from emergence.report.figures import free_energy_figure, posterior_figure, save_figure

    figure = (free_energy_figure if method == "umbrella" else posterior_figure)(report)
    figure.suptitle(f"posterior, {args.attention}, L={report['provenance']['config']['L']}, V={args.V} "
                    "(reconstructed theory)", fontsize=10)
    save_figure(figure, args.plot)


def _print_cost(cost: dict) -> None:
    print(f"cost per batched gradient: {min(cost['seconds_per_gradient']) * 1e3:.0f}-"
          f"{max(cost['seconds_per_gradient']) * 1e3:.0f} ms, {max(cost['fraction_of_limit']):.1%} at best of one core's "
          f"float64 matmul rate ({cost['limit_flop_per_second'] / 1e9:.1f} GFLOP/s)")
