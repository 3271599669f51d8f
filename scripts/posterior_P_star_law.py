"""The posterior theory's P*(L) beside the saddle's: the table of docs/posterior_free_energy.md ("The posterior theory's P*(L)").

For each L: the posterior theory's P* (`posterior_P_star`, the default block trial or --trial gauge, row averages by quadrature, the
fixed scan of :func:`scan_range`), the saddle's P* (`predicted_saddle`, the MAP with the bulk dropped), their
ratio, each over L ln^2 L, and the seconds each took.  The summary fits the ratio against 1/ln^2 L and
1/ln L (least squares, ratio = r_inf + c / ln^k L, with the residuals' spread).  Writes one JSON file (atomically) and
prints it.  Measures and decides nothing.

    python scripts/posterior_P_star_law.py --sizes 8,12,16,24,32,64,128,256 --V 4 --out posterior_P_star_law.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time

import numpy as np

from emergence.numerics.copy_head.posterior import DEFAULT_TRIAL
from emergence.numerics.copy_head.reduced_action import default_convention
from emergence.validation.copy_task.posterior_free_energy import posterior_P_star
from emergence.validation.copy_task.predictions import predicted_saddle


def scan_range(L: int) -> tuple[float, float, int]:
    """``(low, high, points)``: the default scan, [20, 20000] in 16 points, up to L = 16; above, both ends scaled
    (low by L/16, high by (L/16)^2: P* grows like L ln^2 L) with the default's spacing in ln P."""
    if L <= 16:
        return 20.0, 20_000.0, 16
    low, high = 20.0 * L / 16, 20_000.0 * (L / 16) ** 2
    return low, high, 1 + int(np.ceil(np.log(high / low) / np.log(1000.0) * 15))


def row(L: int, V: int, convention, trial: str = DEFAULT_TRIAL) -> dict:
    """One L: both P* (the posterior theory's with ``trial``), their ratio, each over L ln^2 L, and the seconds taken."""
    low, high, points = scan_range(L)
    start = time.perf_counter()
    posterior = posterior_P_star(L, V, convention, low=low, high=high, points=points, trial=trial)
    seconds = time.perf_counter() - start
    saddle = predicted_saddle("softmax", L, V, convention, 10.0, 10 * high)["P_star"]
    law = L * np.log(L) ** 2
    return {"L": L, "V": V, "posterior_P_star": posterior, "saddle_P_star": saddle,
            "ratio": posterior / saddle if posterior and saddle else None,
            "posterior_over_L_ln2_L": posterior / law if posterior else None,
            "saddle_over_L_ln2_L": saddle / law if saddle else None,
            "posterior_seconds": seconds, "scan": [low, high, points], "load_average": os.getloadavg()[0]}


def ratio_fit(rows: list[dict], power: int = 2) -> dict | None:
    """Least squares ratio = r_inf + c / ln^power L over the rows with a ratio; the residuals' RMS and maximum."""
    usable = [r for r in rows if r["ratio"] is not None]
    if len(usable) < 3:
        return None
    x = np.array([1 / np.log(r["L"]) ** power for r in usable])
    y = np.array([r["ratio"] for r in usable])
    c, r_inf = np.polyfit(x, y, 1)
    residual = y - (r_inf + c * x)
    return {"form": f"r_inf + c / ln^{power} L", "r_inf": float(r_inf), "c": float(c),
            "residual_rms": float(np.sqrt(np.mean(residual**2))), "residual_max": float(np.abs(residual).max()),
            "sizes": [r["L"] for r in usable]}


def write_atomically(path: str, record: dict) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, suffix=".json.tmp")
    try:
        with os.fdopen(handle, "w") as stream:
            json.dump(record, stream, indent=1)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="8,12,16,24,32,64,128,256")
    parser.add_argument("--V", type=int, default=4)
    parser.add_argument("--out", required=True)
    parser.add_argument("--trial", default=DEFAULT_TRIAL, help="the posterior theory's trial: block or gauge (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        sizes = [int(L) for L in args.sizes.split(",")]
    except ValueError:
        print(f"--sizes: comma-separated integers, got {args.sizes!r}", file=sys.stderr)
        return 2
    if any(L < 3 for L in sizes) or args.V < 2 or args.trial not in ("gauge", "block"):
        print("--sizes must be >= 3, --V >= 2 and --trial gauge or block", file=sys.stderr)
        return 2
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        print(f"--out: no folder for {args.out}", file=sys.stderr)
        return 2
    convention = default_convention()
    rows = []
    for L in sizes:
        rows.append(row(L, args.V, convention, args.trial))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    import emergence

    record = {"rows": rows, "ratio_fits": [ratio_fit(rows, 2), ratio_fit(rows, 1)], "V": args.V, "trial": args.trial, "seed": None,
              "note": "quadrature row averages: deterministic, no seed",
              "provenance": {"command": " ".join(sys.argv), "python": platform.python_version(),
                             "numpy": np.__version__, "machine": platform.machine(), "cpus": os.cpu_count(),
                             "emergence": getattr(emergence, "__version__", None),
                             "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}}
    write_atomically(args.out, record)
    print(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
