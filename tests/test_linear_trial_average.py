"""The trial average of linear model T's readout-marginal action, by brute force.

* the SymPy second-order terms against a finite-difference second derivative of the exact action;
* the numerics' contractions against the SymPy terms (a law concentrated on one direction);
* the moments of (C, B) under the trial, and the trial average of the exact action, against Monte Carlo
  over draws of the attention noise (``noise_attention``, independent of the designs ``noise_design``).

Mutations run (2026-12-05): halving the coefficient of ``fit_CB`` in ``second_order_terms`` fails
``test_numerics_terms_are_the_derived_ones`` and ``test_correction_is_the_monte_carlo_trial_average``;
doubling one Isserlis term instead of adding its transpose fails ``test_moments_match_monte_carlo``; dropping
the 1/2 of the log-det's t^2 coefficient in the SymPy derivation fails the second-derivative and contraction tests.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from emergence.base.errors import EmergenceError, InvalidSizeError
from emergence.numerics.copy_head.linear_posterior import LinearNoise, LinearPosteriorTheory, noise_attention
from emergence.numerics.copy_head.linear_trial_average import (
    FluctuationMoments, StatisticsLaw, second_order_terms, statistics_law, trial_average_correction)
from emergence.numerics.order_parameters import cyclic_shift
from emergence.theory.copy_head import linear_trial_average as theory

EPSILON, BETA = 2.0, 1.5


def exact_action(C, B, epsilon=EPSILON, beta=BETA):
    """The readout-marginal action less its D term, batched over leading axes."""
    V = C.shape[-1]
    M = np.eye(V) + epsilon * C
    return (-0.5 * beta * epsilon * np.einsum("...ab,...ab->...", B, np.linalg.solve(M, B))
            + 0.5 * V * np.linalg.slogdet(M)[1])


def evaluate_trace(monomial: sp.Expr, matrices: dict[str, np.ndarray], V: int) -> float:
    """The trace of a non-commuting monomial of :mod:`~emergence.theory.copy_head.linear_trial_average`, letters as matrices."""
    total = 0.0
    for term in sp.Add.make_args(sp.expand(monomial)):
        scalar, product = sp.Integer(1), np.eye(V)
        for factor in sp.Mul.make_args(term):
            if factor.is_commutative:
                scalar *= factor
            else:
                base, power = (factor.base, int(factor.exp)) if factor.is_Pow else (factor, 1)
                product = product @ np.linalg.matrix_power(matrices[str(base)], power)
        value = scalar.subs({theory.epsilon: EPSILON, theory.beta: BETA, theory.V_readout: V})
        total += float(value) * float(np.trace(product))
    return total


def random_statistics(V: int, seed: int):
    rng = np.random.default_rng(seed)
    root = rng.standard_normal((V, V))
    C = root @ root.T / V
    delta_C = rng.standard_normal((V, V))
    return C, rng.standard_normal((V, V)), 0.5 * (delta_C + delta_C.T), rng.standard_normal((V, V))


def letters(C, B, delta_C, delta_B):
    R = np.linalg.inv(np.eye(C.shape[0]) + EPSILON * C)
    return {"R": R, "G": delta_C, "B": B, "Bt": B.T, "dB": delta_B, "dBt": delta_B.T}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_second_order_action_is_the_exact_second_derivative(seed):
    V = 3
    C, B, delta_C, delta_B = random_statistics(V, seed)
    h = 1e-3
    values = [exact_action(C + s * h * delta_C, B + s * h * delta_B) for s in (-1, 0, 1)]
    second_derivative = (values[0] - 2 * values[1] + values[2]) / h**2
    derived = sum(evaluate_trace(term, letters(C, B, delta_C, delta_B), V) for term in theory.second_order_action().values())
    # the t^2 coefficient is half the second derivative; central differences are O(h^2) ~ 1e-6 relative
    assert derived == pytest.approx(0.5 * second_derivative, rel=1e-5, abs=1e-8)


def test_numerics_terms_are_the_derived_ones():
    V = 4
    C, B, delta_C, delta_B = random_statistics(V, 5)
    outer = lambda x, y: np.einsum("ab,cd->abcd", x, y)
    law = StatisticsLaw(C, B, outer(delta_B, delta_B), outer(delta_C, delta_B), outer(delta_C, delta_C))
    numbers = second_order_terms(law, EPSILON, BETA)
    for name, term in theory.second_order_action().items():
        expected = evaluate_trace(term, letters(C, B, delta_C, delta_B), V)
        assert numbers[name] == pytest.approx(expected, rel=1e-12, abs=1e-12), name  # a few hundred rounding units


def _monte_carlo(tokens, V, c1, cG, a2, b2, draws, seed):
    """Exact C, B of every draw of the attention noise, ``(draws, V, V)`` each."""
    rng = np.random.default_rng(seed)
    L = tokens.shape[1]
    noise = LinearNoise(rng.standard_normal((draws, V, V)), rng.standard_normal((draws, V, L)),
                        rng.standard_normal((draws, L, V)), rng.standard_normal((draws, L, L)), tokens)
    A = c1 * np.ones((L, L)) / L + cG * cyclic_shift(L) + noise_attention(noise, a2, b2)
    X = np.eye(V)[tokens]
    Phi = np.einsum("deij,ejc->deic", A, X)
    return np.einsum("deia,deib->dab", Phi, Phi), np.einsum("deia,eib->dab", Phi, np.roll(X, 1, axis=1))


def test_moments_match_monte_carlo():
    L, V, E = 4, 3, 6
    tokens = np.random.default_rng(1).integers(0, V, size=(E, L))
    c1, cG, a2, b2 = 0.7, 0.3, 0.02, 0.015
    law = statistics_law(FluctuationMoments.from_tokens(tokens, V, chunk=4), c1, cG, a2, b2, E)
    C, B = _monte_carlo(tokens, V, c1, cG, a2, b2, 40_000, seed=2)
    for empirical, expected in ((C, law.C), (B, law.B)):
        z = (empirical.mean(0) - expected) / (empirical.std(0) / np.sqrt(len(empirical)) + 1e-300)
        assert np.abs(z).max() < 5
    dC, dB = C - law.C, B - law.B
    for first, second, expected in ((dB, dB, law.BB), (dC, dB, law.CB), (dC, dC, law.CC)):
        products = np.einsum("nab,ncd->nabcd", first, second)
        error = products.std(0) / np.sqrt(len(products))
        z = (products.mean(0) - expected) / np.maximum(error, 1e-12)
        assert np.abs(z).max() < 5.5  # 81 correlated components per tensor, max |z|


def test_correction_is_the_monte_carlo_trial_average():
    """Small noise (third order below the Monte Carlo error): the exact action averaged over the trial."""
    L, V, E = 4, 3, 6
    tokens = np.random.default_rng(1).integers(0, V, size=(E, L))
    c1, cG, a2, b2 = 1.0, 0.5, 0.0005, 0.0004
    moments = FluctuationMoments.from_tokens(tokens, V, chunk=4)
    law = statistics_law(moments, c1, cG, a2, b2, E)
    C, B = _monte_carlo(tokens, V, c1, cG, a2, b2, 100_000, seed=3)
    dC, dB = C - law.C, B - law.B
    R = np.linalg.inv(np.eye(V) + EPSILON * law.C)
    # the first-order terms average to zero: subtracted as a control variate
    first = (-0.5 * BETA * EPSILON * (2 * np.einsum("ca,cd,nda->n", law.B, R, dB)
                                      - EPSILON * np.einsum("ji,jk,nkl,lm,mi->n", law.B, R, dC, R, law.B))
             + 0.5 * V * EPSILON * np.einsum("ab,nba->n", R, dC))
    samples = exact_action(C, B) - exact_action(law.C, law.B) - first
    error = samples.std() / np.sqrt(len(samples))
    correction = trial_average_correction(moments, c1, cG, a2, b2, E, EPSILON, BETA)
    assert abs(samples.mean() - correction) < 4 * error
    assert abs(correction) > 100 * error  # the correction is resolved, so a wrong coefficient shows


def test_population_moments_need_two_sequences_and_fit_in_memory(monkeypatch):
    with pytest.raises(ValueError):
        FluctuationMoments.from_tokens(np.zeros((1, 4), dtype=int), 3)
    monkeypatch.setenv("EMERGENCE_MEMORY_BUDGET", "1M")
    with pytest.raises(InvalidSizeError, match="trial-average moments"):
        FluctuationMoments.from_tokens(np.zeros((512, 16), dtype=int), 4)


def test_noise_mean_is_the_theorys_noise_shift():
    """The designs' mean noise Gram is the theory's q, r shift (a multiple of I per sequence), to sampling error."""
    L, V, t_u, t_v = 6, 3, 0.8, 1.3
    theory_ = LinearPosteriorTheory(L, V, draws=2, sequences=2)
    moments = FluctuationMoments.population(L, V, sequences=4000, seed=3)
    gram = moments.means["noise_u"] * t_u * theory_.sG + moments.means["noise_v"] * t_v * theory_.sG
    shift = float(theory_.kernels.linear_posterior_noise_shift(t_u, t_v, L, V, theory_.sG))
    assert np.abs(gram - np.diag(np.diag(gram))).max() == 0.0
    assert np.diag(gram) == pytest.approx(np.full(V, shift / V), rel=0.03)  # 4000 sequences: about 0.5 % sd


def test_theory_adds_the_correction_only_when_asked():
    plain = LinearPosteriorTheory(4, 3, draws=2, sequences=2)
    averaged = LinearPosteriorTheory(4, 3, draws=2, sequences=2, data_term="trial_average")
    arguments = (0.4, 0.2, 0.9, 1.1, 30.0)
    correction, gradient = averaged.trial_average_correction(*arguments)
    assert averaged.free_energy(*arguments)[0] == pytest.approx(plain.free_energy(*arguments)[0] + correction, rel=1e-13)
    h = 1e-4  # the central-difference gradient against a coarser central difference of the value
    coarse = (averaged.trial_average_correction(0.4 + h, *arguments[1:])[0]
              - averaged.trial_average_correction(0.4 - h, *arguments[1:])[0]) / (2 * h)
    assert gradient[0] == pytest.approx(coarse, rel=1e-6)
    with pytest.raises(EmergenceError):
        plain.trial_average_correction(*arguments)
    with pytest.raises(EmergenceError):
        LinearPosteriorTheory(4, 3, draws=2, sequences=2, data_term="exact")
