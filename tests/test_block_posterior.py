"""The block trial's closed-form KL (theory/copy_head/block_trial.py, numerics/copy_head/block_posterior.py) against
SymPy and the dense BlockTrial.kl_from_prior, and PosteriorTheory(trial="block") against the gauge-correct trial,
the solver core and a Monte Carlo F_Q of the block trial's own draws."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from emergence.numerics.copy_head import block_posterior
from emergence.numerics.copy_head.block_posterior import (BlockMode, block_kl, column_kl, flat_sector_forms,
                                                          kl_optimal_split, split_ratios)
from emergence.numerics.copy_head.block_trial import BlockTrial
from emergence.numerics.copy_head.minimisation import newton_polish
from emergence.numerics.copy_head.posterior import PosteriorTheory
from emergence.numerics.copy_head.posterior_action import PosteriorAction
from emergence.theory.copy_head import block_trial as theory
from emergence.theory.copy_head.symbols import L as L_, V as V_

ULP = np.finfo(float).eps
CASES = [(3, 2, 0.7, 1.3, -0.6, {"tt": 0.4, "tp": 0.9, "pt": 1.7, "pp": 0.6, "diag": 1.2}),
         (5, 3, 1.1, 0.0, 0.4, {"tt": 0.2, "tp": 0.5, "pt": 0.4, "pp": 0.75}),
         (8, 4, 0.3, 3.2, -0.2, {"tt": 0.15, "tp": 0.48, "pt": 0.39, "pp": 0.75, "diag": 0.13}),
         (12, 4, 0.25, 2.0, 0.0, {"tt": 2.5, "tp": 0.1, "pt": 0.05, "pp": 3.0})]


def _weights(ratios: dict) -> dict:
    return {"tt": ratios["tt"], "tp": ratios["tp"], "pt": ratios["pt"], "pp": ratios["pp"], "d": ratios.get("diag", ratios["tt"])}


def test_sector_forms_are_the_sympy_derivation():
    """Multiplicities and forms of the numerics against theory.flat_sectors at several (L, V, weights), in order."""
    symbols = sp.symbols("w_tt w_tp w_pt w_pp w_d", positive=True)
    for L, V, _, _, _, ratios in CASES:
        w = _weights(ratios)
        derived = theory.flat_sectors().values()
        for (m, form), (multiplicity, expression) in zip(flat_sector_forms(L, V, w), derived, strict=True):
            values = {L_: L, V_: V, **dict(zip(symbols, (w["tt"], w["tp"], w["pt"], w["pp"], w["d"])))}
            assert m == int(multiplicity.subs(values))
            assert np.allclose(form, np.array(expression.subs(values), dtype=float), rtol=8 * ULP, atol=0)


@pytest.mark.parametrize("case", CASES)
def test_closed_form_kl_is_the_dense_kl_and_the_sympy_kl(case):
    """block_kl against BlockTrial.kl_from_prior (trace and log-determinant of the dense compressed covariance) and
    against the SymPy expression, to 2^10 ulps of the KL's size (the dense Cholesky's rounding)."""
    L, V, s, g, delta, ratios = case
    closed = block_kl(L, V, s, g, delta, ratios)
    assert closed == pytest.approx(BlockTrial(L, V, s, g, delta, ratios).kl_from_prior(), rel=1024 * ULP * L * L)
    t_tt, t_tp, t_pt, t_pp, t_d = theory.RATIOS
    values = {L_: L, V_: V, theory.s: s, theory.g: g, theory.delta: delta, t_tt: ratios["tt"], t_tp: ratios["tp"],
              t_pt: ratios["pt"], t_pp: ratios["pp"], t_d: ratios.get("diag", ratios["tt"])}
    assert closed == pytest.approx(float(theory.block_kl()["kl"].subs(values)), rel=64 * ULP)


@pytest.mark.parametrize("case", CASES)
def test_without_a_diagonal_ratio_the_kl_is_one_column_form_per_key_column_type(case):
    """(V - 1) column_kl(t_tt, t_pt) + (L - 1) column_kl(t_tp, t_pp) + mean term = block_kl at t_d = t_tt, and
    column_kl is the SymPy column_form."""
    L, V, s, g, delta, ratios = case
    ratios = {key: value for key, value in ratios.items() if key != "diag"}
    columns = (V - 1) * column_kl(ratios["tt"], ratios["pt"], L, V) + (L - 1) * column_kl(ratios["tp"], ratios["pp"], L, V)
    mean = ((L - 1) * g**2 + (V - 1) * delta**2) / (2 * s)
    assert columns + mean == pytest.approx(block_kl(L, V, s, g, delta, ratios), rel=256 * ULP)
    x, y = sp.symbols("x y", positive=True)
    derived = float(theory.column_form().subs({L_: L, V_: V, x: ratios["tp"], y: ratios["pp"]}))
    assert column_kl(ratios["tp"], ratios["pp"], L, V) == pytest.approx(derived, rel=64 * ULP)


def test_a_wrong_sector_count_fails_the_dense_check(monkeypatch):
    """Mutation (ran): the logit null's position sector counted L times instead of L - 1 moves the KL off the dense
    one by that sector's release, far beyond the rounding the check allows."""
    original = block_posterior.flat_sector_forms

    def mutated(L, V, w):
        sectors = original(L, V, w)
        sectors[3] = (L, sectors[3][1])
        return sectors

    monkeypatch.setattr(block_posterior, "flat_sector_forms", mutated)
    L, V, s, g, delta, ratios = CASES[2]
    dense = BlockTrial(L, V, s, g, delta, ratios).kl_from_prior()
    assert abs(block_kl(L, V, s, g, delta, ratios) - dense) > 1e-3


