"""The committed theory status page is the rendering of its committed numbers."""

import json

from emergence.theory_status import STATUS_JSON, STATUS_PAGE, render_status_page


def test_committed_status_page_matches_a_regeneration():
    numbers = json.loads(STATUS_JSON.read_text(encoding="utf-8"))
    assert STATUS_PAGE.read_text(encoding="utf-8") == render_status_page(numbers)


def test_committed_status_comes_from_a_full_run_with_every_claim():
    numbers = json.loads(STATUS_JSON.read_text(encoding="utf-8"))
    assert numbers["source"]["quick"] is False
    claims = " ".join(row["claim"] for row in numbers["rows"])
    for claim in ("P* ~ V²", "L^{3/2} V^{1/2}", "L ln² L", "no precursor", "Adam", "order parameters",
                  "step coefficients", "cosine", "O(sη)", "causal removal", "neighbours"):
        assert claim in claims
