"""Leading P* of the softmax jump and the isotropic bound, against 50-digit numerics of the full actions."""

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.numerics.kernels.copy_head_linear import linear_copy_mode_onset, linear_second_order_point
from emergence.numerics.copy_head.scaling_certification import ell_of_L
from emergence.theory.copy_head.asymptotics import coexistence_solution, leading_P_star
from emergence.theory.copy_head.isotropic_bound import isotropic_ratio
from emergence.theory.copy_head.symbols import L as L_symbol, V as V_symbol, sG
from emergence.validation.copy_head_derivation_golden import softmax_coexistence


def test_P_star_approaches_the_dominant_balance_and_its_leading_law():
    ctx = mpmath.mp.clone()
    ctx.dps = 50
    V = 16
    to_balance, to_leading = [], []
    leading = leading_P_star()["leading"]
    for L in (10**4, 10**6, 10**9, 10**12):
        coexistence = softmax_coexistence(L, V, r=0)  # lambda = 1: the balance of leading_P_star
        P_star, balance = coexistence["P_star"], coexistence["balance"]
        to_balance.append(float(P_star / balance))
        law = sp.N(leading.subs({L_symbol: L, V_symbol: V, sG: 1, sp.Symbol("beta0", positive=True): 1}), 50)
        to_leading.append(float(P_star / ctx.mpf(str(law))))
    assert all(np.diff(to_balance) < 0) and to_balance[-1] - 1 < 0.01, to_balance
    assert all(np.diff(to_leading) < 0) and to_leading[-1] < 1.35, to_leading


def test_default_P_star_approaches_the_landing_balance_and_its_leading_law():
    """lambda = 1/L (the default): full action / landing balance -> 1, and P* / (V L ln^2 L/(V-1)) falls
    towards 1 (1.08 at L = 1e12, V = 16); the lambda = 1 constant V/(4(V-1)) would give a ratio near 4."""
    from emergence.theory.copy_head.asymptotics import readout_leading_P_star

    leading = readout_leading_P_star()["leading"]
    V = 16
    to_balance, to_leading = [], []
    for L in (10**4, 10**6, 10**9, 10**12):
        coexistence = softmax_coexistence(L, V, r=1)
        to_balance.append(float(abs(coexistence["P_star"] / coexistence["balance"] - 1)))
        law = leading.subs({L_symbol: L, V_symbol: V, sG: 1, sp.Symbol("beta0", positive=True): 1})
        to_leading.append(float(coexistence["P_star"]) / float(sp.N(law, 30)))
    assert all(np.diff(to_balance) < 0) and to_balance[-1] < 1e-9, to_balance
    assert all(np.diff(to_leading) < 0) and 1 < to_leading[-1] < 1.1, to_leading


def test_growing_lambert_branch_solves_the_balance_equation():
    ctx = mpmath.mp.clone()
    ctx.dps = 50
    for L in (10**3, 10**8, 10**20):
        ell = ell_of_L(L, ctx)
        assert abs(2 * ell - ctx.log(L * (ell - 1))) < ctx.mpf(10) ** -40
    solution = coexistence_solution()
    assert solution["x"] == sp.Symbol("ell", positive=True) - 1


def test_isotropic_ratio_limits_and_the_note_bound():
    ratio = isotropic_ratio()
    assert sp.simplify(ratio["excess_large_L"] - V_symbol / (V_symbol - 1)) == 0
    excess = ratio["excess_over_note_bound_squared"]
    for L in (4, 64, 4096):
        for V in (2, 16, 256):
            assert float(excess.subs({L_symbol: L, V_symbol: V})) > 1  # sqrt(L/V) is exceeded, slightly


@settings(max_examples=15, deadline=None)
@given(L=st.integers(8, 4096), V=st.integers(2, 256), s=st.floats(1e-6, 1e3), lam_value=st.floats(0.1, 10),
       beta_value=st.floats(1e-4, 1.0))
def test_isotropic_ratio_lies_between_its_limits(L, V, s, lam_value, beta_value):
    """P_G / P1 from the generated kernels (isotropic s1 = sG = s) is bounded by the prior-dominated limit."""
    P1 = linear_second_order_point(L, V, s, lam_value, beta_value)
    PG = linear_copy_mode_onset(L, V, s, s, lam_value, beta_value)
    ratio = isotropic_ratio()
    values = {L_symbol: L, V_symbol: V}
    upper = float(sp.sqrt(ratio["prior_dominated_squared"].subs(values)))
    lower = float(ratio["occam_dominated"].subs(values))
    assert min(lower, upper) * (1 - 1e-9) <= PG / P1 <= max(lower, upper) * (1 + 1e-9)


def test_action_split_check_rejects_a_changed_prior(monkeypatch):
    """The prior/data split of the softmax action is checked against an independent data action."""
    import emergence.theory.copy_head.asymptotics as asymptotics
    from emergence.theory.copy_head.softmax import softmax_reduced_action
    from emergence.theory.copy_head.symbols import aG

    assert set(asymptotics.scaled_action_limits()) == {"data", "prior_remainder", "prior_uniform"}
    changed = softmax_reduced_action("raw") + (L_symbol - 1) * sp.log(aG) ** 2 / (4 * sG)
    monkeypatch.setattr(asymptotics, "softmax_reduced_action", lambda targets="raw": changed)
    with pytest.raises(ArithmeticError, match="does not split"):
        asymptotics.scaled_action_limits.__wrapped__()


def test_readout_scaled_jump_lands_where_the_dominant_balance_says():
    """lambda = 1/L: the full 50-digit coexistence against the derived balance (a*, P*) of readout_coexistence."""
    from emergence.numerics.copy_head.scaling_certification import readout_landing

    ratios = []
    for L in (256, 1024, 65536):
        coexistence = softmax_coexistence(L, 16, r=1)
        landing = readout_landing(L, 16)
        assert float(coexistence["a_uniform"]) < 1.01 / L  # no precursor: a_G ~ 1/L before the jump
        assert float(coexistence["a_copy"]) >= 0.5
        assert abs(float(coexistence["a_copy"]) - landing["a_star"]) < 0.006
        ratios.append(float(coexistence["P_star"]) / landing["P_star"])
    assert all(np.diff(ratios) < 0) and 1 < ratios[-1] < 1.001 and ratios[0] < 1.02, ratios