def test_the_default_trial_is_the_block_trial():
    from emergence.numerics.copy_head.posterior import DEFAULT_TRIAL

    assert DEFAULT_TRIAL == "block"
    default = PosteriorTheory(8, 4, draws=10)
    assert isinstance(default, block_posterior.BlockPosteriorTheory) and default.trial == "block"


def test_tied_ratios_are_the_gauge_correct_trial_and_the_split_only_lowers_it():
    gauge = PosteriorTheory(8, 4, draws=500, trial="gauge")
    block = PosteriorTheory(8, 4, draws=500, trial="block")
    g, t_u, t_v, P = 2.4, 0.35, 0.7, 240.0
    tied = block_kl(8, 4, gauge.s, g, 0.0, split_ratios(t_u, t_v, (0.0, 0.0)))
    assert tied == pytest.approx(gauge.prior_and_entropy(g, t_u, t_v), rel=64 * ULP)
    variance_kl, ratios = kl_optimal_split(8, 4, t_u, t_v)
    assert ratios["tt"] + ratios["pt"] == pytest.approx(2 * t_u, rel=8 * ULP)
    assert ratios["tp"] + ratios["pp"] == pytest.approx(2 * t_v, rel=8 * ULP)
    assert ratios["tt"] < t_u < ratios["pt"] and ratios["tp"] < t_v < ratios["pp"]  # the token rows squeeze more
    gain = block.free_energy(g, t_u, t_v, P) - gauge.free_energy(g, t_u, t_v, P)
    assert gain == pytest.approx(block_kl(8, 4, gauge.s, g, 0.0, ratios) - tied, rel=1e-10)
    assert gain < -0.1
    for eta in [(0.3, -0.2), (-0.5, 0.4)]:  # the split is the KL's minimum
        assert variance_kl < block_kl(8, 4, gauge.s, 0.0, 0.0, split_ratios(t_u, t_v, eta))


def test_block_modes_go_through_the_solver_core():
    """The core's Newton from the block theory's L-BFGS-B minimum stays there, and its modes carry the split."""
    block = PosteriorTheory(8, 4, averages="quadrature", trial="block")
    mode = block.minimise(240.0, "copy")
    assert isinstance(mode, BlockMode) and mode.ratios["tt"] < mode.ratios["pt"]
    start = np.array([[mode.g], [np.log(mode.t_u)], [np.log(mode.t_v)]])
    action = PosteriorAction(block)
    y, converged = newton_polish(action, start, np.array([240.0]))
    assert converged[0] and np.abs(y - start).max() < 1e-3
    assert action.value(y, 240.0)[0] == pytest.approx(mode.free_energy, rel=1e-7)
    assert isinstance(block.mode_at(240.0, "copy", y[:, 0]), BlockMode)


@pytest.mark.usefixtures("one_torch_thread")
def test_closed_form_F_is_the_sampled_F_Q_up_to_the_closures_offset():
    """F of the block theory's copy mode (L = 6, P = 200) against F_Q = E_Q[U] - H[Q] of its BlockTrial, 1500 draws with
    the model's potential.  Both KLs are exact, so F - F_Q is the row-average closure's data-term offset; it is
    that of the gauge-correct theory at its own mode within 0.6 nats (the largest row-correlation effect measured at
    L = 12 and 16, 0.29-0.54) plus 4 Monte Carlo errors, and within the closures' measured range [0, 2.5] nats.
    Mutation (ran): the block KL without the flat release (the product law's KL; 3.2 nats at this mode) fails it."""
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.posterior_diagnosis import trial_potential

    L, V, P = 6, 4, 200
    convention = CopyTaskConvention.parse("", attention="softmax")
    potential = trial_potential(L, V, P, convention, seed=0)
    standard = np.random.default_rng(3).standard_normal((1500, (V + L) ** 2))
    offsets, errors = {}, {}
    for trial in ("gauge", "block"):
        theory = PosteriorTheory(L, V, convention, draws=4000, trial=trial)
        mode = theory.minimise(float(P), "copy")
        sampled = (BlockTrial.gauge(L, V, theory.s, mode.g, mode.t_u, mode.t_v) if trial == "gauge"
                   else BlockTrial(L, V, theory.s, mode.g, 0.0, mode.ratios))
        U = potential(sampled.sample(standard)[0])
        offsets[trial] = mode.free_energy - (U.mean() - sampled.entropy())
        errors[trial] = U.std(ddof=1) / np.sqrt(len(U))
    assert 0.0 < offsets["block"] < 2.5 + 4 * errors["block"]
    assert abs(offsets["block"] - offsets["gauge"]) < 0.6 + 4 * np.hypot(errors["block"], errors["gauge"])


def test_the_offset_script_refuses_bad_input_with_one_line(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "block_closure_offset.py"
    spec = importlib.util.spec_from_file_location("block_closure_offset", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for argv in (["--L", "2", "--P", "10"], ["--L", "30", "--P", "10"], ["--L", "6", "--P", "10", "--draws", "5"]):
        assert module.main(argv) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
