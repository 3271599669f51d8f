"""The copy transition against the persistence rho, with a corpus placed at its effective persistence.

The theory (reduced action of model T, saddle level) is minimised at each rho of ``markov:rho=R`` on a grid
of P: with softmax attention the coexistence point P* and its metastable window where the jump is first order,
the onset where it has ended; with linear attention the second-order point P1 and the copy crossover.  Several
``--attention`` and ``--L`` give one sweep per combination (a panel each).  ``--tokens corpus:PATH`` adds the
corpus's own transition (all its lag joints) to every panel, drawn at its effective persistence
rho_eff = (tr J_1 - sum pi^2) / (1 - sum pi^2); ``--adam`` adds the measured brackets of ``validate copy-head
--json`` records, each on the panel of its attention and L, with the validation's verdict on it.  ``--json``
writes the sweep's record (a list of them for several panels); ``--plot`` draws the transitions against rho
(one figure, the engine's ``rho_sweep`` figure).
"""

from __future__ import annotations

NAME = "rho-sweep"
HELP = "copy transition (softmax P*, linear P1 and crossover) against the persistence rho, with a corpus and Adam brackets"


def add_arguments(parser):
    from emergence.cli.commands._checks import PLOT_FORMATS, existing_file, integer, output_file, positive_float
    from emergence.cli.commands._token_arguments import add_token_arguments
    from emergence.numerics.copy_head.sizes import MINIMUM_L, MINIMUM_V

    parser.add_argument("--attention", choices=("softmax", "linear"), nargs="+", default=["softmax"],
                        help="attention: softmax (default), linear, or both (one panel each)")
    parser.add_argument("--L", type=integer(max(MINIMUM_L, 4), what="L"), nargs="+", required=True,
                        help="sequence length(s), one panel each")
    parser.add_argument("--V", type=integer(MINIMUM_V, what="V"), required=True, help="vocabulary size (classes)")
    parser.add_argument("--rho", type=_rho_list, default=(0.0, 0.2, 0.4, 0.6, 0.8),
                        help="comma list of persistences in [0, 1) (default 0,0.2,0.4,0.6,0.8)")
    parser.add_argument("--P-min", dest="P_min", type=positive_float, default=5.0, help="smallest P (default 5)")
    parser.add_argument("--P-max", dest="P_max", type=positive_float, default=1e5, help="largest P (default 1e5)")
    parser.add_argument("--points", type=integer(8, 10_000), default=300, help="grid points, log-spaced (default 300)")
    add_token_arguments(parser, "placed on the rho axis (a measured one: corpus:PATH)")
    parser.add_argument("--adam", type=existing_file, nargs="*", default=[], metavar="JSON",
                        help="validate copy-head --json records at V and one of the panels' attention and L: their brackets and verdicts")
    parser.add_argument("--json", type=output_file(".json", stdout=True), help="write the record as JSON to PATH, or - for stdout")
    parser.add_argument("--plot", type=output_file(*PLOT_FORMATS), help="write the figure (transitions against rho)")


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

    from emergence.cli.commands._token_arguments import token_process_text, token_statistics_line
    from emergence.numerics.copy_head.phase_diagram import check_grid
    from emergence.report.figures import figure_format

    tokens = token_process_text(args)
    grid = check_grid(args.P_min, args.P_max, args.points)
    panels = [(attention, L) for attention in dict.fromkeys(args.attention) for L in dict.fromkeys(args.L)]
    adam = _panel_records([_read_record(path, args.V) for path in args.adam], args.adam, panels, args.V)
    if args.plot:
        figure_format(args.plot)
    records = _sweeps(args, panels, grid, tokens, adam)
    summary = sys.stderr if args.json == "-" else sys.stdout
    for record in records:
        _print_summary(record, summary, token_statistics_line)
    _write(records, args.json, args.plot, summary)
    return 0


def _sweeps(args, panels: list[tuple[str, int]], grid, tokens: str, adam: dict) -> list:
    """One :func:`~emergence.api.rho_sweep` record per panel ``(attention, L)``, each with the command's provenance."""
    from emergence.api import rho_sweep
    from emergence.base.io import provenance
    from emergence.base.progress import heartbeat

    config = provenance({k: (_path_text(v) if k in ("adam", "json", "plot") else v) for k, v in vars(args).items()
                         if k != "handler"}, seed=None)
    records = []
    for attention, L in panels:
        with heartbeat(f"{attention} copy transition at L = {L}, {len(args.rho)} values of rho on {len(grid)} points"):
            records.append(rho_sweep(L, args.V, args.rho, grid, tokens, adam[attention, L], attention))
        records[-1].provenance = config
    return records


