"""The softmax copy transition against the persistence rho, with a corpus placed at its effective persistence.

The theory (reduced action of model T, saddle level) is minimised at each rho of ``markov:rho=R`` on a grid
of P: the coexistence point P* and its metastable window where the jump is first order, the onset where
it has ended.  ``--tokens corpus:PATH`` adds the corpus's own transition (all its lag joints), drawn at its
effective persistence rho_eff = (tr J_1 - sum pi^2) / (1 - sum pi^2); ``--adam`` adds the measured brackets of
``validate copy-head --json`` records.  ``--plot`` draws P* against rho (one figure, the engine's
``rho_sweep`` figure).
"""

from __future__ import annotations

NAME = "rho-sweep"
HELP = "softmax copy transition P* against the persistence rho, with a corpus's point and Adam brackets"


def add_arguments(parser):
    from emergence.cli.commands._checks import PLOT_FORMATS, existing_file, integer, output_file, positive_float
    from emergence.cli.commands._token_arguments import add_token_arguments
    from emergence.numerics.copy_head.sizes import MINIMUM_L, MINIMUM_V

    parser.add_argument("--L", type=integer(max(MINIMUM_L, 4), what="L"), required=True, help="sequence length")
    parser.add_argument("--V", type=integer(MINIMUM_V, what="V"), required=True, help="vocabulary size (classes)")
    parser.add_argument("--rho", type=_rho_list, default=(0.0, 0.2, 0.4, 0.6, 0.8),
                        help="comma list of persistences in [0, 1) (default 0,0.2,0.4,0.6,0.8)")
    parser.add_argument("--P-min", dest="P_min", type=positive_float, default=5.0, help="smallest P (default 5)")
    parser.add_argument("--P-max", dest="P_max", type=positive_float, default=1e5, help="largest P (default 1e5)")
    parser.add_argument("--points", type=integer(8, 10_000), default=300, help="grid points, log-spaced (default 300)")
    add_token_arguments(parser, "placed on the rho axis (a measured one: corpus:PATH)")
    parser.add_argument("--adam", type=existing_file, nargs="*", default=[], metavar="JSON",
                        help="validate copy-head --json records at the same L and V: their measured brackets")
    parser.add_argument("--json", type=output_file(".json", stdout=True), help="write the record as JSON to PATH, or - for stdout")
    parser.add_argument("--plot", type=output_file(*PLOT_FORMATS), help="write the figure P* against rho")


def _rho_list(text: str) -> tuple[float, ...]:
    from emergence.cli.commands._checks import _fail

    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        _fail(f"expected a comma list of numbers, got {text!r}")
    if not values or any(not 0.0 <= value < 1.0 for value in values):
        _fail(f"every rho must lie in [0, 1), got {text!r}")
    return tuple(sorted(set(values)))


def run(args) -> int:
    import sys

    from emergence.base.io import provenance, to_json_text, write_json_atomic
    from emergence.api import rho_sweep
    from emergence.base.progress import heartbeat
    from emergence.cli.commands._token_arguments import token_process_text, token_statistics_line
    from emergence.numerics.copy_head.phase_diagram import check_grid
    from emergence.report.figures import figure_format, save_figure

    tokens = token_process_text(args)
    grid = check_grid(args.P_min, args.P_max, args.points)
    adam = [_read_record(path, args.L, args.V) for path in args.adam]
    if args.plot:
        figure_format(args.plot)
    with heartbeat(f"copy transition at {len(args.rho)} values of rho on {len(grid)} points"):
        record = rho_sweep(args.L, args.V, args.rho, grid, tokens, adam)
    record.provenance = provenance({k: (str(v) if k in ("adam", "json", "plot") else v) for k, v in vars(args).items()
                                    if k != "handler"}, seed=None)
    summary = sys.stderr if args.json == "-" else sys.stdout
    _print_summary(record, summary, token_statistics_line)
    if args.json == "-":
        print(to_json_text(record.to_dict()), end="")
    elif args.json:
        print(f"wrote {write_json_atomic(args.json, record.to_dict())}")
    if args.plot:
        print(f"wrote {save_figure(record.plot(), args.plot)}", file=summary)
    return 0


def _read_record(path, L: int, V: int) -> dict:
    """A ``validate copy-head`` JSON record at sizes ``L, V`` (one-line error otherwise)."""
    import json

    from emergence.base.errors import InvalidArgumentError

    try:
        record = json.loads(open(path, encoding="utf-8").read())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidArgumentError("adam", f"{path}: not a readable JSON record ({type(error).__name__})") from None
    if not isinstance(record, dict) or "measured" not in record or (record.get("L"), record.get("V")) != (L, V):
        raise InvalidArgumentError("adam", f"{path}: not a validate copy-head record at L = {L}, V = {V}")
    return record


def _print_summary(record, out, statistics_line) -> None:
    print(f"copy transition against rho (softmax attention, L={record.L}, V={record.V}, reconstruction: model T)", file=out)
    for entry in record.theory:
        print(f"  rho={entry['rho']:<5g} {_transition(entry)}", file=out)
    if record.corpus:
        print(f"  {statistics_line(record.corpus['token_statistics'])}", file=out)
        print(f"  corpus at rho_eff={record.corpus['rho_eff']:.4f}: {_transition(record.corpus)}", file=out)
    for point in record.adam:
        name = "P*" if point.get("kind", "P_star") == "P_star" else "onset"
        print(f"  Adam {point['tokens']}: measured bracket {point['bracket']}, predicted {name} {point['predicted']}", file=out)


def _transition(entry: dict) -> str:
    if entry.get("P_star") is not None:
        window = entry.get("spinodals")
        return f"first order, P*={entry['P_star']:.6g}" + (f", window [{window[0]:.5g}, {window[1]:.5g}]" if window else "")
    if entry.get("onset") is not None:
        return f"continuous, onset {entry['onset']:.6g}"
    return "no transition on the grid"
