"""The row trial (numerics/copy_head/row_trial.py) against its SymPy derivation and against brute force.

- the dense geometry: subspace dimensions, the Gram matrix's eigenvalues, the copy boost of u_i on its own row only;
- the closed-form KL of the copy span against the SymPy expression;
- the 1-D law: normalised, its sampler follows its masses, its log density is the cell's;
- the trial's free energy F_Q against a Monte Carlo estimate from its own draws: E_Q[ln Q - ln prior] and the data
  term at row averages measured on dense draws of W_QK and random sequences.
"""

from __future__ import annotations

import numpy as np
import pytest

from emergence.numerics.copy_head.posterior import PosteriorTheory, data_action, effective_invariants, trial_entropy_counts
from emergence.numerics.copy_head.row_trial import (CELL, CELLS, CopyLaw, RowPosteriorTheory, copy_span_kl,
                                                    gram_eigenvalue, sample_row_trial, trial_geometry)
from emergence.numerics.order_parameters import cyclic_shift
from emergence.theory.copy_head import row_trial as derived

SIZES = [(3, 2), (5, 3), (8, 4)]


@pytest.mark.parametrize("L, V", SIZES)
def test_geometry_dimensions_and_gram(L, V):
    geometry = trial_geometry(L, V)
    dims = {name: geometry[name].shape[1] for name in ("flat", "token", "copy", "rest")}
    assert sum(dims.values()) == (V + L) ** 2
    assert (dims["token"], dims["rest"]) == trial_entropy_counts("row", L, V)
    eigen = np.sort(np.linalg.eigvalsh(geometry["copy"].T @ geometry["copy"]))
    gamma = float(derived.copy_span()["gamma"].subs({derived.L: L, derived.V: V}))
    assert gamma == pytest.approx(gram_eigenvalue(L, V), rel=1e-15)
    np.testing.assert_allclose(eigen, [gamma] * (L - 1) + [1.0], rtol=0, atol=64 * np.finfo(float).eps)


@pytest.mark.parametrize("L, V", SIZES)
def test_copy_direction_boosts_its_own_row_only(L, V):
    N = V + L
    boost = float(derived.copy_span()["boost"].subs(derived.L, L))
    previous = cyclic_shift(L).argmax(1)
    u = trial_geometry(L, V)["copy"].T.reshape(L, N, N)
    assert np.abs(u[:, :, :V]).max() < 64 * np.finfo(float).eps  # key-position columns only
    for i in range(L):
        for query_token in range(V):
            for k in range(L):
                logits = u[k][query_token, V:] + u[k][V + i, V:]
                expected = boost * (np.arange(L) == previous[i]) if k == i else np.zeros(L)
                centred = logits - logits.mean() - (expected - expected.mean())
                assert np.abs(centred).max() < 64 * np.finfo(float).eps


def test_copy_span_kl_is_the_derived_expression():
    law = CopyLaw.tilted(1.3, np.log(0.7), 2.0, 1.0, {"target": np.tanh(CELLS), "square": CELLS**2 / 100})
    mean, second = law.moments()
    for L, V, s in [(5, 3, 1.0), (12, 4, 0.7)]:
        values = {derived.L: L, derived.V: V, derived.s: s, derived.mu: mean, derived.m2: second, derived.H: law.entropy()}
        assert copy_span_kl(law.entropy(), mean, second, L, V, s) == pytest.approx(float(derived.copy_span()["kl"].subs(values)),
                                                                                    rel=1e-13)


def test_copy_law_is_normalised_and_sampled_by_its_masses():
    law = CopyLaw.tilted(2.0, np.log(1.5), 20.0, 3.0, {"target": 1 / (1 + np.exp(-(CELLS - 1.0))),
                                                      "square": 0.5 + 0.1 * np.tanh(CELLS)})
    assert law.masses.sum() == pytest.approx(1.0, abs=1e-13)
    fine = np.linspace(CELLS[0] - CELL / 2, CELLS[-1] + CELL / 2, 40 * len(CELLS) + 1)
    density = law.masses[np.clip(((fine - CELLS[0] + CELL / 2) / CELL).astype(int), 0, len(CELLS) - 1)] / CELL
    assert np.trapezoid(density, fine) == pytest.approx(1.0, abs=2e-3)
    draws, log_density = law.sample(200_000, np.random.default_rng(3))
    cell = np.clip(np.round((draws - CELLS[0]) / CELL).astype(int), 0, len(CELLS) - 1)
    np.testing.assert_allclose(log_density, np.log(law.masses[cell] / CELL), rtol=1e-12)
    mean, second = law.moments()
    assert abs(draws.mean() - mean) < 5 * np.sqrt(second - mean**2) / np.sqrt(draws.size)
    assert -np.mean(log_density) == pytest.approx(law.entropy(), abs=5 * np.std(log_density) / np.sqrt(draws.size))


