"""Phase diagram of the copy-head reduced action: global-minimum order parameters, loss and transitions versus P.

The reduced actions are the engine's reconstruction of the copy-head theory (model T by
default; see docs/copy_head_scaling.md), minimised on a logarithmic grid of P with the
generated kernels.  Transitions that do not occur inside the grid are null.
"""

from __future__ import annotations

from pathlib import Path

NAME = "phase-diagram"
HELP = "global minimum of the copy-head reduced action versus P, with its transitions"
MAX_POINTS = 100_000


def add_arguments(parser):
    from emergence.cli.commands._token_arguments import add_token_arguments
    from emergence.numerics.copy_head.sizes import MINIMUM_L, MINIMUM_V
    from emergence.cli.commands._checks import PLOT_FORMATS, integer, output_file, positive_float

    parser.add_argument("--attention", required=True, choices=("linear", "softmax"))
    parser.add_argument("--L", type=integer(MINIMUM_L, what="L"), required=True, help="sequence length")
    parser.add_argument("--V", type=integer(MINIMUM_V, what="V"), required=True, help="vocabulary size")
    parser.add_argument("--P-min", dest="P_min", type=positive_float, default=1.0, help="smallest P (default 1)")
    parser.add_argument("--P-max", dest="P_max", type=positive_float, default=1e8, help="largest P (default 1e8)")
    parser.add_argument("--points", type=integer(8, MAX_POINTS), default=400,
                        help=f"grid points, log-spaced, 8 to {MAX_POINTS} (default 400)")
    parser.add_argument("--convention", default="", help="e.g. a=0,c=0,d=1,e=0 (default: model T)")
    add_token_arguments(parser, "of the theory")
    parser.add_argument("--json", type=output_file(".json", stdout=True), help="write the result as JSON to PATH, or - for stdout")
    parser.add_argument("--plot", type=output_file(*PLOT_FORMATS), help="write a figure (order parameters and loss versus log P)")


def run(args) -> int:
    import sys

    from emergence.api import phase_diagram
    from emergence.report.figures import figure_format, save_figure
    from emergence.numerics.copy_head.phase_diagram import check_grid
    from emergence.base.io import provenance, to_json_text, write_json_atomic
    from emergence.base.progress import heartbeat

    from emergence.cli.commands._token_arguments import token_process_text, token_statistics_line

    tokens = token_process_text(args)
    grid = check_grid(args.P_min, args.P_max, args.points)
    if args.plot:
        figure_format(args.plot)
    with heartbeat(f"phase diagram on {len(grid)} points"):
        diagram = phase_diagram(args.attention, args.L, args.V, P=grid, convention=args.convention, tokens=tokens)
    diagram.provenance = provenance(vars_for_record(args), seed=None)
    record = diagram.to_dict()
    summary = sys.stderr if args.json == "-" else sys.stdout  # stdout carries only the JSON then
    print(f"copy-head phase diagram ({args.attention} attention, L={args.L}, V={args.V}, "
          f"{len(grid)} points, tokens {diagram.details.get('tokens', 'iid')}, "
          f"reconstruction: model {diagram.convention['architecture']})", file=summary)
    if "token_statistics" in diagram.details:
        print(f"  {token_statistics_line(diagram.details['token_statistics'])}", file=summary)
    for name in ("P1", "crossover", "crossover_literal", "P_star", "spinodals", "critical_exponent"):
        print(f"  {name:<18} {_describe(diagram.transitions[name])}", file=summary)
    if not any(value is not None for value in diagram.transitions.values()):
        print(f"  {_range_note(diagram.P, diagram.details['aG'])}", file=summary)
    if args.json == "-":
        print(to_json_text(record), end="")
    elif args.json:
        print(f"wrote {write_json_atomic(args.json, record)}")
    if args.plot:
        print(f"wrote {save_figure(diagram.plot(), args.plot)}", file=summary)
    return 0


def vars_for_record(args) -> dict:
    """The command's arguments as a JSON-ready configuration."""
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "handler"}


def _range_note(P, aG) -> str:
    """Where no transition lies on the grid: the state the whole grid is in, and which end of the range to move."""
    above = aG[-1] is None or aG[-1] < 0.5  # still no copy head at the largest P: the transitions lie above it
    state = "without" if above else "with"
    flag, side = ("--P-max", "above") if above else ("--P-min", "below")
    return (f"note: {'P range too small' if above else 'P range starts too high'}: the global minimum is {state} a copy head on the whole grid P in "
            f"[{P[0]:.3g}, {P[-1]:.3g}] (attention on the previous token {_shown(aG[0])} to {_shown(aG[-1])}); "
            f"the transitions lie {side} it: {'raise' if above else 'lower'} {flag}")


def _shown(value) -> str:
    return "-" if value is None else f"{value:.3g}"


def _describe(value) -> str:
    if value is None:
        return "none in range"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v:.6g}" for k, v in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(f"{v:.6g}" for v in value) + "]"
    return f"{value:.8g}"
