"""Run the benchmark suite: the engine against the straightforward alternative, side by side.

Prints a table of ratios (median and spread over repeats) and writes the records as JSON.
Not part of the tests; timings are machine-dependent, ratios less so.
"""

from __future__ import annotations

import sys

NAME = "bench"
HELP = "benchmark the engine against the straightforward alternatives (ratios with spread)"


def add_arguments(parser):
    from emergence.cli.commands._checks import argument_type, executor_spec, integer, output_file

    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--json", type=output_file(".json", stdout=True), metavar="PATH|-", help="write the records as JSON ('-' for stdout)")
    parser.add_argument("--only", metavar="NAME", help="run only the benchmark modules whose name contains NAME")
    parser.add_argument("--executor", default=None, type=argument_type(executor_spec),
                        help="run each benchmark module as a point on local worker processes or on Dask "
                        "(dask[:ADDRESS]; each point measures the limits of the machine it runs on); "
                        "default: in this process")
    parser.add_argument("--workers", type=integer(1), default=1,
                        help="points at once (default 1: concurrent points would share the machine's limits)")


def _import_benchmarks():
    """:mod:`emergence.benchmarks` (``benchmarks/``, linked as ``emergence/benchmarks``): importable from a
    source checkout installed in editable mode, not installed by a wheel."""
    import importlib.util

    from emergence.base.errors import EmergenceError

    if importlib.util.find_spec("emergence.benchmarks") is None:
        raise EmergenceError("emergence bench runs from a source checkout (pip install -e .): benchmarks/ is not installed")


def run(args) -> int:
    _import_benchmarks()
    from emergence.base.io import provenance, to_json_text, write_json_atomic
    from emergence.benchmarks.harness import format_table
    from emergence.benchmarks.suite import chosen_modules, run_suite

    limits, records = run_suite(chosen_modules(args.only), args.quick, args.executor, args.workers)
    print(format_table(records), file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json:
        document = {"hardware_limits": limits, "records": records, "provenance": provenance({"quick": args.quick, "only": args.only}, seed=None)}
        if args.json == "-":
            sys.stdout.write(to_json_text(document))
        else:
            write_json_atomic(args.json, document)
    return 0