def _write(records: list, json_path, plot_path, summary) -> None:
    """The record (a list of them for several panels) as JSON to ``json_path`` (``-``: stdout) and the figure."""
    from emergence.base.io import to_json_text, write_json_atomic
    from emergence.report.figures import rho_sweep_figure, save_figure

    single = len(records) == 1
    data = records[0].to_dict() if single else [record.to_dict() for record in records]
    if json_path == "-":
        print(to_json_text(data), end="")
    elif json_path:
        print(f"wrote {write_json_atomic(json_path, data)}")
    if plot_path:
        print(f"wrote {save_figure(rho_sweep_figure(records[0] if single else records), plot_path)}", file=summary)


def _path_text(value):
    """A path argument as JSON text: a list of paths as a list of strings, None as None."""
    if value is None:
        return None
    return [str(path) for path in value] if isinstance(value, (list, tuple)) else str(value)


def _read_record(path, V: int) -> dict:
    """A ``validate copy-head`` JSON record at ``V`` that the validation's verdict can judge (one-line error otherwise)."""
    import json

    from emergence.base.errors import InvalidArgumentError
    from emergence.validation.copy_task.analysis import record_agreement

    try:
        record = json.loads(open(path, encoding="utf-8").read())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidArgumentError("adam", f"{path}: not a readable JSON record ({type(error).__name__})") from None
    if not isinstance(record, dict) or "measured" not in record or record.get("V") != V:
        raise InvalidArgumentError("adam", f"{path}: not a validate copy-head record at V = {V}")
    record_agreement(record, f"{path}: ")  # refused here, before any panel's work, when it holds nothing to judge
    return record


def _panel_records(records: list[dict], paths: list, panels: list[tuple[str, int]], V: int) -> dict:
    """The records of each panel ``(attention, L)``; a one-line error for a record that belongs to none."""
    from emergence.base.errors import InvalidArgumentError

    by_panel = {panel: [] for panel in panels}
    for path, record in zip(paths, records):
        panel = (record.get("attention", "softmax"), record.get("L"))
        if panel not in by_panel:
            sizes = ", ".join(f"{attention} at L = {L}" for attention, L in panels)
            raise InvalidArgumentError("adam", f"{path}: a record of {panel[0]} attention at L = {panel[1]}, V = {V}; "
                                               f"this sweep has {sizes}")
        by_panel[panel].append(record)
    return by_panel


def _print_summary(record, out, statistics_line) -> None:
    print(f"copy transition against rho ({record.attention} attention, L={record.L}, V={record.V}, reconstruction: model T)",
          file=out)
    for entry in record.theory:
        print(f"  rho={entry['rho']:<5g} {_transition(entry)}", file=out)
    if record.corpus:
        print(f"  {statistics_line(record.corpus['token_statistics'])}", file=out)
        print(f"  corpus at rho_eff={record.corpus['rho_eff']:.4f}: {_transition(record.corpus)}", file=out)
    for point in record.adam:
        name = {"P_star": "P*"}.get(point["kind"], point["kind"])
        verdict = "passes" if point["passes"] else "fails"
        print(f"  Adam {point['tokens']}: {name} measured bracket {point['bracket']}, predicted {point['predicted']} "
              f"({point['status']}; verdict {verdict})", file=out)


def _transition(entry: dict) -> str:
    if entry.get("P1") is not None or entry.get("crossover") is not None:
        return f"P1={_number(entry.get('P1'))}, crossover {_number(entry.get('crossover'))}"
    if entry.get("P_star") is not None:
        window = entry.get("spinodals")
        return f"first order, P*={entry['P_star']:.6g}" + (f", window [{window[0]:.5g}, {window[1]:.5g}]" if window else "")
    if entry.get("onset") is not None:
        return f"continuous, onset {entry['onset']:.6g}"
    return "no transition on the grid"


def _number(value) -> str:
    return "none" if value is None else f"{value:.6g}"
