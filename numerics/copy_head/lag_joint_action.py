r"""The copy head's reduced actions on a stationary process given only by its measured lag joints.

A measured process (a corpus read as V classes) has no closed form; it is given by its lag joints
``joints (L, V, V)``, :math:`J_k = \mathbb E[x_\ell x_{\ell-k}^T]`, k = 0 … L − 1 (a window of L tokens sees
no larger lag).  The symmetric attention family of the persistence derivation
(:mod:`emergence.theory.copy_head.token_process`, step 2) is written as

.. math:: A = \alpha I + \gamma S + r J,\qquad
   \text{softmax: } \alpha = a_0 - a_r,\ \gamma = a_G - a_r,\ r = a_r = \tfrac{1-a_0-a_G}{L-2};\quad
   \text{linear: } \alpha = c_0,\ \gamma = c_G,\ r = c_1/L .

With the cyclic shift (:math:`S^TS = I`, :math:`S^TJ = JS = J`, :math:`J^2 = LJ`)

.. math:: A^TA = (\alpha^2+\gamma^2)I + \alpha\gamma(S + S^T) + \kappa J,\quad \kappa = 2r(\alpha+\gamma) + Lr^2,
   \qquad A^TS = \gamma I + \alpha S + rJ,

so the per-sequence Gram matrices of the data term (:func:`~.token_process.data_moments`) are combinations of
four V x V **lag moments** (:func:`lag_moments`, :math:`\mathbb E[X^TMX] = \sum_{\ell\ell'}M_{\ell\ell'}J_{\ell-\ell'}`):

.. math:: Q_I = LJ_0,\quad Q_S = (L-1)J_1 + J_{L-1}^T,\quad
   Q_J = LJ_0 + \sum_{k=1}^{L-1}(L-k)(J_k + J_k^T),

:math:`C_1 = (\alpha^2+\gamma^2)Q_I + \alpha\gamma(Q_S+Q_S^T) + \kappa Q_J`, :math:`B_1 = \gamma Q_I + \alpha Q_S + rQ_J`,
:math:`D_1 = Q_I`.  The action is the persistence action at ρ = 0 (the i.i.d. process: the derived prior plus
the i.i.d. data term) with its data term replaced: :math:`S = S_{\rho=0} - S_{\rm data}(J^{\rm iid}) + S_{\rm data}(J)`.
Gradients in :math:`(a_0, a_G)` or :math:`(c_0, c_G, c_1)` are matrix calculus (:func:`readout_gradient`); the
Hessian of the replaced part is central differences of that gradient (relative step 1e-5).  The tests compare
the action with the brute-force data term of the L x L matrix A and, on exact Markov joints, with the
generated persistence kernels.

>>> joints = np.broadcast_to(np.full((3, 3), 1 / 9), (4, 3, 3)).copy(); joints[0] = np.eye(3) / 3
>>> moments = lag_moments(joints)
>>> [float(np.trace(m)) for m in moments]   # Q_I: L J_0; Q_S: (L-1)J_1 + J_3^T; Q_J: sums to L^2 over all entries
[4.0, 1.3333333333333333, 8.0]
"""

from __future__ import annotations

import numpy as np

from emergence.numerics.copy_head.readout_marginal import readout_action


