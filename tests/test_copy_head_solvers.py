"""Copy-head solvers on toy actions with known answers (Landau phi^4, tilted double well)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.numerics.copy_head.crossover import copy_onset, literal_crossover
from emergence.numerics.copy_head.first_order import coexistence_point, spinodals
from emergence.numerics.copy_head.minimisation import discrete_minima, global_minimum, local_minima
from emergence.numerics.copy_head.precise import coexistence_point_mp, second_order_point_mp
from emergence.numerics.copy_head.second_order import critical_exponent, second_order_point
from emergence.validation.strategies import log_uniform_floats


class Landau:
    r""":math:`S = \tfrac12 k (P_1 - P)/P_1\,y^2 + \tfrac14 b\,y^4`: :math:`P_1` known, :math:`y_\ast = \sqrt{k(P-P_1)/(b P_1)}`."""

    bounds = np.array([[-5.0, 5.0]])
    symmetric_point = np.zeros(1)

    def __init__(self, P1, k, b):
        self.P1, self.k, self.b = P1, k, b

    def canonical(self, y):
        return np.abs(y)

    def value(self, y, P):
        return 0.5 * self.k * (self.P1 - P) / self.P1 * y[0] ** 2 + 0.25 * self.b * y[0] ** 4

    def gradient(self, y, P):
        return (self.k * (self.P1 - P) / self.P1 * y[0] + self.b * y[0] ** 3)[None]

    def hessian(self, y, P):
        return (self.k * (self.P1 - P) / self.P1 + 3 * self.b * y[0] ** 2)[None, None]

    def value_mp(self, y, P, ctx):
        return self.k * (self.P1 - P) / self.P1 * y[0] ** 2 / 2 + self.b * y[0] ** 4 / 4

    def gradient_mp(self, y, P, ctx):
        return [self.k * (self.P1 - P) / self.P1 * y[0] + self.b * y[0] ** 3]

    def hessian_mp(self, y, P, ctx):
        return ctx.matrix([[self.k * (self.P1 - P) / self.P1 + 3 * self.b * y[0] ** 2]])

    def order_parameters(self, y):
        return y[0], np.zeros_like(y[0])

    def start_axes(self, points=81):
        return (np.linspace(-5, 5, points),)


class TiltedDoubleWell:
    r""":math:`S = (y^2-1)^2 + h\ln(P/P_0)\,y`: coexistence at :math:`P_0`, spinodals at :math:`h\ln(P/P_0) = \mp 8/(3\sqrt3)`."""

    bounds = np.array([[-3.0, 3.0]])

    def __init__(self, P0, h):
        self.P0, self.h = P0, h

    def canonical(self, y):
        return y

    def tilt(self, P):
        return self.h * np.log(P / self.P0)

    def value(self, y, P):
        return (y[0] ** 2 - 1) ** 2 + self.tilt(P) * y[0]

    def gradient(self, y, P):
        return (4 * y[0] * (y[0] ** 2 - 1) + self.tilt(P))[None]

    def hessian(self, y, P):
        return (12 * y[0] ** 2 - 4 + 0 * self.tilt(P))[None, None]

    def value_mp(self, y, P, ctx):
        return (y[0] ** 2 - 1) ** 2 + self.h * ctx.log(P / self.P0) * y[0]

    def gradient_mp(self, y, P, ctx):
        return [4 * y[0] * (y[0] ** 2 - 1) + self.h * ctx.log(P / self.P0)]

    def hessian_mp(self, y, P, ctx):
        return ctx.matrix([[12 * y[0] ** 2 - 4]])

    def order_parameters(self, y):
        return 1 - y[0], y[0]

    def start_axes(self, points=241):
        return (np.linspace(-3, 3, points),)


@settings(max_examples=15, deadline=None)
@given(log_uniform_floats(1.0, 1e6), log_uniform_floats(0.3, 3.0), log_uniform_floats(0.3, 3.0))
def test_landau_second_order_point_and_exponent(P1, k, b):
    action = Landau(P1, k, b)
    found = second_order_point(action, P1 / 50, P1 * 50)
    assert found == pytest.approx(P1, rel=1e-10)
    fit = critical_exponent(action, found)
    assert fit["beta"] == pytest.approx(0.5, abs=1e-3)
    P = P1 * np.array([0.5, 1.2, 1.5])
    y, _ = global_minimum(action, P)
    expected = np.sqrt(np.maximum(k * (P - P1) / (b * P1), 0))
    np.testing.assert_allclose(y[0], expected, atol=1e-9)


def test_landau_second_order_point_to_fifty_digits():
    action = Landau(123.0, 2.0, 1.0)
    precise = second_order_point_mp(action, second_order_point(action, 1.0, 1e4), dps=50)
    assert abs(precise - 123) < 1e-45


@settings(max_examples=15, deadline=None)
@given(log_uniform_floats(1.0, 1e6), log_uniform_floats(0.3, 3.0))
def test_tilted_double_well_coexistence_and_spinodals(P0, h):
    action = TiltedDoubleWell(P0, h)
    fold = 8 / (3 * math.sqrt(3)) / h
    P = P0 * np.exp(np.linspace(-2 * fold, 2 * fold, 120))
    minima = local_minima(action, P)
    assert coexistence_point(action, minima) == pytest.approx(P0, rel=1e-10)
    low, high = spinodals(action, minima)
    assert low == pytest.approx(P0 * math.exp(-fold), rel=1e-9)
    assert high == pytest.approx(P0 * math.exp(fold), rel=1e-9)
    inside = (P > low) & (P < high)
    assert np.all(minima.count()[inside] == 2) and np.all(minima.count()[~inside] == 1)


def test_tilted_double_well_coexistence_to_fifty_digits():
    action = TiltedDoubleWell(1000.0, 1.0)
    P = 1000.0 * np.exp(np.linspace(-1, 1, 41))
    minima = local_minima(action, P)
    P_star = coexistence_point(action, minima)
    precise = coexistence_point_mp(action, P_star, [-1.0], [1.0], dps=50)
    assert abs(precise - 1000) < 1e-40


def test_crossover_definitions_on_a_known_curve():
    """c_G = tanh(ln P) on top of c_1 = 1 - c_G/2: onset at P = 1, c_G = c_1 at tanh = 2/3."""

    class Curve:
        bounds = np.array([[-3.0, 3.0], [-3.0, 3.0]])

        def canonical(self, y):
            return y

        def target(self, P):
            cG = np.tanh(np.log(P))
            return 1 - cG / 2, cG

        def value(self, y, P):
            c1, cG = self.target(P)
            return (y[0] - c1) ** 2 + (y[1] - cG) ** 2

        def gradient(self, y, P):
            c1, cG = self.target(P)
            return np.stack(np.broadcast_arrays(2 * (y[0] - c1), 2 * (y[1] - cG)))

        def hessian(self, y, P):
            two, zero = np.broadcast_arrays(2.0 + 0 * y[0] * P, 0 * y[0] * P)
            return np.array([[two, zero], [zero, two]])

        def order_parameters(self, y):
            return y[0], y[1]

    P = np.geomspace(0.1, 10, 81)
    cG = np.tanh(np.log(P))
    y = np.stack([1 - cG / 2, cG])
    assert copy_onset(Curve(), P, y) == pytest.approx(1.0, abs=1e-6)
    assert literal_crossover(Curve(), P, y) == pytest.approx(math.exp(math.atanh(2 / 3)), rel=1e-10)


@given(st.lists(st.floats(-10, 10), min_size=3, max_size=30))
def test_discrete_minima_are_below_their_neighbours(values):
    array = np.asarray(values)[:, None]
    mask = discrete_minima(array)[:, 0]
    padded = np.concatenate([[np.inf], array[:, 0], [np.inf]])
    for i in np.flatnonzero(mask):
        assert padded[i + 1] < padded[i] and padded[i + 1] <= padded[i + 2]
    assert mask.any()


class _WallAroundTheStart(Landau):
    """A Landau gradient and Hessian, but the action is 2 everywhere except at the start points, where it is 1:
    every line-search trial goes uphill until it rounds to the start itself (the column cannot move)."""

    def __init__(self, start):
        super().__init__(1.0, 1.0, 1.0)
        self.start, self.value_calls = start, 0

    def value(self, y, P):
        self.value_calls += 1
        return np.where(y[0] == self.start[0], 1.0, 2.0)


def test_newton_polish_stops_a_column_that_cannot_move_not_converged():
    from emergence.numerics.copy_head.minimisation import newton_polish

    start = np.array([[0.7, 1.3]])
    action = _WallAroundTheStart(start)
    y, converged = newton_polish(action, start.copy(), np.array([2.0, 2.0]))
    assert not converged.any()
    np.testing.assert_array_equal(y, start)  # exact by design: a column that cannot move keeps its start (a copy)
    # one iteration of line search, not 200 (every later iteration would repeat it exactly)
    assert action.value_calls <= 62


SOLVER_MODULES = ("minimisation", "branches", "first_order", "second_order", "crossover")


def test_every_solver_takes_a_minimisable():
    """Each function of the solver modules that takes an ``action`` declares it a ``Minimisable`` (or the
    copy head's ``ReducedAction``, which extends it); the reduced actions and the toy actions here are one."""
    import importlib
    import inspect

    from emergence.numerics.copy_head.minimisation import Minimisable
    from emergence.numerics.copy_head.reduced_action import ReducedAction, reduced_action

    undeclared = []
    for name in SOLVER_MODULES:
        module = importlib.import_module(f"emergence.numerics.copy_head.{name}")
        for function_name, function in inspect.getmembers(module, inspect.isfunction):
            parameters = inspect.signature(function).parameters
            if function.__module__ == module.__name__ and "action" in parameters \
                    and parameters["action"].annotation not in ("Minimisable", "ReducedAction"):
                undeclared.append(f"{name}.{function_name}")
    assert undeclared == []
    assert Minimisable in ReducedAction.__mro__
    for attention in ("linear", "softmax"):
        assert isinstance(reduced_action(attention, 64, 8), ReducedAction)
    assert isinstance(Landau(1.0, 1.0, 1.0), Minimisable)

    class NoHessian:
        bounds = np.array([[-1.0, 1.0]])

        def value(self, y, P): return y[0]

        def gradient(self, y, P): return y

        def canonical(self, y): return y

        def start_axes(self, points=3): return (np.linspace(-1, 1, points),)

    assert not isinstance(NoHessian(), Minimisable)
