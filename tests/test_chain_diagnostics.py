"""R-hat and bulk ESS from ArviZ (optional extra ``bayes``): a stuck chain is flagged."""

import numpy as np
import pytest

from emergence.validation.samplers.diagnostics import rhat_and_bulk_ess

pytest.importorskip("arviz")


def test_mixed_chains_pass_and_a_stuck_chain_is_flagged():
    rng = np.random.default_rng(0)
    rhat, ess = rhat_and_bulk_ess(rng.normal(size=(4, 500)))
    assert rhat < 1.01 and ess > 1000
    stuck = rng.normal(size=(4, 500))
    stuck[0] += 3.0
    rhat, ess = rhat_and_bulk_ess(stuck)
    assert rhat > 1.05 and ess < 100


def test_constant_chains_have_rhat_one():
    assert rhat_and_bulk_ess(np.zeros((3, 10)))[0] == 1.0  # exact by design: constant chains return the literal 1.0
