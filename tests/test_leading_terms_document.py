"""The leading-term derivation document is generated: the committed file equals a fresh regeneration."""

from emergence.theory.leading_terms.document import DOCUMENT_PATH, derivation_steps, leading_terms_document


def test_committed_document_equals_a_fresh_regeneration():
    assert DOCUMENT_PATH.read_text(encoding="utf-8") == leading_terms_document(), (
        "docs/derivations/leading_terms.md is stale: run python -m emergence.theory.leading_terms.document")


def test_summed_coefficients_equal_the_papers_binomials():
    checked = next(step for step in derivation_steps() if step.key == "paper_form")
    assert [equation.expression for equation in checked.equations] == [0, 0, 0]
