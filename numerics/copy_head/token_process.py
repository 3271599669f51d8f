r"""The copy head on a stationary token process: lag joints, the data term, and the reduced actions.

A process is given by its lag joints ``joints (L, V, V)``, :math:`J_k = \mathbb E[x_\ell x_{\ell-k}^T]`
for :math:`k = 0 \dots L-1` (:math:`J_0 = \operatorname{diag}\pi`).  The data term of any attention
matrix A (L x L) is the readout-marginal action of step 1 (:func:`readout_action`) at

.. math:: C_1 = \mathbb E[X^TA^TAX],\quad B_1 = \mathbb E[X^TA^TSX],\quad D_1 = \mathbb E[X^TS^TSX],
   \qquad \mathbb E[X^TMX] = \sum_{\ell\ell'} M_{\ell\ell'}J_{\ell-\ell'},\ J_{-k} = J_k^T

(:func:`quadratic_moment`, derived in :mod:`emergence.theory.copy_head.token_process`; the tests compare
it with Monte Carlo and with exact enumeration of every sequence).

Processes (:class:`TokenProcess`): ``iid`` (uniform), ``markov`` (persistence :math:`\rho`:
:math:`x_\ell = x_{\ell-1}` with probability :math:`\rho`, else uniform;
:math:`J_k = \rho^k I/V + (1-\rho^k)\mathbf 1\mathbf 1^T/V^2`) and ``zipf`` (unigram
:math:`\pi_u \propto (u+1)^{-\alpha}`, no correlation: :math:`J_{k\ne0} = \pi\pi^T`).

Reduced actions (:func:`token_process_action`): persistence through the generated kernels
(``copy_head_token_process``; linear :math:`A = c_0I + c_GS + c_1J/L`, softmax rows with
:math:`a_0` on the token itself and :math:`a_G` on the previous one, in the logit-gap coordinates
:math:`g = \ln(a/a_r)`); Zipf as the i.i.d. reduced action with its data term replaced by the
V x V one (:class:`ZipfAction`).  Every action is a :class:`~.reduced_action.ReducedAction`, so
:func:`~.phase_diagram.phase_diagram` locates its transitions as for the i.i.d. task.

>>> TokenProcess.parse("markov:rho=0.3").label()
'markov:rho=0.3'
>>> np.allclose(TokenProcess.parse("iid").joints(4, 3).sum(axis=(1, 2)), 1.0)
True
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import numpy as np

from emergence.base.errors import EmergenceError
from emergence.numerics.copy_head.lag_joint_action import LagJointKernels
from emergence.numerics.copy_head.readout_marginal import readout_action
from emergence.numerics.copy_head.reduced_action import (
    default_convention, generated_kernels, model_scales, reduced_action, softmax_order_parameters,
)

KINDS = ("iid", "markov", "zipf", "corpus")
TOKEN_PROCESS_HELP = ("iid, markov:rho=R, zipf:alpha=A or corpus:PATH (a text file read as V classes: "
                      "its V-1 most frequent tokens and <unk>)")


@dataclass(frozen=True)
class TokenProcess:
    """A stationary token process: ``iid``, ``markov`` (``parameter`` = rho in [0, 1)), ``zipf`` (``parameter`` =
    alpha >= 0) or ``corpus`` (``source`` a text file, read by ``tokenizer``; its lag joints are measured,
    :mod:`.corpus_process`)."""

    kind: str = "iid"
    parameter: float = 0.0
    source: str = ""
    tokenizer: str = "natural"

    @classmethod
    def parse(cls, text: str) -> "TokenProcess":
        """``iid``, ``markov:rho=R``, ``zipf:alpha=A`` or ``corpus:PATH[#tokenizer=NAME]`` (:class:`EmergenceError`
        otherwise, and for a corpus file that cannot be read)."""
        kind, _, rest = text.strip().partition(":")
        names = {"iid": None, "markov": "rho", "zipf": "alpha", "corpus": None}
        if kind not in names:
            raise EmergenceError(f"unknown token process {text!r}; use {TOKEN_PROCESS_HELP}")
        if kind == "corpus":
            from emergence.numerics.copy_head.corpus_process import parse_corpus_source

            return cls("corpus", 0.0, *parse_corpus_source(rest))
        if names[kind] is None:
            if rest:
                raise EmergenceError(f"the iid process takes no parameter, got {text!r}")
            return cls("iid", 0.0)
        name, _, value = rest.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if name != names[kind] or not np.isfinite(number):
            raise EmergenceError(f"token process {text!r}: expected {kind}:{names[kind]}=NUMBER")
        if (kind == "markov" and not 0.0 <= number < 1.0) or (kind == "zipf" and number < 0.0):
            raise EmergenceError(f"token process {text!r}: need 0 <= rho < 1 (markov) or alpha >= 0 (zipf)")
        return cls(kind, number)

    def label(self) -> str:
        if self.kind == "corpus":
            return f"corpus:{self.source}" + ("" if self.tokenizer == "natural" else f"#tokenizer={self.tokenizer}")
        return "iid" if self.kind == "iid" else f"{self.kind}:{'rho' if self.kind == 'markov' else 'alpha'}={self.parameter:g}"

    def statistics_record(self, L: int, V: int) -> dict:
        """What the theory's statistics of this process are and where they come from: the process, the lag range
        used (0 … L − 1), ``derived`` (closed form) or ``measured`` with the corpus's provenance
        (:func:`~.corpus_process.corpus_provenance`: file, sha256, tokenizer, V, token count)."""
        record = {"process": self.label(), "lag_range": [0, int(L) - 1]}
        if self.kind != "corpus":
            return record | {"source": "closed form (derived)"}
        from emergence.numerics.copy_head.corpus_process import corpus_provenance

        return record | {"source": "measured"} | corpus_provenance(self.source, self.tokenizer, V, L)

    def unigram(self, V: int) -> np.ndarray:
        r""":math:`\pi` (V,): uniform, Zipf :math:`\pi_u \propto (u+1)^{-\alpha}`, or the corpus's measured unigram."""
        if self.kind == "corpus":
            return np.diag(self.joints(2, V)[0]).copy()
        if self.kind == "zipf":
            weights = np.arange(1, V + 1, dtype=float) ** (-self.parameter)
            return weights / weights.sum()
        return np.full(V, 1.0 / V)

    def joints(self, L: int, V: int) -> np.ndarray:
        r"""Lag joints ``(L, V, V)``: :math:`J_k[u, v] = \Pr(x_\ell = u, x_{\ell-k} = v)`, k = 0 .. L-1 (a corpus:
        measured, :func:`~.corpus_process.corpus_statistics`)."""
        if self.kind == "corpus":
            from emergence.numerics.copy_head.corpus_process import corpus_statistics

            return corpus_statistics(self.source, self.tokenizer, V, L - 1).joints
        pi = self.unigram(V)
        rho = self.parameter if self.kind == "markov" else 0.0
        k = np.arange(L, dtype=float)[:, None, None]
        if self.kind == "markov":
            return rho**k * np.eye(V) / V + (1 - rho**k) / V**2
        return np.where(k == 0, np.diag(pi)[None], np.outer(pi, pi)[None])


