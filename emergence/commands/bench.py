"""Run the benchmark suite: the engine against the straightforward alternative, side by side.

Prints a table of ratios (median and spread over repeats) and writes the records as JSON.
Not part of the tests; timings are machine-dependent, ratios less so.
"""

from __future__ import annotations

import sys

NAME = "bench"
HELP = "benchmark the engine against the straightforward alternatives (ratios with spread)"


def add_arguments(parser):
    from emergence.commands._checks import argument_type, executor_spec, integer, output_file

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
    import importlib

    _import_benchmarks()
    from emergence.benchmarks import BENCHMARK_MODULES
    from emergence.benchmarks.hardware_limits import measure_hardware_limits, with_fraction_of_limit
    from emergence.benchmarks.harness import format_table
    from emergence.base.io import provenance, to_json_text, write_json_atomic

    chosen = [dotted for dotted in BENCHMARK_MODULES if not args.only or args.only in dotted]
    if not chosen:
        from emergence.base.errors import EmergenceError

        raise EmergenceError(f"--only {args.only!r} matches no benchmark; choose a part of "
                             + ", ".join(dotted.rsplit(".", 1)[-1] for dotted in BENCHMARK_MODULES))
    if args.executor is None:
        print("measuring the hardware limits (matmul FLOP/s, copy GB/s) ...", file=sys.stderr)
        limits = measure_hardware_limits(quick=args.quick)
        records = []
        for dotted in chosen:
            print(f"running {dotted} ...", file=sys.stderr)
            records.extend(with_fraction_of_limit(r, limits) for r in importlib.import_module(dotted).run(quick=args.quick))
    else:
        from emergence.base.executors import sweep_executor

        executor = sweep_executor(args.executor, args.workers)
        points = [{"module": dotted, "quick": args.quick} for dotted in chosen]
        finished = dict(executor.map_unordered(benchmark_point, points))
        limits = {chosen[i]: finished[i]["hardware_limits"] for i in sorted(finished)}
        records = [record for i in sorted(finished) for record in finished[i]["records"]]
    print(format_table(records), file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json:
        document = {"hardware_limits": limits, "records": records, "provenance": provenance({"quick": args.quick, "only": args.only}, seed=None)}
        if args.json == "-":
            sys.stdout.write(to_json_text(document))
        else:
            write_json_atomic(args.json, document)
    return 0


def benchmark_point(config: dict) -> dict:
    """One benchmark module on the machine that runs this point: ``{"hardware_limits", "records"}``
    (records with their fraction of that machine's limits)."""
    import importlib

    _import_benchmarks()
    from emergence.benchmarks.hardware_limits import measure_hardware_limits, with_fraction_of_limit

    limits = measure_hardware_limits(quick=config["quick"])
    records = importlib.import_module(config["module"]).run(quick=config["quick"])
    return {"hardware_limits": limits, "records": [with_fraction_of_limit(r, limits) for r in records]}
