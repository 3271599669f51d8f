"""The derivation document is generated: the committed file equals a fresh regeneration."""

from emergence.theory.copy_head.document import DOCUMENT_PATH, copy_head_document


def test_committed_document_equals_a_fresh_regeneration():
    committed = DOCUMENT_PATH.read_text(encoding="utf-8")
    assert committed == copy_head_document(), (
        "docs/derivations/copy_head.md is stale: run python -m emergence.theory.copy_head.document")


def test_document_says_it_is_a_reconstruction_and_lists_assumptions():
    text = copy_head_document()
    assert "**This is a reconstruction.**" in text and "Only the abstract" in text
    assert "bulk dropped" in text and "| assumed |" in text
