"""``emergence demo``: run every part of the engine on its built-in default and write the report.

The demo is a list of :class:`DemoStep` s.  Each step's finished :class:`~emergence.report.writer.Section`
is stored atomically under ``OUT/steps/<key>.json`` together with the configuration that
produced it; a re-run with the same configuration reuses it, so an interrupted demo resumes
where it stopped.  A step's configuration is its own ``settings`` (sizes, grids, steps,
the seed and corpus where they matter) plus a fingerprint of the engine's source code, so
a changed setting or changed code recomputes exactly the steps it affects.  Steps hold no
science: they call the theory, numerics and validation layers and lay out what those return.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from emergence.report.writer import Section, write_report
from emergence.base.io import ensure_writable_directory, provenance, read_stored_result, write_json_atomic

ENGINE_PACKAGES = ("emergence.base", "emergence.theory", "emergence.numerics", "emergence.validation", "emergence")


def code_fingerprint() -> str:
    """SHA-256 (16 hex digits) of every Python source file of the engine (science layers, CLI and
    report), in path order (:func:`emergence.base.sweeps.source_fingerprint`)."""
    from emergence.base.sweeps import source_fingerprint

    return source_fingerprint(ENGINE_PACKAGES)


def file_fingerprint(path: Path) -> str:
    """SHA-256 (16 hex digits) of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


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

    def corpus_identity(self) -> dict:
        """The corpus as a configuration: the built-in generator and seed, or a file and its hash."""
        if self.corpus is None:
            return {"corpus": "synthetic", "seed": self.seed}
        return {"corpus": str(self.corpus), "sha256": file_fingerprint(self.corpus)}

    def config(self) -> dict:
        return {"quick": self.quick, "seed": self.seed, "corpus": None if self.corpus is None else str(self.corpus)}


@dataclass(frozen=True)
class DemoStep:
    """A named step; ``settings(context)`` lists everything its result depends on (default: the whole context)."""

    key: str
    title: str
    compute: Callable[[DemoContext], Section]
    settings: Callable[[DemoContext], dict] | None = None

    def configuration(self, context: DemoContext) -> dict:
        chosen = self.settings(context) if self.settings is not None else context.config()
        return {"settings": chosen, "code": code_fingerprint()}


def stored_section(step: DemoStep, context: DemoContext) -> Section | None:
    """The step's section stored in ``OUT/steps`` when its configuration matches and its figures exist, else ``None``."""
    stored = context.out / "steps" / f"{step.key}.json"
    record = read_stored_result(stored) if stored.exists() else None
    if isinstance(record, dict) and "section" in record:
        figures_present = all((context.out / f).exists() for f in record["section"]["figures"])
        if record.get("config") == as_stored(step.configuration(context)) and figures_present:
            return Section.from_record(record["section"])
    return None


def run_step(step: DemoStep, context: DemoContext, stored: Section | None = None) -> tuple[Section, bool]:
    """The step's section, reused from ``OUT/steps`` when its configuration matches; (section, reused).

    ``stored``: the :func:`stored_section` already read (``None``: read it here)."""
    stored = stored if stored is not None else stored_section(step, context)
    if stored is not None:
        return stored, True
    section = step.compute(context)
    write_json_atomic(context.out / "steps" / f"{step.key}.json",
                      {"config": as_stored(step.configuration(context)), "section": section.as_record()})
    return section, False


STEP_SECONDS = Path(__file__).with_name("step_seconds.json")
"""Each step's wall time per kind (quick, full): the median of the runs it lists, with the date, machine and command."""


def expected_step_seconds(steps: list[DemoStep], quick: bool, compiled: bool | None = None) -> list[float]:
    """Each step's measured seconds at this size (:data:`STEP_SECONDS`), from the runs with the gradient path this
    process trains with (``compiled``: Numba's compiled action of softmax model T, by default where it is
    available); a step measured at neither size: the mean."""
    from emergence.base.io import read_json
    from emergence.validation.copy_task.compiled_marginal_action import compiled_action_available

    reference = read_json(STEP_SECONDS)
    compiled = compiled_action_available() if compiled is None else compiled
    measured = (reference["compiled"] if compiled else reference)["seconds"]["quick" if quick else "full"]
    mean = sum(measured.values()) / len(measured)
    return [float(measured.get(step.key, mean)) for step in steps]


def as_stored(data: dict) -> dict:
    """``data`` as it reads back from JSON (tuples become lists), for comparison with stored files."""
    import json

    from emergence.base.io import to_json_text

    return json.loads(to_json_text(data))


PREAMBLE = """\
This report was written by `emergence demo`. Every number in it is also in `results.json`,
together with the plotted arrays (`emergence.demo.figures.regenerate_figures` redraws every
figure from that file). Each section separates what the engine **derives** (SymPy from the
model definition, then generated kernels), what is **reconstructed** (the copy-head model:
only the abstract of arXiv 2606.12058 is available, so the model and its reduction are our
own, inside the paper's framework), what is **measured** (trained torch models, corpus
statistics), and how they compare."""


def run_demo(steps: list[DemoStep], context: DemoContext, progress: Callable | None = None,
             log: Callable[[str], None] | None = None) -> tuple[Path, Path]:
    """Run (or reuse) every step, then write ``report.md`` and ``results.json``.

    ``progress(steps, seconds)`` wraps the step list (a tqdm-like callable), ``seconds`` each step's expected
    wall time (:func:`expected_step_seconds`; 0 for a step stored in ``OUT/steps``, which is reused); ``log``
    receives, per step, a line with its wall time and whether it was reused, then the section's comparison line.
    """
    ensure_writable_directory(context.out)
    sections, timings = [], {}
    stored = [stored_section(step, context) for step in steps]
    seconds = [0.0 if section is not None else cost
               for section, cost in zip(stored, expected_step_seconds(steps, context.quick))]
    iterator = progress(steps, seconds) if progress else steps
    try:
        for step, section_stored in zip(iterator, stored):
            if hasattr(iterator, "set_description"):
                iterator.set_description(step.title)
            started = time.perf_counter()
            section, reused = run_step(step, context, section_stored)
            seconds = time.perf_counter() - started
            timings[step.key] = {"seconds": seconds, "reused": reused}
            if log is not None:
                log(f"{step.title}: {'reused' if reused else 'done'} in {seconds:.1f} s")
                if section.comparison:
                    log(f"  {section.comparison}")
            sections.append(section)
    finally:
        if hasattr(iterator, "close"):
            iterator.close()
    record = provenance(context.config(), context.seed)
    record["step_timings"] = timings
    return write_report(context.out, "emergence: demo report", PREAMBLE, sections, record)
