r"""Leading-term weights (arXiv 2601.19208): corpus statistics, predicted weights, associations.

:mod:`~emergence.numerics.leading_terms.basis_statistics` computes \bar B, \Sigma_{\bar B},
\bar\Phi, \bar G, \bar Q and \Delta in one O(N T^2) pass;
:mod:`~emergence.numerics.leading_terms.basis_reference` is the literal O(N T^3) definition
used only to check it; :mod:`~emergence.numerics.leading_terms.leading_weights` turns them into
the Theorem 4.1 weights; :mod:`~emergence.numerics.leading_terms.associations` ranks tokens.
"""
