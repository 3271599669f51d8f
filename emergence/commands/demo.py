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
    parser.add_argument("--out", type=Path, default=Path(DEFAULT_OUT), help=f"output folder (default {DEFAULT_OUT}/)")
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute on two CPU cores)")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="UTF-8 text file replacing the built-in story corpus (leading terms, associations)")
    parser.add_argument("--seed", type=int, default=0, help="seed of data, initialisation and the story corpus (default 0)")


def run(args) -> int:
    import sys
    import time

    import torch
    from tqdm import tqdm

    from emergence.demo import DemoContext, run_demo
    from emergence.demo_steps import check_corpus, demo_steps

    if args.corpus is not None:
        check_corpus(args.corpus)
    started = time.perf_counter()
    # The demo's models are tiny: one torch thread per process is as fast on an idle machine and avoids
    # OpenMP oversubscription on a busy one (measured: the quick copy-task step 9 s vs 220 s at load 4 on 2 cores).
    torch.set_num_threads(1)
    context = DemoContext(args.out, args.quick, args.seed, args.corpus)

    def progress(steps):
        return tqdm(steps, desc="demo", unit="step", disable=None, file=sys.stderr)

    report, results = run_demo(demo_steps(), context, progress=progress, log=print)
    print(f"wrote {report} and {results} ({time.perf_counter() - started:.0f} s)")
    return 0
