"""Run the whole engine on its built-in default and write a report a researcher can read.

Derives both theories, draws the copy-head phase diagrams, checks the three scaling claims,
trains copy-task models (Adam, SGLD) against the reconstructed theory, validates the
leading-term weights per layer and lists the associations of the built-in story corpus.
Writes OUT/report.md, OUT/figures/*.png and OUT/results.json (every number shown and every
plotted array).  Finished steps are stored in OUT/steps and reused by a re-run with the
same settings, so an interrupted demo resumes.
"""

from __future__ import annotations

from pathlib import Path

NAME = "demo"
HELP = "run every part of the engine on the built-in default and write report.md + results.json"
DEFAULT_OUT = "emergence-demo"


def add_arguments(parser):
    from emergence.cli.commands._checks import output_folder, seed

    parser.add_argument("--out", type=output_folder, default=Path(DEFAULT_OUT), help=f"output folder (default {DEFAULT_OUT}/)")
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute on two CPU cores)")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="UTF-8 text file replacing the built-in story corpus (leading terms, associations)")
    parser.add_argument("--force", action="store_true",
                        help="replace a report of the other kind (quick vs full) in --out")
    parser.add_argument("--seed", type=seed, default=0, help="seed of data, initialisation and the story corpus (default 0)")


def check_report_kind(out: Path, quick: bool, force: bool) -> None:
    """Refuse to overwrite a quick demo's report with a full one (or the reverse) unless ``force``."""
    from emergence.base.io import CorruptFileError, read_json
    from emergence.base.errors import EmergenceError

    results = Path(out) / "results.json"
    if force or not results.exists():
        return
    try:
        stored = read_json(results).get("provenance", {}).get("config", {}).get("quick")
    except (CorruptFileError, AttributeError):
        stored = None
    if stored is not None and bool(stored) != quick:
        kinds = {True: "quick (--quick)", False: "full"}
        raise EmergenceError(f"{out} holds a {kinds[bool(stored)]} demo report; this run would replace it with a "
                             f"{kinds[quick]} one: add --force, or choose another --out")


def run(args) -> int:
    import time

    import torch

    from emergence.demo.framework import DemoContext, run_demo
    from emergence.demo.steps import check_corpus, demo_steps
    from emergence.base.progress import progress_over, write

    check_report_kind(args.out, args.quick, args.force)
    if args.corpus is not None:
        check_corpus(args.corpus)
    started = time.perf_counter()
    # The demo's models are tiny: one torch thread per process is as fast on an idle machine and avoids
    # OpenMP oversubscription on a busy one (measured: the quick copy-task step 9 s vs 220 s at load 4 on 2 cores).
    torch.set_num_threads(1)
    context = DemoContext(args.out, args.quick, args.seed, args.corpus)

    def progress(steps, seconds):
        return progress_over(steps, "demo", unit="step", seconds=seconds, interval=0.0)  # a line after every step

    report, results = run_demo(demo_steps(), context, progress=progress, log=write)
    print(f"wrote {report} and {results} ({time.perf_counter() - started:.0f} s)")
    return 0
