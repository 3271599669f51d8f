"""The demo report: Markdown with PNG figures, and a JSON file holding every number shown.

A report is a list of sections.  Each section says, in its own lines, what is derived,
what is reconstructed, what is measured, and how they compare; the text and numbers come
from the layers below, this module only lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emergence.base.io import atomic_path, write_json_atomic


@dataclass
class Section:
    """One report section: a title, its provenance lines, a Markdown body, figures and data."""

    key: str
    title: str
    body: str
    data: dict[str, Any] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)
    derived: str = ""
    reconstructed: str = ""
    measured: str = ""
    comparison: str = ""

    def markdown(self) -> str:
        lines = [f"## {self.title}", ""]
        for label, text in (
            ("Derived", self.derived),
            ("Reconstructed", self.reconstructed),
            ("Measured", self.measured),
            ("Comparison", self.comparison),
        ):
            if text:
                lines.append(f"- **{label}.** {text}")
        if lines[-1] != "":
            lines.append("")
        lines.append(self.body.rstrip())
        lines.append("")
        for figure in self.figures:
            lines += [f"![{Path(figure).stem}]({figure})", ""]
        return "\n".join(lines)

    def as_record(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "body": self.body,
            "data": self.data,
            "figures": self.figures,
            "derived": self.derived,
            "reconstructed": self.reconstructed,
            "measured": self.measured,
            "comparison": self.comparison,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "Section":
        return cls(**record)


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """A GitHub-flavoured Markdown table; floats in 4 significant digits."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.4g}"
        return "—" if value is None else str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_report(out: Path, title: str, preamble: str, sections: list[Section], provenance: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``out/report.md`` and ``out/results.json`` atomically; return both paths."""
    text = "\n".join([f"# {title}", "", preamble.rstrip(), ""] + [s.markdown() for s in sections])
    report_path = out / "report.md"
    with atomic_path(report_path) as temporary:
        temporary.write_text(text, encoding="utf-8")
    results = {"provenance": provenance, "sections": {s.key: s.as_record() for s in sections}}
    return report_path, write_json_atomic(out / "results.json", results)
