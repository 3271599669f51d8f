"""Leading-term weights of attention-only transformers (Im et al., arXiv 2601.19208).

:mod:`emergence.theory.leading_terms.recursion` derives the step coefficients of Theorem 4.1 by
summing the per-step leading-order gradient recursion; :mod:`emergence.theory.leading_terms.bounds`
holds the theorem's error bounds and validity window (quoted, not derived);
:mod:`emergence.theory.leading_terms.kernels` turns both into generated array kernels.
"""

from emergence.theory.leading_terms.kernels import kernel_modules

__all__ = ["kernel_modules"]
