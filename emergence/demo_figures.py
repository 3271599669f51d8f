"""The demo's figures, drawn only from the JSON-ready records stored in ``results.json``.

Every figure of the report is a *plot record* ``{"file", "kind", "data"}`` inside its
section's ``data["plots"]``: ``data`` is a result record's ``to_dict()`` (or a list of them)
and ``kind`` names its drawing function in :data:`emergence.figures.FIGURE_KINDS`, the same
functions the command line's ``--plot`` and ``record.plot()`` use.  :func:`draw_plots`
draws the records of one section (the demo calls it right after a step has computed its
data) and :func:`regenerate_figures` draws every record of a finished ``results.json`` again,
so the stored numbers are complete by construction.

>>> from emergence.figures import FIGURE_KINDS
>>> sorted(FIGURE_KINDS)
['copy_task', 'leading_cosines', 'phase_diagram', 'scaling_ratios']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def plot_record(file: str, kind: str, data) -> dict[str, Any]:
    """A plot record of a result record (or a list of them) as it will read back from ``results.json``."""
    from emergence.figures import FIGURE_KINDS

    if kind not in FIGURE_KINDS:
        raise ValueError(f"unknown figure kind {kind!r}")
    stored = [item.to_dict() for item in data] if isinstance(data, list) else data.to_dict()
    return {"file": file, "kind": kind, "data": stored}


def draw_plots(plots: list[dict], out: Path) -> list[Path]:
    """Draw every plot record under ``out``; return the written paths."""
    from emergence.figures import draw_stored

    return [draw_stored(plot["kind"], plot["data"], Path(out) / plot["file"]) for plot in plots]


def regenerate_figures(results: str | Path, out: str | Path | None = None) -> list[Path]:
    """Redraw every figure of a demo's ``results.json`` (into ``out``, default: beside the file)."""
    results = Path(results)
    document = json.loads(results.read_text(encoding="utf-8"))
    out = Path(out) if out is not None else results.parent
    written = []
    for section in document["sections"].values():
        written += draw_plots(section["data"].get("plots", []), out)
    return written