def quadratic_moment(M: np.ndarray, joints: np.ndarray) -> np.ndarray:
    r""":math:`\mathbb E[X^TMX] = \sum_{\ell\ell'}M_{\ell\ell'}J_{\ell-\ell'}` for ``M (..., L, L)``; shape ``(..., V, V)``."""
    L = M.shape[-1]
    lags = np.subtract.outer(np.arange(L), np.arange(L))
    lower = np.where(lags >= 0, M, 0.0)
    upper = np.where(lags < 0, M, 0.0)
    below = np.stack([np.trace(lower, offset=-k, axis1=-2, axis2=-1) for k in range(L)], axis=-1)
    above = np.stack([np.trace(upper, offset=k, axis1=-2, axis2=-1) for k in range(L)], axis=-1)
    return np.einsum("...k,kuv->...uv", below, joints) + np.einsum("...k,kvu->...uv", above, joints)


def cyclic_shift(L: int) -> np.ndarray:
    """S (L, L): ``S[l, l-1] = 1``, ``S[0, L-1] = 1``."""
    return np.roll(np.eye(L), 1, axis=0)


def data_moments(A: np.ndarray, joints: np.ndarray) -> dict[str, np.ndarray]:
    """Per-sequence ``C``, ``B``, ``D`` (each ``(..., V, V)``) of attention ``A (..., L, L)``, raw targets, cyclic shift."""
    S = cyclic_shift(A.shape[-1])
    At = np.swapaxes(A, -1, -2)
    D = quadratic_moment(S.T @ S, joints)
    return {"C": quadratic_moment(At @ A, joints), "B": quadratic_moment(At @ S, joints),
            "D": np.broadcast_to(D, A.shape[:-2] + D.shape)}


