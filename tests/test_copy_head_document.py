"""The derivation document is generated: the committed file equals a fresh regeneration."""

from emergence.theory.copy_head.document import copy_head_document
from generated_files import assert_committed_equal_fresh, regenerate, requires_pinned_sympy


@requires_pinned_sympy
def test_committed_document_equals_a_fresh_regeneration():
    document = regenerate.DERIVATIONS_DIR / "copy_head.md"
    assert_committed_equal_fresh({document: copy_head_document()}, "python tools/regenerate.py derivations")


def test_document_says_it_is_a_reconstruction_and_lists_assumptions():
    text = copy_head_document()
    assert "**This is a reconstruction.**" in text and "Only the abstract" in text
    assert "bulk dropped" in text and "| assumed |" in text
