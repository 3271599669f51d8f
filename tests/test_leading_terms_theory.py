"""The derived leading-term coefficients, the quoted bounds and window, and their kernels."""

import importlib

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.numerics.kernels import leading_terms as kernels
from emergence.theory.leading_terms.bounds import T, layers, step_limit
from emergence.theory.leading_terms.recursion import eta, k, s, step_coefficients


def test_summed_recursion_gives_the_papers_binomials():
    """Independent check: the paper's s, C(s,2), 3C(s,4)+2C(s,3), compared after expansion."""
    derived = step_coefficients()
    papers = {
        "output": s * eta,
        "value": sp.binomial(s, 2) * eta**2,
        "key_query": (3 * sp.binomial(s, 4) + 2 * sp.binomial(s, 3)) * eta**4,
    }
    for name, expression in papers.items():
        assert sp.expand(sp.expand_func(expression) - derived[name]) == 0, name


def test_polynomial_recurrence_solver_agrees_with_the_summation():
    """c_{k+1} - c_k = eta a_k b_k with c_0 = 0, solved by rsolve_poly instead of summation.

    (``sympy.rsolve`` itself returns a wrong general solution for this cubic
    inhomogeneity in SymPy 1.14, e.g. ``C1*k**3*(k - 1)``; ``rsolve_poly`` is correct.)
    """
    from sympy.solvers.recurr import rsolve_poly

    derived = step_coefficients()
    driving = sp.expand(eta * derived["output"].subs(s, k) * derived["value"].subs(s, k))
    general = rsolve_poly([-1, 1], driving, k)
    constant = sp.solve(general.subs(k, 0), sp.Symbol("C0"))
    solution = general.subs(sp.Symbol("C0"), constant[0])
    assert sp.expand(solution.subs(k, s) - derived["key_query"]) == 0


def test_coefficients_match_iterating_the_recursion_with_exact_rationals():
    derived = step_coefficients()
    rate = sp.Rational(3, 7)
    a = b = c = sp.Integer(0)
    for steps in range(12):
        values = {name: e.subs({s: steps, eta: rate}) for name, e in derived.items()}
        assert values == {"output": a, "value": b, "key_query": c}
        a, b, c = a + rate, b + rate * a, c + rate * a * b


def test_small_step_values():
    """After 1 step only W_O moves, after 2 steps V; W and P start at step 3 with c = 2 eta^4."""
    derived = step_coefficients()
    at = lambda n: [derived[name].subs(s, n) for name in ("output", "value", "key_query")]  # noqa: E731
    assert at(1) == [eta, 0, 0]
    assert at(2) == [2 * eta, eta**2, 0]
    assert at(3) == [3 * eta, 3 * eta**2, 2 * eta**4]


def test_step_limit_at_the_papers_setting():
    """eta = 0.005, T = 200, L = 3: min(5/(8 sqrt 200), 1/36)/0.005 = 200/36."""
    value = step_limit().subs({eta: sp.Rational(1, 200), T: 200, layers: 3})
    assert sp.nsimplify(value) == sp.Rational(200, 36)
    assert float(kernels.leading_step_limit(0.005, 200, 3)) == pytest.approx(200 / 36, rel=1e-15)


@settings(max_examples=30)
@given(st.integers(0, 60), st.floats(1e-4, 1.0), st.integers(60, 2048), st.integers(1, 8))
def test_generated_kernels_equal_sympy_and_mpmath(steps, rate, length, depth):
    derived = step_coefficients()
    numeric = kernels.leading_coefficients(steps, rate)
    twin = kernels.leading_coefficients_mp(steps, rate, ctx=mpmath.mp.clone())
    for value, mp_value, name in zip(numeric, twin, ("output", "value", "key_query")):
        exact = float(derived[name].subs({s: steps, eta: sp.Float(rate, 30)}))
        assert float(value) == pytest.approx(exact, rel=1e-12, abs=1e-300)
        assert float(mp_value) == pytest.approx(exact, rel=1e-12, abs=1e-300)
    limit = float(step_limit().subs({eta: sp.Float(rate, 30), T: length, layers: depth}))
    assert float(kernels.leading_step_limit(rate, length, depth)) == pytest.approx(limit, rel=1e-12)


def test_kernels_broadcast_over_arrays():
    steps = np.arange(5)
    output, value, key_query = kernels.leading_coefficients(steps, 0.1)
    assert output.shape == value.shape == key_query.shape == (5,)
    assert importlib.import_module("emergence.numerics.kernels.leading_terms").__all__.count("leading_coefficients") == 1


def test_one_layer_models_use_the_one_layer_constants_and_window():
    from emergence.numerics.leading_terms.leading_weights import error_bounds, size_conditions, step_limit, within_step_window

    one, two = error_bounds(2, 0.1, 64, layers=1), error_bounds(2, 0.1, 64, layers=2)
    assert float(one["V"]) == pytest.approx(4 * 8e-3) and float(two["V"]) == pytest.approx(12 * 8e-3)
    assert float(one["P"]) == pytest.approx(6 * 32e-5 * 64) and float(two["W"]) == pytest.approx(13 * 32e-5 * 64)
    assert step_limit(0.01, 256, 1) == pytest.approx(3 / (8 * 256 ** (3 / 8)) / 0.01)
    assert within_step_window(4, 0.01, 64, 2) and not within_step_window(5, 0.01, 64, 2)
    assert size_conditions(500, 64, 2) == {
        "T_at_least_60": True, "V_at_least_500": True, "layers_at_most_sqrt_T_over_4": True,
    }
    assert not size_conditions(499, 59, 3)["layers_at_most_sqrt_T_over_4"]
    # one layer is Theorem D.7: only T >= 3, whatever V
    assert size_conditions(60, 16, 1) == {"T_at_least_3": True}
    assert size_conditions(60, 2, 1) == {"T_at_least_3": False}


def test_one_layer_case_at_T_16_lies_inside_its_window(tmp_path, capsys):
    from emergence.cli import main

    argv = ["predict-weights", "synthetic", "--vocab", "60", "--T", "16", "--steps", "2", "--lr", "0.001",
            "--layers", "1", "--out", str(tmp_path / "p.npz")]
    assert main(argv) == 0
    assert "inside the theorem's window" in capsys.readouterr().out
    assert main(argv[:-6] + ["--steps", "200", "--lr", "0.01", "--layers", "1", "--out", str(tmp_path / "q.npz")]) == 0
    assert "OUTSIDE the theorem's window (s > step limit)" in capsys.readouterr().out
    assert main(argv[:-6] + ["--steps", "2", "--lr", "0.001", "--layers", "2", "--out", str(tmp_path / "r.npz")]) == 0
    assert "not T_at_least_60" in capsys.readouterr().out
