"""The sampled posterior's P*(L) study assembled from saved validation records, without sampling again.

Each RECORD is the JSON of `emergence validate posterior --attention softmax --method umbrella --json PATH`
(``measured``, ``saddle``, ``predicted``, ``provenance``), optionally followed by ``@COMMIT``, the commit it was
run at where the record does not hold one.  Records of one L are merged point by point in the order given (a later
record's point replaces a missing or unconverged one, never a converged one) and the rows are built as the study
builds them (:func:`~emergence.validation.copy_task.posterior_study.rows_from_records`); each row keeps its
records' command, date, configuration, seed, versions and commit.  Writes ``{"what", "source", "rows",
"summary"}`` as the ``study`` key of ``--into`` (its other keys are kept; written atomically) or to ``--out``.
Samples nothing new.  ``--trial TRIAL``: each size's theory P* is computed again with that trial
(:func:`~emergence.validation.copy_task.posterior_free_energy.posterior_P_star` at the records' L, V and
convention: quadrature row averages, the default scan; about a minute per size) in place of the records' own (the
records' stays beside it as ``theory_recorded``).

    python scripts/posterior_study_records.py L8.json@b0d6b1e L12.json@8fdfe3c L16.json@cc32530 L16_rerun.json \\
        --trial block --into docs/posterior_P_star_law.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from emergence.base.io import write_json_atomic
from emergence.validation.copy_task.posterior_free_energy import VERDICT_TRIALS
from emergence.validation.copy_task.posterior_study import rows_from_records

RECORD_KEYS = ("measured", "saddle", "predicted", "provenance")
"""What each record must hold."""


def load_record(argument: str) -> dict:
    """``PATH`` or ``PATH@COMMIT``: the record, its provenance's ``commit`` set from ``@COMMIT`` where it has none
    (``ValueError`` with one line for an unreadable file, text that is not JSON or a record without its keys)."""
    path, _, commit = argument.partition("@")
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: cannot read a JSON record ({type(error).__name__})") from None
    missing = [key for key in RECORD_KEYS if not isinstance(record, dict) or key not in record]
    if missing or "L" not in record["provenance"].get("config", {}):
        raise ValueError(f"{path}: not a posterior validation record (needs {', '.join(RECORD_KEYS)} and the "
                         f"provenance's config L)")
    if commit and not record["provenance"].get("commit"):
        record["provenance"]["commit"] = commit
    return record


def theory_again(records: list[dict], trial: str) -> dict[int, dict]:
    """``{L: {"P_star", "trial", "source"}}``: the theory's P* with ``trial`` at each size's L, V and convention
    (those of its first record)."""
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.posterior_free_energy import posterior_P_star

    theory: dict[int, dict] = {}
    for record in records:
        config = record["provenance"]["config"]
        L = int(config["L"])
        if L not in theory:
            convention = CopyTaskConvention(**config["convention"])
            theory[L] = {"P_star": posterior_P_star(L, int(config["V"]), convention, trial=trial), "trial": trial,
                         "source": f"posterior_P_star(L={L}, V={config['V']}, the records' convention, trial={trial!r}): "
                                   f"quadrature row averages, scan [20, 20000] in 16 points; computed again, not the "
                                   f"records' own"}
    return theory


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="+", metavar="RECORD[@COMMIT]")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--into", help="a JSON file whose study key is (re)written")
    where.add_argument("--out", help="a new JSON file holding the study alone")
    parser.add_argument("--what", default="sampled posterior P*(L): umbrella windows with exchange, MBAR; the converged "
                                          "grid bracket of the sign change of Delta F = F_copy - F_uniform and the "
                                          "reading inside it (the root of Delta F linear in ln P)")
    parser.add_argument("--trial", choices=tuple(VERDICT_TRIALS), default=None,
                        help="compute each size's theory P* again with this trial (default: keep the records' own)")
    args = parser.parse_args(argv)
    try:
        records = [load_record(argument) for argument in args.records]
        target = json.loads(Path(args.into).read_text(encoding="utf-8")) if args.into else {}
        if args.trial and any("V" not in r["provenance"]["config"] or "convention" not in r["provenance"]["config"]
                              for r in records):
            raise ValueError("--trial: every record's provenance config needs V and convention")
        study = rows_from_records(records, theory_again(records, args.trial) if args.trial else None)
    except (OSError, json.JSONDecodeError, ValueError) as error:
        print(f"posterior_study_records: {str(error).splitlines()[0]}", file=sys.stderr)
        return 2
    source = {"command": "python scripts/posterior_study_records.py " + " ".join(Path(a).name for a in args.records)
              + (f" --trial {args.trial}" if args.trial else ""),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "records": [argument.partition("@")[0] for argument in args.records],
              "note": "assembled from saved records without sampling again; each row's sources give the commands "
                      "that measured it"}
    document = {"what": args.what, "source": source, **study}
    if args.into:
        write_json_atomic(args.into, {**target, "study": document})
    else:
        write_json_atomic(args.out, document)
    print(json.dumps(study["summary"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
