"""Order parameters of attention matrices: fixed points, sum rules and projection identities."""

import numpy as np
import pytest
import torch
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from emergence.numerics.order_parameters import (
    copy_order_parameters,
    cyclic_shift,
    open_shift,
    symmetric_part,
)
from emergence.base.errors import InvalidSizeError

sizes = st.integers(min_value=2, max_value=12)


def matrices(L, batch=()):
    return arrays(
        np.float64,
        (*batch, L, L),
        elements=st.floats(-10, 10, allow_nan=False, allow_infinity=False),
    )


@given(sizes, st.floats(-3, 3), st.floats(-3, 3))
def test_projection_recovers_exact_coefficients(L, c1, cG):
    A = c1 * np.ones((L, L)) / L + cG * cyclic_shift(L)
    order = copy_order_parameters(A)
    assert order.c1 == pytest.approx(c1, abs=1e-12)
    assert order.cG == pytest.approx(cG, abs=1e-12)
    if abs(c1) + abs(cG) > 1e-6:
        assert order.coverage == pytest.approx(1.0, abs=1e-12)


@given(sizes)
def test_pure_copy_and_uniform_pooling(L):
    copy = copy_order_parameters(cyclic_shift(L))
    assert (float(copy.c1), float(copy.cG), float(copy.aG)) == pytest.approx((0, 1, 1), abs=1e-12)
    uniform = copy_order_parameters(np.full((L, L), 1.0 / L))
    assert (float(uniform.c1), float(uniform.cG)) == pytest.approx((1, 0), abs=1e-12)
    assert float(uniform.aG) == pytest.approx(1 / L)
    assert float(uniform.coverage) == pytest.approx(1.0)


@given(sizes.flatmap(lambda L: matrices(L, (3,))))
@example(np.full((3, 3, 3), 5.64195638e-159))  # squared norms underflowed: coverage 1.0000000172
@example(np.full((1, 3, 3), 1e-200))  # ... and 0.0
def test_residual_is_orthogonal_to_J_and_S(A):
    L = A.shape[-1]
    residual = A - symmetric_part(A)
    np.testing.assert_allclose(residual.sum(axis=(-2, -1)), 0, atol=1e-9 * (1 + np.abs(A).sum()))
    np.testing.assert_allclose(
        (residual * cyclic_shift(L)).sum(axis=(-2, -1)), 0, atol=1e-9 * (1 + np.abs(A).sum())
    )
    # Pythagoras: ||A||^2 = ||projection||^2 + ||residual||^2, hence coverage in [0, 1]
    order = copy_order_parameters(A)
    assert np.all((order.coverage >= -1e-12) & (order.coverage <= 1 + 1e-12))
    projected = (symmetric_part(A) ** 2).sum(axis=(-2, -1))
    norm2 = (A**2).sum(axis=(-2, -1))
    np.testing.assert_allclose(
        projected + (residual**2).sum(axis=(-2, -1)), norm2, rtol=1e-9, atol=1e-9
    )


@settings(max_examples=20)
@given(sizes, st.integers(1, 4), st.floats(0.1, 20))
def test_softmax_rows_satisfy_sum_rule_in_torch(L, batch, scale):
    generator = torch.Generator().manual_seed(L * 31 + batch)
    logits = scale * torch.randn(batch, L, L, generator=generator, dtype=torch.float64)
    A = torch.softmax(logits, dim=-1)
    order = copy_order_parameters(A)
    torch.testing.assert_close(order.c1 + order.cG, torch.ones(batch, dtype=torch.float64))
    torch.testing.assert_close(order.a1, 1 - order.cG)
    # a_G is the mean attention on the previous token
    previous = torch.stack([A[:, i, (i - 1) % L] for i in range(L)], dim=-1).mean(-1)
    torch.testing.assert_close(order.aG, previous)
    assert torch.all((order.coverage >= 0) & (order.coverage <= 1 + 1e-12))


