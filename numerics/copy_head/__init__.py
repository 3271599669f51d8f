"""Solvers for the copy-head reduced actions: minima, phase transitions, phase diagrams.

Modules: :mod:`.reduced_action` (kernels -> vectorised action in search coordinates),
:mod:`.minimisation` (multi-start Newton, float64), :mod:`.second_order` (P1 and the
critical exponent), :mod:`.crossover` (copy-mode onset and the literal c_G = c_1 point),
:mod:`.first_order` (coexistence P* and spinodals), :mod:`.precise` (the same points at
mpmath precision), :mod:`.phase_diagram` (everything at once on a P grid), :mod:`.scaling`
(the paper's three scaling claims), :mod:`.posterior` and :mod:`.linear_posterior` (the
posterior-level theory, softmax and linear model T), :mod:`.logit_gauge` (bases of the flat
directions of model T's attention), :mod:`.row_trial` (the posterior theory's row trial:
each query row's copy gap on its own 1-D law), :mod:`.block_posterior` (its block trial: one variance
ratio per block of W_QK).  Headline numbers: ``validation/copy_head_golden.py``.
"""

from emergence.numerics.copy_head import row_trial as _row_trial  # noqa: E402,F401  registers PosteriorTheory(trial="row")
from emergence.numerics.copy_head import block_posterior as _block_posterior  # noqa: E402,F401  registers trial="block"
