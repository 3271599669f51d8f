r"""The copy-head reduced actions as vectorised callables in unconstrained coordinates.

The generated kernels (``numerics/kernels/copy_head_*.py``, derived in
``theory/copy_head``) give the reduced action :math:`S(x; P)` of the two order
parameters and its first and second derivatives.  The solvers here need three more
things, which this module supplies without re-deriving any physics:

- coordinates in which the search is unconstrained: :math:`(c_1, c_G)` for linear
  attention; :math:`u = \operatorname{logit} a_G` for softmax attention (the mean attention
  on the previous token :math:`a_G \in (0, 1)`, and near the uniform state
  :math:`a_G \approx 1/L` a Newton step in :math:`u` is well scaled at every ``L``), with the
  chain rule :math:`S_u = S_a\,a(1-a)`, :math:`S_{uu} = S_{aa}(a(1-a))^2 + S_a\,a(1-a)(1-2a)`;
- the order parameters of the Frobenius projection :math:`A = c_1 J/L + c_G S + R`
  (softmax rows sum to 1: :math:`c_G = (L a_G - 1)/(L - 1)`, :math:`c_1 = 1 - c_G`);
- a box of multi-start points and, for linear attention, the symmetric point
  :math:`c_1 = c_G = 0` (the action is even under :math:`G \to -G`).

Every method works on arrays ``y`` of shape ``(k, ...)`` (``k`` coordinates) with ``P``
broadcasting against ``y[0]``; the ``*_mp`` methods take a list of ``k`` mpmath numbers and
a context (``mpmath.mp.clone()``), and call the kernels' ``_mp`` twins.

The kernels are passed in as modules (``kernels.scales``, ``kernels.linear``,
``kernels.softmax``), so the same solvers run on the generated kernels and on a test double.

>>> import numpy as np
>>> softmax_order_parameters(np.array([1 / 256, 1.0]), 256)
(array([1., 0.]), array([0., 1.]))
>>> isinstance(reduced_action("softmax", 64, 8), ReducedAction)
True
"""

from __future__ import annotations

import importlib
import types
from typing import Protocol, runtime_checkable

import numpy as np

from emergence.numerics.copy_head.minimisation import Minimisable
from emergence.base.errors import EmergenceError, InvalidSizeError

ATTENTIONS: tuple[str, ...] = ("linear", "softmax")


@runtime_checkable
class ReducedAction(Minimisable, Protocol):
    r"""A copy-head reduced action :math:`S(y; P)`: a :class:`~.minimisation.Minimisable` with the order
    parameters the transitions are read from (:class:`LinearAction`, :class:`SoftmaxAction`, and the test
    doubles of the solver tests).

    ``y`` has shape ``(k, ...)`` (``k = len(coordinates)``); ``order_parameters(y)`` gives
    :math:`(c_1, c_G)`, each of shape ``y.shape[1:]``; ``symmetric_point``: the point of shape ``(k,)`` where
    the action is even (linear attention's :math:`c_1 = c_G = 0`), ``None`` where there is none; the ``*_mp``
    twins (used by :mod:`.precise`) take lists of mpmath numbers and a context.
    """

    attention: str
    coordinates: tuple[str, ...]
    L: float
    V: float

    @property
    def symmetric_point(self) -> np.ndarray | None: ...

    def order_parameters(self, y): ...


def generated_kernels() -> types.SimpleNamespace:
    """The generated copy-head kernel modules as ``.scales``, ``.linear``, ``.softmax``, ``.asymptotics``."""
    try:
        return types.SimpleNamespace(
            scales=importlib.import_module("emergence.numerics.kernels.copy_head_scales"),
            linear=importlib.import_module("emergence.numerics.kernels.copy_head_linear"),
            softmax=importlib.import_module("emergence.numerics.kernels.copy_head_softmax"),
            asymptotics=importlib.import_module("emergence.numerics.kernels.copy_head_asymptotics"),
        )
    except ImportError as error:
        raise EmergenceError(
            f"copy-head kernels are missing ({error}); reinstall emergence, or in a source checkout "
            "run `python tools/regenerate.py kernels`"
        ) from None


def default_convention():
    """The default model (model T) of :mod:`emergence.theory.copy_head.conventions`."""
    from emergence.theory.copy_head.conventions import DEFAULT_CONVENTION

    return DEFAULT_CONVENTION


