"""The bench run: which benchmark modules, the limits of the devices they run on, and their rows.

:func:`run_suite` runs the chosen modules in this process (the devices' limits measured once, here) or as
points on an executor (:func:`benchmark_point`: each point measures the limits of the machine it runs on);
either way every row carries its fraction of the limits of the device its engine ran on
(:func:`emergence.benchmarks.hardware_limits.with_fraction_of_limit`).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from emergence.base.errors import EmergenceError
from emergence import benchmarks
from emergence.benchmarks.hardware_limits import measure_hardware_limits, with_fraction_of_limit


def chosen_modules(only: str | None) -> list[str]:
    """The benchmark modules whose dotted name contains ``only`` (all without it); an error if none does."""
    modules = benchmarks.BENCHMARK_MODULES
    chosen = [dotted for dotted in modules if not only or only in dotted]
    if not chosen:
        raise EmergenceError(f"--only {only!r} matches no benchmark; choose a part of "
                             + ", ".join(dotted.rsplit(".", 1)[-1] for dotted in modules))
    return chosen


def benchmark_point(config: dict) -> dict:
    """One benchmark module on the machine that runs this point: ``{"hardware_limits", "records"}``
    (records with their fraction of the limits of the device they ran on)."""
    limits = measure_hardware_limits(quick=config["quick"])
    return {"hardware_limits": limits, "records": _module_records(config["module"], config["quick"], limits)}


def _module_records(dotted: str, quick: bool, limits: dict[str, Any]) -> list[dict]:
    """The rows of one benchmark module, each with its fraction of ``limits``."""
    return [with_fraction_of_limit(r, limits) for r in importlib.import_module(dotted).run(quick=quick)]


def run_suite(chosen: list[str], quick: bool, executor: str | None = None,
              workers: int = 1) -> tuple[dict[str, Any], list[dict]]:
    """``(hardware_limits, records)``: in this process the limits are ``{device: limits}``; on an executor,
    ``{module: {device: limits}}`` (each point's own machine)."""
    if executor is None:
        print("measuring the limits of each device (matmul FLOP/s, copy GB/s) ...", file=sys.stderr)
        limits = measure_hardware_limits(quick=quick)
        records = []
        for dotted in chosen:
            print(f"running {dotted} ...", file=sys.stderr)
            records.extend(_module_records(dotted, quick, limits))
        return limits, records
    from emergence.base.executors import sweep_executor

    points = [{"module": dotted, "quick": quick} for dotted in chosen]
    finished = dict(sweep_executor(executor, workers).map_unordered(benchmark_point, points))
    return ({chosen[i]: finished[i]["hardware_limits"] for i in sorted(finished)},
            [record for i in sorted(finished) for record in finished[i]["records"]])
