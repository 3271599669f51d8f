"""The demo's figures, drawn only from the JSON-ready records stored in ``results.json``.

Every figure of the report is a *plot record* ``{"file", "kind", "data"}`` inside its
section's ``data["plots"]``: ``data`` is a result record's ``to_dict()`` (or a list of them)
and ``kind`` names its record class in :data:`FIGURE_KINDS`; the record's own ``figure`` names the
drawing function in :mod:`emergence.report.figures`, the one the command line's ``--plot`` and ``record.plot()``
use.  Imports point one way (demo figures -> records -> figures): :mod:`emergence.report.figures` draws and
never reads a record class back.  :func:`draw_plots`
draws the records of one section (the demo calls it right after a step has computed its
data) and :func:`regenerate_figures` draws every record of a finished ``results.json`` again,
so the stored numbers are complete by construction.

>>> sorted(FIGURE_KINDS)
['copy_task', 'leading_cosines', 'phase_diagram', 'rho_sweep', 'scaling_ratios']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIGURE_KINDS: dict[str, str] = {
    "phase_diagram": "PhaseDiagram",
    "copy_task": "CopyHeadValidation",
    "leading_cosines": "LeadingTermValidation",
    "scaling_ratios": "ScalingVerdict",
    "rho_sweep": "RhoSweep",
}
"""A stored figure's kind -> its record class in :mod:`emergence.records` (whose ``figure`` draws it)."""


def plot_record(file: str, kind: str, data) -> dict[str, Any]:
    """A plot record of a result record (or a list of them) as it will read back from ``results.json``."""
    if kind not in FIGURE_KINDS:
        raise ValueError(f"unknown figure kind {kind!r}")
    stored = [item.to_dict() for item in data] if isinstance(data, list) else data.to_dict()
    return {"file": file, "kind": kind, "data": stored}


def draw_plots(plots: list[dict], out: Path) -> list[Path]:
    """Draw every plot record under ``out``; return the written paths."""
    return [draw_stored(plot["kind"], plot["data"], Path(out) / plot["file"]) for plot in plots]


def draw_stored(kind: str, data: dict | list, path: str | Path) -> Path:
    """Draw a figure stored as JSON (a record's ``to_dict()``, or a list of them) and write it."""
    from emergence import records
    from emergence.report import figures

    record_class = getattr(records, FIGURE_KINDS[kind])
    record = [record_class.from_dict(item) for item in data] if isinstance(data, list) else record_class.from_dict(data)
    return figures.save_figure(getattr(figures, record_class.figure)(record), path)


def regenerate_figures(results: str | Path, out: str | Path | None = None) -> list[Path]:
    """Redraw every figure of a demo's ``results.json`` (into ``out``, default: beside the file)."""
    results = Path(results)
    document = json.loads(results.read_text(encoding="utf-8"))
    out = Path(out) if out is not None else results.parent
    written = []
    for section in document["sections"].values():
        written += draw_plots(section["data"].get("plots", []), out)
    return written
