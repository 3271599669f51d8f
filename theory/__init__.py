"""Symbolic models and derivations (SymPy).  No arrays live here.

Sub-packages: :mod:`emergence.theory.copy_head` (copy-head emergence, a reconstruction inside the
framework of arXiv 2606.12058) and :mod:`emergence.theory.leading_terms` (leading-term weights of
arXiv 2601.19208).  :mod:`emergence.theory.codegen` turns derived expressions into array kernels.
"""
