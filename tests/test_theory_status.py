"""The committed theory status page is the rendering of its committed numbers."""

import json

from generated_files import assert_committed_equal_fresh, regenerate


def test_committed_status_page_matches_a_regeneration():
    assert_committed_equal_fresh(regenerate.status_page_files(), "python tools/regenerate.py status")


def test_committed_status_comes_from_a_full_run_with_every_claim():
    numbers = json.loads(regenerate.STATUS_JSON.read_text(encoding="utf-8"))
    assert numbers["source"]["quick"] is False
    claims = " ".join(row["claim"] for row in numbers["rows"])
    for claim in ("P* ~ V²", "L^{3/2} V^{1/2}", "L ln² L", "no precursor", "Adam", "order parameters",
                  "step coefficients", "cosine", "O(sη)", "causal removal", "neighbours"):
        assert claim in claims