def data_term(A: np.ndarray, joints: np.ndarray, P: float, beta: float, lam: float) -> np.ndarray:
    """The population data term of ``A (..., L, L)``: :func:`readout_action` at P times :func:`data_moments`."""
    moments = data_moments(A, joints)
    return readout_action(P * moments["C"], P * moments["B"], P * moments["D"], beta, lam)


def _kernels():
    return importlib.import_module("emergence.numerics.kernels.copy_head_token_process")


class PersistenceLinearAction:
    r"""Linear attention on the persistence process: :math:`S(c_0, c_G, c_1; P)`, coordinates ``y = (c0, cG, c1)``."""

    attention = "linear"
    coordinates: tuple[str, ...] = ("c0", "cG", "c1")

    def __init__(self, L, V, rho, s1, sG, lam, beta, amplitude: float = 1.0):
        self.kernels, self.L, self.V, self.rho = _kernels(), float(L), float(V), float(rho)
        self.parameters = (float(L), float(V), float(rho), float(s1), float(sG), float(lam), float(beta))
        self.symmetric_point = np.zeros(3)
        self.unit = float(amplitude)
        self.bounds = amplitude * np.array([[-0.5, 1.0], [-0.25, 2.0], [-0.25, 2.0]])

    def value(self, y, P):
        return self.kernels.persistence_linear_action(y[0], y[1], y[2], P, *self.parameters)[0]

    def gradient(self, y, P):
        return np.stack(np.broadcast_arrays(*self.kernels.persistence_linear_action(y[0], y[1], y[2], P, *self.parameters)[1:]))

    def hessian(self, y, P):
        h = np.broadcast_arrays(*self.kernels.persistence_linear_action_hessian(y[0], y[1], y[2], P, *self.parameters))
        index = {(0, 0): 0, (0, 1): 1, (0, 2): 2, (1, 1): 3, (1, 2): 4, (2, 2): 5}
        return np.stack([np.stack([h[index[(min(i, j), max(i, j))]] for j in range(3)]) for i in range(3)])

    @staticmethod
    def canonical(y):
        """The representative of the ``G -> -G`` pair with non-negative row sum."""
        return y * np.where(np.asarray(y[0] + y[1] + y[2]) < 0, -1.0, 1.0)

    def order_parameters(self, y):
        r"""``(c1, cG)`` of the Frobenius projection of A onto span{J/L, S} (the self part projects as
        :math:`I \to J/L\cdot L/(L-1) - S/(L-1)`), canonical sign."""
        c0, cG, c1 = self.canonical(np.asarray(y, dtype=float))
        L = self.L
        return c1 + c0 * L / (L - 1), cG - c0 / (L - 1)

    def self_attention(self, y):
        """c0 (canonical sign)."""
        return self.canonical(np.asarray(y, dtype=float))[0]

    def test_loss(self, y, P):
        c0, cG, c1 = self.canonical(np.asarray(y, dtype=float))
        L, V, rho, _, _, lam, beta = self.parameters
        return self.kernels.persistence_linear_posterior_test_loss(c0, cG, c1, P, L, V, rho, lam, beta)

    def start_axes(self, points: int = 12) -> tuple[np.ndarray, ...]:
        axes = []
        for low, high in self.bounds:
            positive = np.geomspace(1e-3 * self.unit, high, points)
            negative = -np.geomspace(1e-3 * self.unit, -low, max(points // 3, 2))[::-1]
            axes.append(np.concatenate([negative, [0.0], positive]))
        return tuple(axes)


class PersistenceSoftmaxAction:
    r"""Softmax attention on the persistence process in the logit gaps ``y = (g0, gG)`` over the other L - 2 positions.

    :math:`a_i = e^{g_i}/(e^{g_0} + e^{g_G} + L - 2)`; the chain rule uses the softmax Jacobian
    :math:`\partial a_i/\partial g_j = a_i(\delta_{ij} - a_j)`.
    """

    attention = "softmax"
    coordinates: tuple[str, ...] = ("g0", "gG")
    symmetric_point = None

    def __init__(self, L, V, rho, sG, lam, beta):
        if L < 4:
            raise EmergenceError(f"the two-parameter softmax family needs L >= 4, got L={L}")
        self.kernels, self.L, self.V, self.rho = _kernels(), float(L), float(V), float(rho)
        self.parameters = (float(L), float(V), float(rho), float(sG), float(lam), float(beta))
        self.unit = 1.0
        self.bounds = np.array([[-6.0, 8.0 + np.log(L)], [-6.0, 8.0 + np.log(L)]])

    def weights(self, y):
        """``(a0, aG)`` of the gaps ``y``."""
        g = np.asarray(y, dtype=float)
        top = np.maximum(np.maximum(g[0], g[1]), 0.0)
        e0, eG, rest = np.exp(g[0] - top), np.exp(g[1] - top), (self.L - 2) * np.exp(-top)
        total = e0 + eG + rest
        return e0 / total, eG / total

    def value(self, y, P):
        a0, aG = self.weights(y)
        return self.kernels.persistence_softmax_action(a0, aG, P, *self.parameters)[0]

    def gradient_and_hessian(self, y, P):
        r"""Gradient and Hessian in the gaps: :math:`H = J^TS_{aa}J + \sum_i S_{a_i}\partial^2a_i`, with
        :math:`\partial_j\partial_k a_i = a_i(\delta_{ik}-a_k)(\delta_{ij}-a_j) - a_ia_j(\delta_{jk}-a_k)`."""
        a = np.stack(np.broadcast_arrays(*self.weights(y), np.asarray(P, dtype=float)))[:2]
        shape = a.shape[1:]
        a = a.reshape(2, -1)
        out = self.kernels.persistence_softmax_action(a[0], a[1], P if np.ndim(P) == 0 else np.broadcast_to(P, shape).ravel(),
                                                      *self.parameters)
        PP = P if np.ndim(P) == 0 else np.broadcast_to(P, shape).ravel()
        first = np.stack(np.broadcast_arrays(*out[1:], a[0]))[:2]
        h00, h0G, hGG = np.broadcast_arrays(*self.kernels.persistence_softmax_action_hessian(a[0], a[1], PP, *self.parameters), a[0])[:3]
        second = np.stack([np.stack([h00, h0G]), np.stack([h0G, hGG])])
        delta = np.eye(2)[:, :, None]
        jacobian = a[:, None] * (delta - a[None, :])  # [i, j] = d a_i / d g_j
        gradient = np.einsum("in,ijn->jn", first, jacobian)
        curvature = np.einsum("ijn,iln,lkn->jkn", jacobian, second, jacobian)
        term = (np.einsum("in,ikn,ijn->ijkn", a, delta - a[None, :], delta - a[None, :])
                - np.einsum("in,jn,jkn->ijkn", a, a, delta - a[None, :]))
        hessian = curvature + np.einsum("in,ijkn->jkn", first, term)
        return gradient.reshape((2,) + shape), hessian.reshape((2, 2) + shape)

    def gradient(self, y, P):
        return self.gradient_and_hessian(y, P)[0]

    def hessian(self, y, P):
        return self.gradient_and_hessian(y, P)[1]

    @staticmethod
    def canonical(y):
        return y

    def order_parameters(self, y):
        """``(c1, cG)`` of the Frobenius projection onto span{J/L, S} (rows sum to one)."""
        return softmax_order_parameters(self.weights(y)[1], self.L)

    def self_attention(self, y):
        """a0."""
        return self.weights(y)[0]

    def test_loss(self, y, P):
        a0, aG = self.weights(y)
        L, V, rho, _, lam, beta = self.parameters
        return self.kernels.persistence_softmax_posterior_test_loss(a0, aG, P, L, V, rho, lam, beta)

    def start_axes(self, points: int = 40) -> tuple[np.ndarray, ...]:
        return tuple(np.linspace(low, high, points) for low, high in self.bounds)


def token_process_action(attention: str, L, V, process: TokenProcess, convention=None):
    """The reduced action of ``attention`` at sizes ``L, V`` on ``process`` (model T, the default convention unless given)."""
    convention = convention if convention is not None else default_convention()
    if process.kind == "iid":
        return reduced_action(attention, L, V, convention)
    if process.kind == "zipf":
        return ZipfAction(reduced_action(attention, L, V, convention), process.unigram(int(V)))
    scales = model_scales(generated_kernels(), attention, L, V, convention)
    rho = process.parameter if process.kind == "markov" else 0.0
    if attention == "linear":
        # A = G / L**k is L**(1 - k) times the A = G/L attention: the search box scales with it.
        amplitude = float(L) ** (1 - convention.attention_normalisation_exponent)
        s1, sG, lam, beta = scales
        action: PersistenceLinearAction | PersistenceSoftmaxAction = PersistenceLinearAction(L, V, rho, s1, sG, lam, beta, amplitude)
    else:
        sG, lam, beta = scales
        action = PersistenceSoftmaxAction(L, V, rho, sG, lam, beta)
    if process.kind == "corpus":
        # the rho = 0 (i.i.d.) action with its data term on the measured lag joints
        action.kernels = LagJointKernels(action.kernels, attention, process.joints(int(L), int(V)),
                                        TokenProcess("iid").joints(int(L), int(V)), beta, lam)
    return action


class ZipfAction:
    r"""The i.i.d. reduced action with its data term evaluated on a unigram :math:`\pi` (no correlation).

    :math:`S_\pi = S_{\rm iid} - S_{\rm data}(q,m,r,n;\,\mathbf 1/V) + S_{\rm data}(q,m,r,n;\,\pi)`, with
    :math:`C_1 = q(\operatorname{diag}\pi - \pi\pi^T) + r\pi\pi^T`, :math:`B_1 = m(\cdots) + n\pi\pi^T`,
    :math:`D_1 = L\operatorname{diag}\pi` (V x V, :func:`readout_action`).  The gradient is the kernel's
    plus the difference of the two data terms' gradients (matrix calculus, :meth:`_data`); the Hessian
    is the kernel's plus central differences of that difference (relative step 1e-5).
    """

    def __init__(self, base, unigram: np.ndarray):
        self.base, self.pi = base, np.asarray(unigram, dtype=float)
        self.attention, self.coordinates, self.L, self.V = base.attention, base.coordinates, base.L, base.V
        self.bounds, self.symmetric_point = base.bounds, base.symmetric_point
        self.unit = getattr(base, "unit", 1.0)
        self.lam, self.beta = base.parameters[-2], base.parameters[-1]

    def _invariants(self, y):
        """``(q, m, r, n)`` and their derivatives ``(4, k, ...)`` in the coordinates."""
        L, y = self.L, np.asarray(y, dtype=float)
        if self.attention == "linear":
            c1, cG = y[0], y[1]
            u = c1 + cG
            values = (c1**2 + 2 * c1 * cG + L * cG**2, c1 + L * cG, L * u**2, L * u)
            derivatives = ((2 * u, 2 * c1 + 2 * L * cG), (1 + 0 * u, L + 0 * u), (2 * L * u, 2 * L * u), (L + 0 * u, L + 0 * u))
            return values, np.array([np.stack(np.broadcast_arrays(*d)) for d in derivatives])
        a = self.base.attention_on_previous(y[0])
        w = a * (1 - a)  # da/du
        values = (L * (a**2 + (1 - a) ** 2 / (L - 1)), L * a, L + 0 * a, L + 0 * a)
        slopes = ((L * (2 * a - 2 * (1 - a) / (L - 1)) * w,), (L * w,), (0 * a,), (0 * a,))  # one coordinate
        return values, np.array([np.stack(d) for d in slopes])

    def _data(self, y, P, pi):
        r"""The data term on unigram ``pi`` and its gradient in the coordinates (matrix calculus:
        :math:`dS = \tfrac V2\varepsilon\operatorname{tr}(K^{-1}dC) - \tfrac{\beta^2\lambda}{2}[2\operatorname{tr}(B^TK^{-1}dB)
        - \varepsilon\operatorname{tr}(B^TK^{-1}dC\,K^{-1}B)]`, :math:`K = I + \varepsilon C`, :math:`\varepsilon = \beta\lambda`)."""
        (q, m, r, n), jacobian = self._invariants(y)
        q, m, r, n = (np.asarray(v, dtype=float)[..., None, None] for v in (q, m, r, n))
        P = np.asarray(P, dtype=float)[..., None, None]
        spread, outer = np.diag(pi) - np.outer(pi, pi), np.outer(pi, pi)
        C, B = P * (q * spread + r * outer), P * (m * spread + n * outer)
        value = readout_action(C, B, P * self.L * np.diag(pi) + 0 * q, self.beta, self.lam)
        epsilon, V = self.beta * self.lam, len(pi)
        K = np.eye(V) + epsilon * C
        Kinv = np.linalg.inv(K)
        solved = Kinv @ B
        partial = []
        for direction in (spread, outer):
            dC = P * direction
            partial.append(V / 2 * epsilon * np.einsum("...uv,...vu->...", Kinv, dC)
                           + self.beta**2 * self.lam / 2 * epsilon * np.einsum("...uv,...uw,...wv->...", solved, dC, solved))
        by_B = [-self.beta**2 * self.lam * np.einsum("...uv,...uv->...", solved, P * direction) for direction in (spread, outer)]
        by_invariant = np.stack([partial[0], by_B[0], partial[1], by_B[1]])  # d/d(q, m, r, n)
        return value, np.einsum("i...,ik...->k...", by_invariant, jacobian)

    def _shift(self, y, P):
        """(value, gradient) of S_data(pi) - S_data(uniform)."""
        uniform = np.full(len(self.pi), 1.0 / len(self.pi))
        value, gradient = self._data(y, P, self.pi)
        value0, gradient0 = self._data(y, P, uniform)
        return value - value0, gradient - gradient0

    def value(self, y, P):
        return self.base.value(y, P) + self._shift(np.asarray(y, dtype=float), P)[0]

    def gradient(self, y, P):
        return self.base.gradient(y, P) + self._shift(y, P)[1]

    def hessian(self, y, P):
        y = np.asarray(y, dtype=float)
        columns = []
        for j in range(y.shape[0]):
            step = 1e-5 * (1.0 + np.abs(y[j]))
            up, down = y.copy(), y.copy()
            up[j] += step
            down[j] -= step
            columns.append((self._shift(up, P)[1] - self._shift(down, P)[1]) / (2 * step))
        return self.base.hessian(y, P) + np.stack(columns, axis=1)

    def canonical(self, y):
        return self.base.canonical(y)

    def order_parameters(self, y):
        return self.base.order_parameters(y)

    def test_loss(self, y, P):
        """The i.i.d. posterior-mean loss (the Zipf loss is not derived yet; the record says so)."""
        return self.base.test_loss(y, P)

    def start_axes(self, points: int | None = None):
        return self.base.start_axes() if points is None else self.base.start_axes(points)


def copy_transition(attention: str, L: int, V: int, process: TokenProcess, P, convention=None) -> dict:
    r"""The copy transition of ``attention`` on ``process`` over the grid ``P``, and its type.

    Softmax: ``first order`` when the global minimum jumps (``P_star``, ``spinodals``, the landing
    :math:`a_G` and :math:`a_0` on either side), else ``continuous`` with ``onset``: the steepest rise of
    :math:`c_G` in :math:`\ln P` (:func:`~.crossover.copy_onset`).  Linear: the second-order point
    ``P1`` and the copy ``crossover`` of :func:`~.phase_diagram.phase_diagram`.
    """
    from emergence.numerics.copy_head.crossover import copy_onset
    from emergence.numerics.copy_head.phase_diagram import phase_diagram

    action = token_process_action(attention, L, V, process, convention)
    P = np.asarray(P, dtype=float)
    diagram = phase_diagram(action, P)
    y, _ = diagram.minima.global_minimum()
    a_G = (diagram.c1 + L * diagram.cG) / L
    own = getattr(action, "self_attention", None)
    a_0 = own(y) if own is not None else np.full_like(a_G, np.nan)
    record = {"tokens": process.label(), "attention": attention, "L": L, "V": V, **diagram.transitions}
    if attention == "linear":
        return record | {"type": "second order + crossover" if diagram.transitions["P1"] else "none on the grid"}
    if diagram.transitions["P_star"] is None:
        return record | {"type": "continuous", "onset": copy_onset(action, P, y)}
    i = int(np.searchsorted(P, diagram.transitions["P_star"]))
    return record | {"type": "first order", "aG_jump": [float(a_G[i - 1]), float(a_G[i])],
                     "a0_jump": [float(a_0[i - 1]), float(a_0[i])]}
