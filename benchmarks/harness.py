r"""Timing two implementations of the same computation in one run, and reporting the ratio.

Ratios, not absolute times, are what transfer between machines: both sides run in the same
process, interleaved, ``repeats`` times; the record gives the median ratio and its spread
(min, max over repeats).  No test asserts on these numbers.

>>> record = compare("sum", "n=1000", lambda: sum(range(1000)), lambda: sum(list(range(1000))), repeats=3)
>>> sorted(record)
['alternative_seconds', 'engine_seconds', 'name', 'ratio_max', 'ratio_median', 'ratio_min', 'size']
>>> record["ratio_min"] <= record["ratio_median"] <= record["ratio_max"]
True
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
from typing import Any, Callable


def best_time(function: Callable[[], Any]) -> float:
    """Wall-clock seconds of one call of ``function``."""
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def compare(
    name: str,
    size: str,
    engine: Callable[[], Any],
    alternative: Callable[[], Any],
    repeats: int = 5,
    **extra: Any,
) -> dict[str, Any]:
    r"""Time ``engine`` and ``alternative`` alternately; ratio = alternative / engine (> 1: engine faster).

    The engine is called once before the timing: its one-time costs (Numba's
    compilation or cache load, first use of generated kernels) are not counted.  The alternative
    is not warmed up (it compiles nothing, and a call of the literal baselines costs seconds), which
    leaves it any first-call cost of its own.

    Returns ``{name, size, ratio_median, ratio_min, ratio_max, engine_seconds,
    alternative_seconds}`` (seconds are medians) plus any ``extra`` fields.
    """
    engine()  # warm-up, not timed
    engine_times, alternative_times = [], []
    for _ in range(repeats):
        engine_times.append(best_time(engine))
        alternative_times.append(best_time(alternative))
    ratios = [a / max(e, 1e-12) for e, a in zip(engine_times, alternative_times)]
    return {
        "name": name,
        "size": size,
        "ratio_median": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "engine_seconds": statistics.median(engine_times),
        "alternative_seconds": statistics.median(alternative_times),
        **extra,
    }


def engine_only(name: str, size: str, engine: Callable[[], Any], repeats: int = 5, **extra: Any) -> dict[str, Any]:
    """A row without an alternative (a size only the engine reaches): :func:`compare`'s fields, the ratios and
    ``alternative_seconds`` ``None``; ``engine_seconds`` the median of ``repeats`` calls after one warm-up."""
    engine()
    return {"name": name, "size": size, "ratio_median": None, "ratio_min": None, "ratio_max": None,
            "engine_seconds": statistics.median(best_time(engine) for _ in range(repeats)),
            "alternative_seconds": None, **extra}


def peak_memory_bytes(function: Callable[[], Any]) -> int:
    """Peak Python-heap allocation (tracemalloc, which NumPy reports to) during one call."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def side_text(device: str | None, cores: int | None) -> str:
    """``2 cores``, ``1 core``, ``cuda``: where one side of a row ran (``-`` where it names none)."""
    if device is None:
        return "-"
    if device == "cpu" and cores is not None:
        return f"{cores} core" + ("s" if cores != 1 else "")
    return device


def format_table(records: list[dict[str, Any]]) -> str:
    """A plain-text table: name, size, ratio median [min, max], engine and alternative seconds, where each
    side ran (engine vs alternative), and the engine's fraction of the limit of its device where the row
    states its work."""
    header = (
        f"{'benchmark':<34} {'size':<22} {'ratio (median [min, max])':>28} {'engine s':>10} {'alt s':>10}"
        f" {'engine vs alt on':>18} {'of limit':>9} limit"
    )
    lines = [header, "-" * len(header)]
    for r in records:
        spread = "-" if r["ratio_median"] is None else f"{r['ratio_median']:.1f}x [{r['ratio_min']:.1f}, {r['ratio_max']:.1f}]"
        alternative = "-" if r["alternative_seconds"] is None else f"{r['alternative_seconds']:.4g}"
        fraction = f"{100 * r['fraction_of_limit']:.2g} %" if "fraction_of_limit" in r else "-"
        where = (f"{side_text(r.get('engine_device'), r.get('engine_cores'))} vs "
                 f"{side_text(r.get('alternative_device'), r.get('alternative_cores'))}")
        lines.append(
            f"{r['name']:<34} {r['size']:<22} {spread:>28} {r['engine_seconds']:>10.4g} {alternative:>10}"
            f" {where:>18} {fraction:>9} {r.get('limit', '')}"
        )
    return "\n".join(lines)