def check_sizes(L, V) -> None:
    """Raise :class:`InvalidSizeError` unless ``L >= 3`` and ``V >= 2`` are finite numbers
    (:data:`~emergence.numerics.copy_head.sizes.MINIMUM_L`, :data:`~emergence.numerics.copy_head.sizes.MINIMUM_V`)."""
    from emergence.numerics.copy_head.sizes import MINIMUM_L, MINIMUM_V

    for name, value, low in (("L", L, MINIMUM_L), ("V", V, MINIMUM_V)):
        if not np.isfinite(float(value)) or float(value) < low:
            raise InvalidSizeError(f"{name} must be a number >= {low}, got {value}")


def convention_knobs(L, V, convention) -> tuple:
    """The arguments ``(L, V, sigma_G2, a, sigma_W2, c, r_W, beta0, d, e)`` of the scales kernels."""
    return (L, V, convention.sigma_G2, convention.a, convention.sigma_W2, convention.c, convention.r,
            convention.beta0, convention.d, convention.e)


def model_scales(kernels, attention: str, L, V, convention) -> tuple[float, ...]:
    r"""The scales of ``convention`` at sizes ``L, V`` from the generated scales kernels.

    Linear attention: ``(s1, sG, lam, beta)`` (variances of :math:`A` along :math:`J/L` and the
    unit copy direction, readout variance, inverse temperature); softmax attention, model T:
    ``(sG, lam, beta)`` with ``sG`` the logit variance along the copy direction.
    """
    check_sizes(L, V)
    knobs = convention_knobs(L, V, convention)
    if attention == "linear":
        k = convention.attention_normalisation_exponent
        scales_kernel = (kernels.scales.copy_head_scales_M if convention.architecture == "M"
                         else kernels.scales.copy_head_scales_T)
        values = scales_kernel(*knobs, k)
    else:
        if convention.architecture == "M":
            raise EmergenceError("softmax attention of architecture M (two order parameters a_G, t) "
                                 "is not supported by the solvers yet; use architecture=T")
        values = kernels.scales.copy_head_softmax_scales(*knobs)
    scales = tuple(float(v) for v in values)
    if not all(np.isfinite(scales)) or min(scales) <= 0:
        raise EmergenceError(f"convention gives non-positive or infinite scales {scales} at L={L}, V={V}")
    return scales


def model_scales_mp(kernels, attention: str, L, V, convention, ctx) -> tuple:
    """:func:`model_scales` evaluated by the kernels' mpmath twins in ``ctx``."""
    knobs = convention_knobs(L, V, convention)
    if attention == "linear":
        k = convention.attention_normalisation_exponent
        scales_kernel = (kernels.scales.copy_head_scales_M_mp if convention.architecture == "M"
                         else kernels.scales.copy_head_scales_T_mp)
        return tuple(scales_kernel(*knobs, k, ctx=ctx))
    return tuple(kernels.scales.copy_head_softmax_scales_mp(*knobs, ctx=ctx))


def softmax_order_parameters(aG, L):
    r"""``(c1, cG)`` of a softmax pattern with mean attention ``aG`` on the previous token.

    Rows put :math:`a_G` on the previous token and :math:`(1-a_G)/(L-1)` elsewhere, so
    :math:`c_G = (L a_G - 1)/(L - 1)` and :math:`c_1 = 1 - c_G`.
    """
    cG = (L * aG - 1) / (L - 1)
    return 1 - cG, cG


def _parameters_mp(action, ctx) -> tuple:
    """``(L, V, *scales)`` as mpmath numbers; scales exact at ``ctx``'s precision when known."""
    cache = action.__dict__.setdefault("_mp_parameters", {})
    if ctx.prec not in cache:
        sizes = (ctx.mpf(action.L), ctx.mpf(action.V))
        if action.scales_mp is None:
            cache[ctx.prec] = sizes + tuple(ctx.mpf(v) for v in action.parameters[2:])
        else:
            cache[ctx.prec] = sizes + tuple(action.scales_mp(ctx))
    return cache[ctx.prec]


