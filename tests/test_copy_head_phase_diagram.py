"""Copy-head phase diagrams on the generated kernels (model T): the jump, the window, the continuous onset."""

import numpy as np
import pytest
from hypothesis import assume, given, settings

from emergence.numerics.copy_head.branches import branch_point
from emergence.numerics.copy_head.first_order import coexisting_branches
from emergence.numerics.copy_head.phase_diagram import phase_diagram
from emergence.numerics.copy_head.precise import (
    coexistence_point_mp,
    copy_onset_mp,
    literal_crossover_mp,
    second_order_point_mp,
)
from emergence.numerics.copy_head.reduced_action import generated_kernels, reduced_action
from copy_head_reference import reference_kernels
from emergence.validation.strategies import log_uniform_floats, log_uniform_integers


@pytest.mark.parametrize("L, V", [(32, 8), (64, 8), (256, 16)])
def test_softmax_jumps_at_coexistence_with_two_minima_in_the_window(L, V):
    action = reduced_action("softmax", L, V)
    coarse = phase_diagram(action, np.geomspace(10, 1e6, 200)).transitions
    P_star, (low, high) = coarse["P_star"], coarse["spinodals"]
    assert low < P_star < high
    fine = phase_diagram(action, np.geomspace(low / 1.5, high * 1.5, 600))
    jump = int(np.argmax(np.diff(fine.cG)))
    before, after = fine.cG[jump], fine.cG[jump + 1]
    assert after - before >= 0.05 and after >= 10 * before
    assert fine.P[jump] <= fine.transitions["P_star"] <= fine.P[jump + 1]
    inside = (fine.P > low) & (fine.P < high)
    assert np.all(fine.minima_count[inside] == 2)
    assert np.all(fine.minima_count[~inside] == 1)
    assert fine.transitions["P1"] is None and fine.transitions["crossover"] is None


def test_softmax_has_no_precursor_before_the_jump():
    """Below P*, the copy order parameter stays at the uniform value (no intermediate pooling state)."""
    diagram = phase_diagram(reduced_action("softmax", 256, 16), np.geomspace(100, 1e5, 300))
    below = diagram.P < diagram.transitions["P_star"]
    assert np.all(np.abs(diagram.cG[below]) < 2e-3)
    assert np.all(diagram.c1[below] > 0.99)


def test_linear_continuous_onset_then_smooth_copy_rise():
    action = reduced_action("linear", 256, 16)
    diagram = phase_diagram(action, np.geomspace(10, 1e7, 400))
    t = diagram.transitions
    assert t["P_star"] is None and t["spinodals"] is None
    assert t["critical_exponent"]["beta"] == pytest.approx(0.5, abs=2e-3)
    assert np.all(diagram.c1[diagram.P < t["P1"]] < 1e-8)
    above = (diagram.P > t["P1"] * 1.01) & (diagram.P < t["crossover"])
    assert np.all(diagram.c1[above] > 1e-3)
    assert t["P1"] < t["crossover"] < t["crossover_literal"]
    rising = (diagram.P > t["crossover"] / 3) & (diagram.P < t["crossover"] * 3)
    steps = np.diff(diagram.cG[rising])
    assert np.all(steps > 0)
    assert steps.max() < 0.2 * (diagram.cG[rising][-1] - diagram.cG[rising][0])


def test_reference_point_matches_the_notes_model_t_numbers():
    """The note's numerical study of model T (shared/theory/copy_head.md, its lambda = 1): P1 = 411.9, P* = 5.29e3."""
    from emergence.theory.copy_head.conventions import Convention

    linear = phase_diagram(reduced_action("linear", 256, 16), np.geomspace(10, 1e7, 200)).transitions
    softmax = phase_diagram(reduced_action("softmax", 256, 16, Convention(r=0.0)),
                            np.geomspace(1e3, 1e5, 200)).transitions
    assert linear["P1"] == pytest.approx(411.9, rel=1e-3)
    assert softmax["P_star"] == pytest.approx(5.29e3, rel=1e-2)


