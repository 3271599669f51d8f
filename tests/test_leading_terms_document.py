"""The leading-term derivation document is generated: the committed file equals a fresh regeneration."""

from emergence.theory.leading_terms.document import derivation_steps, leading_terms_document
from generated_files import assert_committed_equal_fresh, regenerate, requires_pinned_sympy


@requires_pinned_sympy
def test_committed_document_equals_a_fresh_regeneration():
    document = regenerate.DERIVATIONS_DIR / "leading_terms.md"
    assert_committed_equal_fresh({document: leading_terms_document()}, "python tools/regenerate.py derivations")


def test_summed_coefficients_equal_the_papers_binomials():
    checked = next(step for step in derivation_steps() if step.key == "paper_form")
    assert [equation.expression for equation in checked.equations] == [0, 0, 0]
