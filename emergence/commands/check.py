"""Re-derive the project's headline numbers and compare them with the stored baseline.

Exit status 0 when every number is within its tolerance, 1 when any drifted or is new
to the baseline.  The baseline is rewritten from a source checkout, never by the installed
command: ``python tools/regenerate.py golden``.
"""

from __future__ import annotations

NAME = "check"
HELP = "re-derive the headline numbers and list any drift from the golden baseline"


def add_arguments(parser):
    """``check`` takes no options."""


def run(args) -> int:
    from emergence.validation.golden import compare_with_baseline, headline_numbers

    comparisons = compare_with_baseline(headline_numbers())
    width = max([len(c.name) for c in comparisons] + [4])
    print(f"{'name':<{width}}  {'baseline':>14}  {'current':>14}  {'drift':>9}  {'tol':>7}  status")
    for c in comparisons:
        baseline = "new" if c.baseline is None else f"{c.baseline:.8g}"
        status = "ok" if c.ok else ("NEW" if c.baseline is None else "DRIFT")
        print(
            f"{c.name:<{width}}  {baseline:>14}  {c.current:>14.8g}  "
            f"{c.relative_drift:>9.2e}  {c.rel_tol:>7.0e}  {status}"
        )
    failures = [c for c in comparisons if not c.ok]
    print(f"{len(comparisons) - len(failures)} of {len(comparisons)} headline numbers match the baseline")
    return 1 if failures else 0