@given(
    sizes.flatmap(lambda L: matrices(L, (2,))),
    st.floats(-300, 300).filter(lambda e: e != 0),
)
@example(np.full((2, 3, 3), 1.0), np.log10(5.64195638e-159))
@example(np.full((2, 3, 3), 1.0), -200.0)
@example(np.full((2, 3, 3), 1.0), 300.0)
def test_order_parameters_are_scale_covariant_from_1e_minus_300_to_1e300(A, exponent):
    """c1, cG, n_J, m scale with A; the coverage does not change, at any finite magnitude."""
    scale = 10.0**exponent
    # each matrix is O(1) and the scale sets its magnitude (a 1e-95 matrix times 1e-230 underflows to 0)
    assume(np.all(np.abs(A).max(axis=(-2, -1)) > 1e-3))
    unit, scaled = copy_order_parameters(A), copy_order_parameters(A * scale)
    np.testing.assert_allclose(scaled.coverage, unit.coverage, rtol=1e-12, atol=1e-12)
    for field in ("c1", "cG", "n_J", "m"):
        expected = getattr(unit, field) * scale
        np.testing.assert_allclose(getattr(scaled, field), expected, rtol=1e-9, atol=1e-9 * scale * np.abs(A).max())
    assert np.all((scaled.coverage >= 0) & (scaled.coverage <= 1 + 1e-12))


@pytest.mark.parametrize("value", [5.64195638e-159, 1e-200, 1e-300, 5e-324, 1e300, 1e154, 1e-154])
def test_constant_matrix_is_fully_covered_at_any_magnitude(value):
    for A in (np.full((3, 3), value), torch.full((2, 4, 4), value, dtype=torch.float64)):
        # exact by design: the scaled entries are exactly 1, so every sum is a small integer
        assert np.all(np.asarray(copy_order_parameters(A).coverage) == 1.0)


def test_torch_and_numpy_agree_and_gradients_flow():
    A = torch.randn(2, 3, 5, 5, dtype=torch.float64, requires_grad=True)
    order = copy_order_parameters(A)
    reference = copy_order_parameters(A.detach().numpy())
    np.testing.assert_allclose(order.cG.detach().numpy(), reference.cG, rtol=1e-12)
    np.testing.assert_allclose(order.coverage.detach().numpy(), reference.coverage, rtol=1e-12)
    order.cG.sum().backward()
    assert A.grad is not None and torch.isfinite(A.grad).all()


def test_zero_matrix_has_zero_coverage_and_bad_shapes_fail():
    assert float(copy_order_parameters(np.zeros((4, 4))).coverage) == 0.0  # exact by design: 0 / (0 + 1)
    with pytest.raises(InvalidSizeError):
        copy_order_parameters(np.zeros((3, 4)))
    with pytest.raises(InvalidSizeError):
        copy_order_parameters(np.zeros((1, 1)))


def test_open_shift_is_cyclic_shift_without_the_corner():
    L = 5
    difference = cyclic_shift(L) - open_shift(L)
    assert difference.sum() == 1 and difference[0, L - 1] == 1  # exact by design: sums of 0/1 entries


def test_copy_fraction_is_the_squared_cosine_with_the_shift():
    """cos²(A, S) against its definition on dense matrices (any scale, a batch, softmax rows)."""
    import numpy as np

    from emergence.numerics.order_parameters import copy_order_parameters, cyclic_shift

    rng = np.random.default_rng(3)
    A = rng.normal(size=(4, 7, 7)) * np.array([1e-200, 1.0, 1e3, 1e200])[:, None, None]
    S = cyclic_shift(7)
    unit = A / np.abs(A).max(axis=(1, 2))[:, None, None]
    expected = np.einsum("bij,ij->b", unit, S) ** 2 / (np.einsum("bij,bij->b", unit, unit) * 7)  # scale-free
    assert np.isclose(expected[1], np.sum(A[1] * S) ** 2 / (np.sum(A[1] ** 2) * np.sum(S * S)))
    assert np.allclose(copy_order_parameters(A).copy_fraction, expected, rtol=1e-12)
    assert float(copy_order_parameters(np.zeros((3, 3))).copy_fraction) == 0.0  # exact by design: 0 / (0 + 1)
