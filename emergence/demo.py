"""``emergence demo``: run every part of the engine on its built-in default and write the report.

The demo is a list of :class:`DemoStep` s.  Each step's finished :class:`~emergence.report.Section`
is stored atomically under ``OUT/steps/<key>.json`` together with the configuration that
produced it; a re-run with the same configuration reuses it, so an interrupted demo resumes
where it stopped.  Steps hold no science: they call the theory, numerics and validation
layers and lay out what those return.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from emergence.report import Section, write_report
from numerics.io import ensure_writable_directory, provenance, read_json, write_json_atomic


@dataclass(frozen=True)
class DemoContext:
    """What every step sees: the output folder, the quick flag, the seed and the corpus."""

    out: Path
    quick: bool
    seed: int
    corpus: Path | None

    @property
    def figures(self) -> Path:
        return ensure_writable_directory(self.out / "figures")

    def config(self) -> dict:
        return {"quick": self.quick, "seed": self.seed, "corpus": None if self.corpus is None else str(self.corpus)}


@dataclass(frozen=True)
class DemoStep:
    key: str
    title: str
    compute: Callable[[DemoContext], Section]


def run_step(step: DemoStep, context: DemoContext) -> tuple[Section, bool]:
    """The step's section, reused from ``OUT/steps`` when its configuration matches; (section, reused)."""
    stored = context.out / "steps" / f"{step.key}.json"
    if stored.exists():
        record = read_json(stored)
        figures_present = all((context.out / f).exists() for f in record["section"]["figures"])
        if record.get("config") == context.config() and figures_present:
            return Section.from_record(record["section"]), True
    section = step.compute(context)
    write_json_atomic(stored, {"config": context.config(), "section": section.as_record()})
    return section, False


PREAMBLE = """\
This report was written by `emergence demo`. Every number in it is also in `results.json`.
Each section separates what the engine **derives** (SymPy from the model definition, then
generated kernels), what is **reconstructed** (the copy-head model: only the abstract of
arXiv 2606.12058 is available, so the model and its reduction are our own, inside the
paper's framework), what is **measured** (trained torch models, corpus statistics), and how
they compare."""


def run_demo(steps: list[DemoStep], context: DemoContext, progress: Callable | None = None) -> tuple[Path, Path]:
    """Run (or reuse) every step, then write ``report.md`` and ``results.json``."""
    ensure_writable_directory(context.out)
    sections = []
    iterator = progress(steps) if progress else steps
    for step in iterator:
        if hasattr(iterator, "set_description"):
            iterator.set_description(step.title)
        section, _ = run_step(step, context)
        sections.append(section)
    record = provenance(context.config(), context.seed)
    return write_report(context.out, "emergence: demo report", PREAMBLE, sections, record)
