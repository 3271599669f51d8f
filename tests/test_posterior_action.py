"""The posterior free energy handed to the solver core: its value is PosteriorTheory.free_energy (the row trial's
row_free_energy), its derivatives are those of that function, and the core's modes and P* are the theory's."""

import numpy as np
import pytest

from emergence.numerics.copy_head.minimisation import Minimisable, newton_polish
from emergence.numerics.copy_head.posterior import PosteriorTheory
from emergence.numerics.copy_head.posterior_action import PosteriorAction, posterior_coexistence, posterior_transition


@pytest.fixture(scope="module")
def theory():
    return PosteriorTheory(8, 4, averages="quadrature", trial="gauge")


def test_value_is_the_theory_free_energy_with_broadcasting(theory):
    action = PosteriorAction(theory)
    assert isinstance(action, Minimisable)
    y = np.array([[0.3, 3.0], [-0.1, -1.2], [0.0, -0.4]])
    P = np.array([[100.0], [250.0]])  # (2, 1) against the 2 columns: (2, 2)
    values = action.value(y, P)
    assert values.shape == (2, 2)
    for i, p in enumerate(P[:, 0]):
        for j in range(2):
            expected = theory.free_energy(y[0, j], np.exp(y[1, j]), np.exp(y[2, j]), p)
            assert values[i, j] == pytest.approx(expected, rel=1e-13)


def test_derivatives_are_those_of_the_free_energy(theory):
    """Against differences of PosteriorTheory.free_energy at ten times the step (O(h^2) apart; the Hessian against
    the four-corner stencil, the action's uses two corners per pair); a gradient with one coordinate's sign flipped,
    or a Hessian without its cross terms, is told apart, and so is a cross term with F_0 counted once (ran: fails)."""
    action = PosteriorAction(theory)
    y, P = np.array([[1.2], [-0.6], [-0.2]]), 240.0
    h = 1e-3

    def F(point):
        return theory.free_energy(point[0], np.exp(point[1]), np.exp(point[2]), P)

    def moved(point, i, amount):
        point = point.copy()
        point[i] += amount
        return point

    centre = y[:, 0]
    expected = np.array([(F(moved(centre, i, h)) - F(moved(centre, i, -h))) / (2 * h) for i in range(3)])
    gradient = action.gradient(y, P)[:, 0]
    assert gradient == pytest.approx(expected, rel=1e-5, abs=1e-6)
    assert (gradient * [1, -1, 1]) != pytest.approx(expected, rel=1e-3)
    hessian = action.hessian(y, P)[:, :, 0]
    assert hessian == pytest.approx(hessian.T, rel=1e-12)
    cross = (F(moved(moved(centre, 0, h), 2, h)) - F(moved(moved(centre, 0, h), 2, -h))
             - F(moved(moved(centre, 0, -h), 2, h)) + F(moved(moved(centre, 0, -h), 2, -h))) / (4 * h * h)
    assert hessian[0, 2] == pytest.approx(cross, rel=1e-3)
    assert abs(cross) > 1e-2  # the cross term is not negligible here
    corners = np.array([[sum(a * b * F(moved(moved(centre, i, a * h), j, b * h)) for a in (1, -1) for b in (1, -1))
                         for j in range(3)] for i in range(3)]) / (4 * h * h)  # every entry, four corners each
    assert hessian == pytest.approx(corners, rel=1e-3, abs=1e-3)
    fused_gradient, fused_hessian = action.gradient_and_hessian(y, P)  # what the core's Newton reads
    assert np.array_equal(fused_gradient, action.gradient(y, P)) and np.array_equal(fused_hessian, action.hessian(y, P))


def test_core_newton_lands_on_the_theory_minimum(theory):
    """The core's Newton from L-BFGS-B's minimum stays there (same F to 1e-7 relative, same y to 1e-3)."""
    mode = theory.minimise(240.0, "copy")
    start = np.array([[mode.g], [np.log(mode.t_u)], [np.log(mode.t_v)]])
    action = PosteriorAction(theory)
    y, converged = newton_polish(action, start, np.array([240.0]))
    assert converged[0]
    assert np.abs(y - start).max() < 1e-3
    assert action.value(y, 240.0)[0] == pytest.approx(mode.free_energy, rel=1e-7)
    assert action.value(y, 240.0)[0] <= mode.free_energy + 1e-9


def test_the_row_trial_is_the_same_action_in_six_coordinates():
    """The row trial's F(x; P) through the same Minimisable: six coordinates, its own box, its value row_free_energy."""
    row = PosteriorTheory(6, 4, draws=300, trial="row")
    action = PosteriorAction(row)
    assert action.bounds.shape == (6, 2) and len(action.start_axes()) == 6
    x = np.array([[2.0], [-0.3], [0.1], [np.log(2 * row.s)], [0.5], [0.2]])
    assert action.value(x, 300.0)[0] == pytest.approx(row.row_free_energy(x[:, 0], 300.0), rel=1e-13)
    mode = row.mode_at(300.0, "copy", x[:, 0])
    assert mode.free_energy == pytest.approx(row.row_free_energy(x[:, 0], 300.0), rel=1e-13)


@pytest.mark.slow
def test_the_cores_modes_bracket_P_star_at_L8(theory):
    """posterior_transition on a scan around P* (L = 8; 133–188 s at load 9–10): the same P* as posterior_coexistence,
    245.527 between the grid points 222 and 270 where the global a_G jumps from 0.17 to 0.57 (the copy branch is
    born at 243.49, the window of two minima lies between those grid points); each mode is a minimum of F
    (L-BFGS-B from it moves F by less than 1e-9 relative; measured 3e-16)."""
    grid = np.geomspace(150.0, 400.0, 6)
    result = posterior_transition(theory, grid)
    P_star = result["P_star"]
    assert P_star == posterior_coexistence(theory, grid)
    assert P_star == pytest.approx(245.5274, rel=1e-5)
    assert [mode.aG > 0.5 for mode in result["global"]] == list(grid > P_star)
    for P, modes, distinct, difference in zip(grid, result["modes"], result["distinct"], result["difference"]):
        assert modes["uniform"].aG <= modes["copy"].aG
        assert (modes["uniform"].start, modes["copy"].start) == ("uniform", "copy")
        assert distinct == (abs(modes["copy"].aG - modes["uniform"].aG) > 0.05)
        assert difference == modes["copy"].free_energy - modes["uniform"].free_energy
        for mode in modes.values():
            polished = theory.minimise(P, mode.start, x0=[mode.g, np.log(mode.t_u), np.log(mode.t_v)])
            assert polished.free_energy == pytest.approx(mode.free_energy, rel=1e-9)


@pytest.mark.slow
def test_core_P_star_is_the_former_private_scans_at_L12():
    """The solver core (start grid, Newton, jump refinement, Brent on the branches' gap) against the value of the
    private continuation it replaced (L-BFGS-B warm starts, bisection, Brent to 1e-4 in ln P) on the same scan:
    446.7251 (recorded before the change; the core gives 446.7158), within 1e-4."""
    theory = PosteriorTheory(12, 4, averages="quadrature", trial="gauge")
    grid = np.geomspace(20, 20_000, 16)
    assert posterior_transition(theory, grid)["P_star"] == pytest.approx(446.7251, rel=1e-4)