def lag_moments(joints: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""``(Q_I, Q_S, Q_J)``, each ``(V, V)``: :math:`\mathbb E[X^TMX]` for M = I, S (cyclic), J, from ``joints (L, V, V)``."""
    L = joints.shape[0]
    weights = (L - np.arange(1, L, dtype=float))[:, None, None]
    tail = (weights * joints[1:]).sum(axis=0)
    return L * joints[0], (L - 1) * joints[1] + joints[L - 1].T, L * joints[0] + tail + tail.T


def symmetric_coefficients(attention: str, L: float, y) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`(\alpha, \gamma, r)` of the coordinates ``y`` (softmax ``(a0, aG)``, linear ``(c0, cG, c1)``), shape
    ``(3, ...)``, and their derivatives ``(3, k, ...)`` in the k coordinates."""
    y = [np.asarray(value, dtype=float) for value in y]
    if attention == "softmax":
        a0, aG = np.broadcast_arrays(*y)
        rest = (1 - a0 - aG) / (L - 2)
        values = np.stack([a0 - rest, aG - rest, rest])
        step = 1.0 / (L - 2)
        slopes = np.array([[1 + step, step], [step, 1 + step], [-step, -step]])
        return values, slopes.reshape((3, 2) + (1,) * a0.ndim) * np.ones_like(a0)
    c0, cG, c1 = np.broadcast_arrays(*y)
    slopes = np.diag([1.0, 1.0, 1.0 / L])
    return np.stack([c0, cG, c1 / L]), slopes.reshape((3, 3) + (1,) * c0.ndim) * np.ones_like(c0)


def readout_gradient(C, B, P, matrices_C, matrices_B, beta: float, lam: float):
    r"""The readout action at :math:`(PC, PB, PD)` differentiated along directions of C and B.

    ``matrices_C (m, V, V)``, ``matrices_B (n, V, V)``: :math:`\partial S/\partial c_i` for
    :math:`dC = M_i` and :math:`\partial S/\partial b_j` for :math:`dB = N_j`, shapes ``(m, ...)`` and ``(n, ...)``:
    :math:`\tfrac V2\varepsilon\operatorname{tr}(K^{-1}PM) + \tfrac{\beta^2\lambda}2\varepsilon\operatorname{tr}(Z^TPMZ)`
    and :math:`-\beta^2\lambda\operatorname{tr}(Z^TPN)`, :math:`K = I + \varepsilon PC`, :math:`Z = K^{-1}PB`,
    :math:`\varepsilon = \beta\lambda`."""
    V, epsilon = C.shape[-1], beta * lam
    K = np.eye(V) + epsilon * P * C
    Kinv = np.linalg.inv(K)
    Z = Kinv @ (P * B)
    by_C = np.stack([V / 2 * epsilon * np.einsum("...uv,vu->...", Kinv * P, M)
                     + beta**2 * lam / 2 * epsilon * np.einsum("...uv,uw,...wv->...", Z, M, Z) * P[..., 0, 0]
                     for M in matrices_C])
    by_B = np.stack([-beta**2 * lam * np.einsum("...uv,uv->...", Z, N) * P[..., 0, 0] for N in matrices_B])
    return by_C, by_B


class LagJointData:
    r"""The data term :math:`S_{\rm data}(J)` of the symmetric family on lag joints ``joints (L, V, V)`` and its gradient.

    ``attention`` ``softmax`` (coordinates :math:`a_0, a_G`) or ``linear`` (:math:`c_0, c_G, c_1`).
    """

    def __init__(self, attention: str, joints: np.ndarray, beta: float, lam: float):
        self.attention, self.beta, self.lam = attention, float(beta), float(lam)
        self.L = joints.shape[0]
        Q_I, Q_S, Q_J = lag_moments(np.asarray(joints, dtype=float))
        self.for_C = np.stack([Q_I, Q_S + Q_S.T, Q_J])
        self.for_B = np.stack([Q_I, Q_S, Q_J])

    def matrices(self, y, P):
        """``C, B`` per sequence ``(..., V, V)`` at coordinates ``y``, the coefficients and their slopes, and ``P``,
        all broadcast together."""
        *y, P = np.broadcast_arrays(*[np.asarray(value, dtype=float) for value in y], np.asarray(P, dtype=float))
        (alpha, gamma, r), slopes = symmetric_coefficients(self.attention, self.L, y)
        kappa = 2 * r * (alpha + gamma) + self.L * r**2
        c = np.stack([alpha**2 + gamma**2, alpha * gamma, kappa])
        b = np.stack([gamma, alpha, r])
        C = np.einsum("i...,iuv->...uv", c, self.for_C)
        B = np.einsum("i...,iuv->...uv", b, self.for_B)
        return C, B, c, b, (alpha, gamma, r), slopes, P

    def value(self, y, P):
        C, B, *_, P = self.matrices(y, P)
        P = P[..., None, None]
        D = np.broadcast_to(self.for_B[0], C.shape)
        return readout_action(P * C, P * B, P * D, self.beta, self.lam)

    def gradient(self, y, P):
        """``(k, ...)``: the data term's derivatives in the k coordinates."""
        C, B, c, b, (alpha, gamma, r), slopes, P = self.matrices(y, P)
        P = np.broadcast_to(P[..., None, None], C.shape)
        by_c, by_b = readout_gradient(C, B, P, self.for_C, self.for_B, self.beta, self.lam)
        zero = np.zeros_like(alpha)
        # d(c)/d(alpha, gamma, r) and d(b)/d(alpha, gamma, r), shapes (3 coefficients, 3 parameters, ...)
        dc = np.stack([np.stack([2 * alpha, 2 * gamma, zero]), np.stack([gamma, alpha, zero]),
                       np.stack([2 * r + zero, 2 * r + zero, 2 * (alpha + gamma) + 2 * self.L * r])])
        db = np.stack([np.stack([zero, zero + 1, zero]), np.stack([zero + 1, zero, zero]), np.stack([zero, zero, zero + 1])])
        by_parameter = np.einsum("i...,ij...->j...", by_c, dc) + np.einsum("i...,ij...->j...", by_b, db)
        return np.einsum("j...,jk...->k...", by_parameter, slopes)

    def hessian(self, y, P):
        """``(k, k, ...)``: central differences of :meth:`gradient` (relative step 1e-5)."""
        y = [np.asarray(value, dtype=float) for value in y]
        columns = []
        for j in range(len(y)):
            step = 1e-5 * (1.0 + np.abs(y[j]))
            up = [value + step if i == j else value for i, value in enumerate(y)]
            down = [value - step if i == j else value for i, value in enumerate(y)]
            columns.append((self.gradient(up, P) - self.gradient(down, P)) / (2 * step))
        return np.stack(columns, axis=1)


class LagJointKernels:
    r"""The generated persistence kernels at ρ = 0 with their data term replaced by :class:`LagJointData` on ``joints``.

    Same signatures as the kernels of ``copy_head_token_process`` (the actions call them with ρ = 0), so
    :class:`~.token_process.PersistenceSoftmaxAction` and :class:`~.token_process.PersistenceLinearAction`
    do the chain rule and the search unchanged.  ``iid_joints (L, V, V)`` are the uniform i.i.d. process's (the data
    term the ρ = 0 kernels hold, subtracted).  The posterior test loss stays the i.i.d. one (not derived
    for a measured process; the record says so).
    """

    HESSIAN_ORDER = {"softmax": ((0, 0), (0, 1), (1, 1)),
                     "linear": ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))}

    def __init__(self, base, attention: str, joints: np.ndarray, iid_joints: np.ndarray, beta: float, lam: float):
        self.base, self.attention = base, attention
        self.measured = LagJointData(attention, joints, beta, lam)
        self.iid = LagJointData(attention, iid_joints, beta, lam)

    def _action(self, name, count, arguments):
        """The base kernel's value and gradient plus the replaced data term's (``count`` coordinates first)."""
        y, P = list(arguments[:count]), arguments[count]
        base = getattr(self.base, name)(*arguments)
        shift = (self.measured.value(y, P) - self.iid.value(y, P),
                 *(self.measured.gradient(y, P) - self.iid.gradient(y, P)))
        return tuple(np.asarray(b) + s for b, s in zip(base, shift))

    def _hessian(self, name, count, arguments):
        y, P = list(arguments[:count]), arguments[count]
        base = getattr(self.base, name)(*arguments)
        shift = self.measured.hessian(y, P) - self.iid.hessian(y, P)
        return tuple(np.asarray(b) + shift[i, j] for b, (i, j) in zip(base, self.HESSIAN_ORDER[self.attention]))

    def persistence_softmax_action(self, *arguments):
        return self._action("persistence_softmax_action", 2, arguments)

    def persistence_softmax_action_hessian(self, *arguments):
        return self._hessian("persistence_softmax_action_hessian", 2, arguments)

    def persistence_linear_action(self, *arguments):
        return self._action("persistence_linear_action", 3, arguments)

    def persistence_linear_action_hessian(self, *arguments):
        return self._hessian("persistence_linear_action_hessian", 3, arguments)

    def persistence_softmax_posterior_test_loss(self, *arguments):
        return self.base.persistence_softmax_posterior_test_loss(*arguments)

    def persistence_linear_posterior_test_loss(self, *arguments):
        return self.base.persistence_linear_posterior_test_loss(*arguments)
