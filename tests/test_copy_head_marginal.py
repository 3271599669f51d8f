"""Step 1: the V x V readout marginal against the dense PL x PL Gaussian-process evidence."""

import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.theory.copy_head.marginal import B, C, D, readout_marginal
from emergence.theory.copy_head.symbols import V, beta, lam


def one_hot_sequences(rng, P, L, V):
    tokens = rng.integers(0, V, size=(P, L))
    return np.eye(V)[tokens]  # (P, L, V)


def shift_matrix(L, shift="cyclic"):
    S = np.zeros((L, L))
    for row in range(1, L):
        S[row, row - 1] = 1.0
    if shift == "cyclic":
        S[0, L - 1] = 1.0
    return S


def dense_negative_log_evidence(Phi, Y, beta_value, lam_value):
    """-sum_v ln N(y_v; 0, I/beta + lam Phi Phi^T), the W-integral done in PL dimensions."""
    N = Phi.shape[0]
    K = np.eye(N) / beta_value + lam_value * Phi @ Phi.T
    _, logdet = np.linalg.slogdet(K)
    quadratic = np.sum(Y * np.linalg.solve(K, Y))
    return 0.5 * quadratic + 0.5 * Y.shape[1] * (logdet + N * np.log(2 * np.pi))


def reduced_action(Phi, Y, beta_value, lam_value):
    """The SymPy step-1 action with the numeric C, B, D substituted and evaluated by SymPy."""
    size = Phi.shape[1]
    sized_symbol = {name: sp.MatrixSymbol(name, size, size) for name in (C.name, B.name, D.name)}
    matrices = {sized_symbol["C"]: sp.Matrix(Phi.T @ Phi), sized_symbol["B"]: sp.Matrix(Phi.T @ Y),
                sized_symbol["D"]: sp.Matrix(Y.T @ Y), sp.Identity(size): sp.eye(size)}
    scalars = {V: size, beta: sp.Float(beta_value, 30), lam: sp.Float(lam_value, 30)}
    sized = readout_marginal()["action"].subs(V, size)
    return float(sp.N(sized.xreplace(matrices).subs(scalars).doit(), 20))


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    L=st.integers(2, 6),
    V=st.integers(2, 5),
    P=st.integers(1, 5),
    beta_value=st.floats(0.05, 5.0),
    lam_value=st.floats(0.05, 5.0),
    shift=st.sampled_from(["cyclic", "open"]),
)
def test_reduced_marginal_equals_dense_evidence(seed, L, V, P, beta_value, lam_value, shift):
    rng = np.random.default_rng(seed)
    X = one_hot_sequences(rng, P, L, V)
    A = rng.normal(size=(L, L))
    S = shift_matrix(L, shift)
    Phi = np.concatenate([A @ x for x in X])
    Y = np.concatenate([S @ x for x in X])
    dense = dense_negative_log_evidence(Phi, Y, beta_value, lam_value)
    constant = 0.5 * Phi.shape[0] * V * np.log(2 * np.pi / beta_value)
    reduced = reduced_action(Phi, Y, beta_value, lam_value) + constant
    assert abs(dense - reduced) <= 1e-9 * max(1.0, abs(dense))


def test_hessian_and_field_are_the_gaussian_integral_data():
    marginal = readout_marginal()
    assert str(marginal["hessian"]) == "(beta*lam)*C + I"
    assert str(marginal["field"]) == "beta*b"