class LinearAction:
    r"""Linear attention: :math:`S(c_1, c_G; P)` in coordinates ``y = (c1, cG)``."""

    attention = "linear"
    coordinates: tuple[str, ...] = ("c1", "cG")

    def __init__(self, kernels, L, V, s1, sG, lam, beta, scales_mp=None, amplitude: float = 1.0):
        self.kernels, self.L, self.V = kernels.linear, float(L), float(V)
        self.parameters = (float(L), float(V), float(s1), float(sG), float(lam), float(beta))
        self.scales_mp = scales_mp
        self.symmetric_point = np.zeros(2)
        self.unit = float(amplitude)
        self.bounds = amplitude * np.array([[-0.25, 2.0], [-0.25, 2.0]])

    def value(self, y, P):
        return self.kernels.linear_action(y[0], y[1], P, *self.parameters)

    def gradient(self, y, P):
        return np.stack(np.broadcast_arrays(*self.kernels.linear_action_gradient(y[0], y[1], P, *self.parameters)))

    def hessian(self, y, P):
        h11, h12, h22 = np.broadcast_arrays(*self.kernels.linear_action_hessian(y[0], y[1], P, *self.parameters))
        return np.stack([np.stack([h11, h12]), np.stack([h12, h22])])

    def value_mp(self, y, P, ctx):
        return self.kernels.linear_action_mp(y[0], y[1], P, *self.parameters_mp(ctx), ctx=ctx)

    def gradient_mp(self, y, P, ctx):
        return list(self.kernels.linear_action_gradient_mp(y[0], y[1], P, *self.parameters_mp(ctx), ctx=ctx))

    def hessian_mp(self, y, P, ctx):
        h11, h12, h22 = self.kernels.linear_action_hessian_mp(y[0], y[1], P, *self.parameters_mp(ctx), ctx=ctx)
        return ctx.matrix([[h11, h12], [h12, h22]])

    def parameters_mp(self, ctx) -> tuple:
        """The kernel's size and scale arguments in ``ctx`` (scales from the mpmath scales kernel)."""
        return _parameters_mp(self, ctx)

    @staticmethod
    def canonical(y):
        """The representative of the ``G -> -G`` pair ``(y, -y)`` with ``c1 + cG >= 0``."""
        return y * np.where(np.asarray(y[0] + y[1]) < 0, -1.0, 1.0)

    def order_parameters(self, y):
        """``(c1, cG)``; the representative of the ``G -> -G`` pair with ``c1 + cG >= 0``."""
        sign = np.where(np.asarray(y[0] + y[1]) < 0, -1.0, 1.0)
        return sign * y[0], sign * y[1]

    def order_parameters_mp(self, y, ctx):
        sign = -1 if y[0] + y[1] < 0 else 1
        return sign * y[0], sign * y[1]

    def test_loss(self, y, P):
        """Predicted per-position test loss of the posterior-mean predictor at ``P``."""
        c1, cG = self.order_parameters(y)
        L, V, _, _, lam, beta = self.parameters
        return self.kernels.linear_posterior_test_loss(c1, cG, P, L, V, lam, beta)

    def start_axes(self, points: int = 20) -> tuple[np.ndarray, ...]:
        """Start values of each coordinate: 0 and log-spaced magnitudes from 1e-4 to the box edges."""
        axes = []
        for low, high in self.bounds:
            positive = np.geomspace(1e-4, high, points)
            negative = -np.geomspace(1e-4, -low, max(points // 2, 2))[::-1]
            axes.append(np.concatenate([negative, [0.0], positive]))
        return tuple(axes)


class SoftmaxAction:
    r"""Softmax attention: :math:`S(a_G; P)` in the coordinate :math:`u = \ln(a_G/(1-a_G))`."""

    attention = "softmax"
    coordinates: tuple[str, ...] = ("u",)
    symmetric_point = None

    def __init__(self, kernels, L, V, sG, lam, beta, scales_mp=None):
        self.kernels, self.L, self.V = kernels.softmax, float(L), float(V)
        self.parameters = (float(L), float(V), float(sG), float(lam), float(beta))
        self.scales_mp = scales_mp
        uniform = -np.log(self.L - 1)
        self.bounds = np.array([[uniform - 6.0, 8.0]])

    @staticmethod
    def attention_on_previous(u):
        """:math:`a_G = 1/(1 + e^{-u})`."""
        return 0.5 * (1 + np.tanh(0.5 * np.asarray(u, dtype=float)))

    def value(self, y, P):
        return self.kernels.softmax_action(self.attention_on_previous(y[0]), P, *self.parameters)

    def gradient(self, y, P):
        a = self.attention_on_previous(y[0])
        return (self.kernels.softmax_action_derivative(a, P, *self.parameters) * a * (1 - a))[None]

    def hessian(self, y, P):
        return self.gradient_and_hessian(y, P)[1]

    def gradient_and_hessian(self, y, P):
        """``(gradient, hessian)`` sharing the first derivative (one Newton step's terms)."""
        a = self.attention_on_previous(y[0])
        w = a * (1 - a)
        first = self.kernels.softmax_action_derivative(a, P, *self.parameters)
        second = self.kernels.softmax_action_second_derivative(a, P, *self.parameters)
        return (first * w)[None], (second * w**2 + first * w * (1 - 2 * a))[None, None]

    def parameters_mp(self, ctx) -> tuple:
        """The kernel's size and scale arguments in ``ctx`` (scales from the mpmath scales kernel)."""
        return _parameters_mp(self, ctx)

    @staticmethod
    def canonical(y):
        return y

    def _a_mp(self, y, ctx):
        return 1 / (1 + ctx.exp(-y[0]))

    def value_mp(self, y, P, ctx):
        return self.kernels.softmax_action_mp(self._a_mp(y, ctx), P, *self.parameters_mp(ctx), ctx=ctx)

    def gradient_mp(self, y, P, ctx):
        a = self._a_mp(y, ctx)
        return [self.kernels.softmax_action_derivative_mp(a, P, *self.parameters_mp(ctx), ctx=ctx) * a * (1 - a)]

    def hessian_mp(self, y, P, ctx):
        return self.gradient_and_hessian_mp(y, P, ctx)[1]

    def gradient_and_hessian_mp(self, y, P, ctx):
        """``(gradient_mp, hessian_mp)`` at one point, sharing the first derivative (one Newton step's terms)."""
        a = self._a_mp(y, ctx)
        w = a * (1 - a)
        first = self.kernels.softmax_action_derivative_mp(a, P, *self.parameters_mp(ctx), ctx=ctx)
        second = self.kernels.softmax_action_second_derivative_mp(a, P, *self.parameters_mp(ctx), ctx=ctx)
        return [first * w], ctx.matrix([[second * w**2 + first * w * (1 - 2 * a)]])

    def order_parameters(self, y):
        return softmax_order_parameters(self.attention_on_previous(y[0]), self.L)

    def order_parameters_mp(self, y, ctx):
        return softmax_order_parameters(self._a_mp(y, ctx), ctx.mpf(self.L))

    def test_loss(self, y, P):
        """Predicted per-position test loss of the posterior-mean predictor at ``P``."""
        L, V, _, lam, beta = self.parameters
        return self.kernels.softmax_posterior_test_loss(self.attention_on_previous(y[0]), P, L, V, lam, beta)

    def start_axes(self, points: int = 400) -> tuple[np.ndarray]:
        """Evenly spaced ``u`` over :attr:`bounds`."""
        low, high = self.bounds[0]
        return (np.linspace(low, high, points),)


def reduced_action(attention: str, L, V, convention=None, kernels=None) -> ReducedAction:
    """The :class:`LinearAction` or :class:`SoftmaxAction` of ``convention`` at sizes ``L, V``.

    ``kernels`` defaults to the generated modules and ``convention`` to model T.
    """
    if attention not in ATTENTIONS:
        raise EmergenceError(f"unknown attention {attention!r}; choose linear or softmax")
    kernels = kernels if kernels is not None else generated_kernels()
    convention = convention if convention is not None else default_convention()
    if convention.targets != "raw" or convention.shift != "cyclic":
        raise EmergenceError("the solvers support raw targets and the cyclic shift; "
                             f"got targets={convention.targets}, shift={convention.shift}")
    scales = model_scales(kernels, attention, L, V, convention)

    def scales_mp(ctx):
        return model_scales_mp(kernels, attention, L, V, convention, ctx)

    if attention == "linear":
        # A = G / L**k is L**(1 - k) times the A = G/L attention: the search box scales with it.
        amplitude = float(L) ** (1 - convention.attention_normalisation_exponent)
        s1, sG, lam, beta = scales
        return LinearAction(kernels, L, V, s1, sG, lam, beta, scales_mp=scales_mp, amplitude=amplitude)
    sG, lam, beta = scales
    return SoftmaxAction(kernels, L, V, sG, lam, beta, scales_mp=scales_mp)
