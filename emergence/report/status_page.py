"""The theory status page, rendered: the rows of :func:`emergence.validation.theory_status.status_numbers`
(claim, what the engine derives, measured, holds?, criterion) as the Markdown of ``docs/theory_status.md``.
The verdicts are decided in validation; this module only lays them out.
"""

from __future__ import annotations


def render_status_page(numbers: dict) -> str:
    """The Markdown page of :func:`~emergence.validation.theory_status.status_numbers`."""
    source = numbers["source"]
    lines = [
        "# Theory status", "",
        "Each claim of the two papers, what the engine derives, what was measured and whether it holds, filled "
        "from a demo run (`python -m emergence demo` then `python tools/regenerate.py status "
        "emergence-demo/results.json`; this page is generated, do not edit it).", "",
        "The copy-head model is a **reconstruction** (only the abstract of arXiv 2606.12058 is available): its "
        "verdicts say that the engine's own model reproduces the paper's claims, not that the paper's equations "
        "were checked. Leading terms: arXiv 2601.19208, Definition 3.1 and Theorem 4.1.", "",
        f"Run: {'--quick' if source.get('quick') else 'full demo'}, seed {source.get('seed')}"
        + (f", {source['created']}" if source.get("created") else "") + ".", "",
        "| paper | claim | engine derives | measured | holds? | criterion |",
        "|---|---|---|---|---|---|",
    ]
    for row in numbers["rows"]:
        cells = [row[k].replace("|", "\\|") for k in ("paper", "claim", "derived", "measured", "holds", "criterion")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
