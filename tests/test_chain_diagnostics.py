"""R-hat and bulk ESS from ArviZ (optional extra ``bayes``): a stuck chain is flagged."""

import numpy as np
import pytest

from emergence.validation.samplers.diagnostics import (
    effective_sample_size, mean_and_standard_error, mean_ess, rhat_and_bulk_ess,
)

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


def ar1_chains(rho, chains=4, draws=4000, seed=0):
    rng = np.random.default_rng(seed)
    x = np.zeros((chains, draws))
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + np.sqrt(1 - rho**2) * rng.standard_normal(chains)
    return x


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9])
def test_our_ess_agrees_with_arviz_on_ar1_chains(rho):
    pytest.importorskip("arviz")
    x = ar1_chains(rho)
    ours, theirs = effective_sample_size(x), mean_ess(x)
    exact = x.size * (1 - rho) / (1 + rho)  # AR(1): tau = (1 + rho) / (1 - rho)
    # both estimators scatter by about 10 % around the exact value at 16,000 draws
    assert abs(ours / theirs - 1) < 0.1
    assert abs(theirs / exact - 1) < 0.2


def test_the_standard_error_uses_the_mean_ess():
    x = ar1_chains(0.9)
    mean, error = mean_and_standard_error(x)
    assert error == pytest.approx(x.std(ddof=1) / np.sqrt(mean_ess(x)), rel=1e-12)
    assert error > 3 * x.std(ddof=1) / np.sqrt(x.size)  # correlated draws: larger than the naive error