@settings(max_examples=6, deadline=None)
@given(log_uniform_integers(32, 512), log_uniform_integers(4, 32))
def test_float64_and_mpmath_transitions_agree(L, V):
    """At random sizes in the note's regime L >= 4V; the float64 onset (a flat maximum) to 1e-4."""
    assume(L >= 4 * V)
    linear = reduced_action("linear", L, V)
    grid = np.geomspace(1, 1e8, 240)
    diagram = phase_diagram(linear, grid)
    minima_y, _ = diagram.minima.global_minimum()
    t = diagram.transitions
    assert float(second_order_point_mp(linear, t["P1"], 50)) == pytest.approx(t["P1"], rel=1e-11)
    for key, refine, rel in (("crossover", copy_onset_mp, 1e-4), ("crossover_literal", literal_crossover_mp, 1e-10)):
        if t[key] is None or t["P_star"] is not None:
            continue
        start = branch_point(linear, minima_y[:, int(np.searchsorted(grid, t[key]))], t[key])
        assert float(refine(linear, t[key], start, 40)) == pytest.approx(t[key], rel=rel)
    softmax = reduced_action("softmax", L, V)
    diagram = phase_diagram(softmax, np.geomspace(10, 1e7, 300))
    P_star = diagram.transitions["P_star"]
    indices, lower, upper = coexisting_branches(diagram.minima)
    j = int(np.argmin(np.abs(np.log(diagram.P[indices] / P_star))))
    precise = coexistence_point_mp(softmax, P_star, branch_point(softmax, lower[:, j], P_star),
                                   branch_point(softmax, upper[:, j], P_star), 50)
    assert float(precise) == pytest.approx(P_star, rel=1e-11)


@settings(max_examples=10, deadline=None)
@given(log_uniform_floats(8, 2048), log_uniform_floats(2, 64), log_uniform_floats(1, 1e6))
def test_generated_kernels_agree_with_the_independent_test_double(L, V, P):
    """The test double (a separate transcription with the derived priors) and the kernels agree."""
    generated, double = generated_kernels(), reference_kernels()
    rng = np.random.default_rng(int(L * V) % 1000)
    c1, cG = rng.uniform(-1, 1, (2, 5))
    aG = rng.uniform(0.01, 0.95, 5)
    s1, sG, lam, beta = generated.scales.copy_head_scales_T(L, V, 1.3, 0.5, 0.8, 0.2, 0.7, 1.1, 1.0, 0.3, 1)
    assert np.allclose((s1, sG, lam, beta), double.scales.copy_head_scales_T(L, V, 1.3, 0.5, 0.8, 0.2, 0.7, 1.1, 1.0, 0.3, 1))
    for name in ("linear_action", "linear_action_gradient", "linear_action_hessian"):
        np.testing.assert_allclose(getattr(generated.linear, name)(c1, cG, P, L, V, s1, sG, lam, beta),
                                   getattr(double.linear, name)(c1, cG, P, L, V, s1, sG, lam, beta), rtol=1e-9, atol=1e-9)
    sG_soft, lam, beta = generated.scales.copy_head_softmax_scales(L, V, 1.3, 0.5, 0.8, 0.2, 0.7, 1.1, 1.0, 0.3)
    for name in ("softmax_action", "softmax_action_derivative", "softmax_action_second_derivative"):
        np.testing.assert_allclose(getattr(generated.softmax, name)(aG, P, L, V, sG_soft, lam, beta),
                                   getattr(double.softmax, name)(aG, P, L, V, sG_soft, lam, beta), rtol=1e-9, atol=1e-9)


def test_solvers_give_the_same_transitions_on_the_test_double():
    from emergence.theory.copy_head.conventions import DEFAULT_CONVENTION

    grid = np.geomspace(1e3, 1e5, 200)
    real = phase_diagram(reduced_action("softmax", 128, 8), grid).transitions
    double = phase_diagram(reduced_action("softmax", 128, 8, DEFAULT_CONVENTION, reference_kernels()), grid).transitions
    assert double["P_star"] == pytest.approx(real["P_star"], rel=1e-10)


def test_linear_copy_onset_becomes_a_jump_at_large_L_over_V():
    """Model T, L/V = 256: the copy branch is born below the pooling branch; the crossover is the jump."""
    action = reduced_action("linear", 1024, 4)
    law = 1024**1.5 * 4**0.5
    diagram = phase_diagram(action, np.geomspace(law / 10, law * 10, 160))
    t = diagram.transitions
    assert t["P_star"] is not None and t["crossover"] == t["P_star"]  # exact by design: the jump's crossover is P_star
    assert 1.0 < t["P_star"] / law < 1.5
    jump = int(np.searchsorted(diagram.P, t["P_star"]))
    assert diagram.c1[jump - 1] - diagram.c1[jump] > 0.1
