"""The smallest sizes the copy-head reduced actions accept: one source for the solvers and the command line.

:func:`~emergence.numerics.copy_head.reduced_action.check_sizes` refuses anything smaller, and every
command that runs the reduced action or the posterior theory states the same minimum in its parser
(``--L``: ``L must be an integer >= 3``).  Kept free of NumPy so the parser can import it at start-up.
"""

MINIMUM_L = 3
"""Sequence length (the lower bound of the solvers and of the posterior theory)."""

MINIMUM_V = 2
"""Vocabulary size."""
