"""Re-derive the project's headline numbers and compare them with the stored baseline.

Exit status 0 when every number is within its tolerance and every baseline entry is still
computed; 1 when any number drifted, is new to the baseline, or a baseline entry is stale (no
longer computed, so never compared).  The baseline is rewritten from a source checkout, never
by the installed command: ``python tools/regenerate.py golden``, which lists what it adds,
changes and drops.
"""

from __future__ import annotations

NAME = "check"
HELP = "re-derive the headline numbers and list any drift from the golden baseline"


def add_arguments(parser):
    from emergence.cli.commands._checks import existing_file

    parser.add_argument("--baseline", default=None, metavar="PATH", type=existing_file,
                        help="baseline JSON file (default: the one installed with the engine)")


def run(args) -> int:
    from emergence.validation.golden import BASELINE_PATH, compare_with_baseline, headline_numbers, stale_entries

    baseline_path = args.baseline or BASELINE_PATH
    numbers = headline_numbers()
    stale = stale_entries(numbers, baseline_path)
    comparisons = compare_with_baseline(numbers, baseline_path)
    width = max([len(c.name) for c in comparisons] + [len(name) for name in stale] + [4])
    print(f"{'name':<{width}}  {'baseline':>14}  {'current':>14}  {'drift':>9}  {'tol':>7}  status")
    for c in comparisons:
        print(_comparison_line(c, width))
    for name in stale:
        print(f"{name:<{width}}  {'stored':>14}  {'—':>14}  {'—':>9}  {'—':>7}  STALE (no longer computed)")
    failures = [c for c in comparisons if not c.ok]
    print(_summary(len(comparisons) - len(failures), len(comparisons), len(stale)))
    return 1 if failures or stale else 0


def _summary(matching: int, compared: int, stale: int) -> str:
    return (f"{matching} of {compared + stale} baseline entries match"
            + (f"; {stale} stale (in the baseline but no longer computed: run `emergence check --update` "
               "to drop them, or restore their source)" if stale else ""))


def _comparison_line(c, width: int) -> str:
    """One row of the table: a headline number against its baseline (``new`` when the baseline lacks it)."""
    baseline = "new" if c.baseline is None else f"{c.baseline:.8g}"
    status = "ok" if c.ok else ("NEW" if c.baseline is None else "DRIFT")
    return (f"{c.name:<{width}}  {baseline:>14}  {c.current:>14.8g}  "
            f"{c.relative_drift:>9.2e}  {c.rel_tol:>7.0e}  {status}")