def _dense_row_averages(theta: np.ndarray, V: int, rng: np.random.Generator, sequences: int) -> tuple[np.ndarray, np.ndarray]:
    """Q_Phi and M_Phi per draw ``(draws,)``, averaged over every query of ``sequences`` random sequences (dense attention)."""
    draws, N, _ = theta.shape
    L = N - V
    previous = cyclic_shift(L).argmax(1)
    squares, targets = [], []
    for _ in range(sequences):
        tokens = rng.integers(0, V, (draws, L))
        embed = np.zeros((draws, L, N))
        np.put_along_axis(embed[:, :, :V], tokens[..., None], 1.0, axis=2)
        embed[:, :, V:] = np.eye(L)
        logits = np.einsum("dia,dab,djb->dij", embed, theta, embed)
        attention = np.exp(logits - logits.max(-1, keepdims=True))
        attention /= attention.sum(-1, keepdims=True)
        phi = np.einsum("dij,dja->dia", attention, embed[:, :, :V])
        squares.append((phi**2).sum(-1).mean(1))
        targets.append(np.take_along_axis(phi, tokens[:, previous][..., None], axis=2)[..., 0].mean(1))
    return np.mean(squares, axis=0), np.mean(targets, axis=0)


def _kl_terms(theory: RowPosteriorTheory, mode) -> float:
    law = mode.law
    L, V, s = theory.L, theory.V, theory.s
    scale = np.sqrt((L - 1) / L)
    mean, second = law.moments()
    return float(theory.token_directions * 0.5 * (mode.t_u - 1 - np.log(mode.t_u))
                 + theory.position_directions * 0.5 * (mode.t_v - 1 - np.log(mode.t_v))
                 + copy_span_kl(law.entropy() + np.log(scale), scale * mean, scale**2 * second, L, V, s))


@pytest.mark.parametrize("L, V, P, x", [(5, 3, 60.0, (2.5, -0.8, -0.3, 0.2, 6.0, 2.0)), (4, 2, 40.0, (0.3, 0.0, 0.0, 0.7, 0.0, 0.0))])
def test_free_energy_against_monte_carlo_of_its_own_draws(L, V, P, x):
    """F_Q of a tilted (non-Gaussian) law and of a Gaussian one: KL by its own 40000 draws, data term at row averages of dense draws."""
    theory = PosteriorTheory(L, V, draws=20_000, trial="row")
    assert isinstance(theory, RowPosteriorTheory)
    mode = theory.row_mode(P, "copy", np.asarray(x))
    rng = np.random.default_rng(11)
    draws = 40_000
    theta, log_q = sample_row_trial(mode, L, V, theory.s, draws, rng)
    N = V + L
    log_prior = -(theta**2).sum((1, 2)) / (2 * theory.s) - 0.5 * N * N * np.log(2 * np.pi * theory.s)
    ratio = log_q - log_prior
    kl_error = ratio.std() / np.sqrt(draws)
    assert abs(ratio.mean() - _kl_terms(theory, mode)) < 5 * kl_error
    square, target = _dense_row_averages(theta[:20_000], V, rng, 2)
    functions = theory.functions(mode.t_u, mode.t_v)
    errors = {}
    for measured, name in ((square, "square"), (target, "target")):
        # 4 standard errors of the dense estimate and of the theory's Monte Carlo rows (taken as large as the dense one)
        errors[name] = 4 * np.sqrt(2) * measured.std() / np.sqrt(measured.size)
        assert abs(measured.mean() - mode.law.average(functions[name])) < errors[name]
    q_eff, m_eff = effective_invariants(square.mean(), target.mean(), L, V)
    data = data_action(q_eff, m_eff, L, L, P, V, theory.lam, theory.beta, L)
    kl = ratio.mean()
    assert abs(kl + data - mode.free_energy) < 5 * kl_error + _data_tolerance(theory, mode, P, errors)


def _data_tolerance(theory, mode, P, errors) -> float:
    """The data term's change over the row averages' error box (its largest corner)."""
    functions = theory.functions(mode.t_u, mode.t_v)
    square, target = mode.law.average(functions["square"]), mode.law.average(functions["target"])
    L, V = theory.L, theory.V

    def data(qs, ms):
        return data_action(*effective_invariants(qs, ms, L, V), L, L, P, V, theory.lam, theory.beta, L)
    centre = data(square, target)
    return max(abs(data(square + a * errors["square"], target + b * errors["target"]) - centre)
               for a in (-1, 1) for b in (-1, 1))
