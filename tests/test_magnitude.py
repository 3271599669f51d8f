"""Scale-free cosines and relative errors: the same value at every finite magnitude, 1e-300 to 1e300."""

import numpy as np
import pytest
import torch
from hypothesis import assume, example, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from emergence.numerics.magnitude import cosine, largest_magnitude
from emergence.validation.leading_terms.experiment import frobenius_cosine, project_off, relative_error

vectors = arrays(np.float64, st.integers(2, 16), elements=st.floats(-10, 10, allow_nan=False))
exponents = st.floats(-300, 300)


@given(vectors, vectors, exponents, exponents)
@example(np.ones(4), np.ones(4), -200.0, -200.0)  # |x|^2 underflowed to 0: cosine was None
@example(np.ones(4), np.ones(4), 200.0, -200.0)  # |x||y| overflowed
def test_cosine_is_scale_invariant(x, y, ex, ey):
    n = min(len(x), len(y))
    x, y = x[:n], y[:n]
    assume(np.abs(x).max() > 1e-3 and np.abs(y).max() > 1e-3)
    reference = float(x @ y / np.sqrt((x @ x) * (y @ y)))
    assert cosine(x * 10.0**ex, y * 10.0**ey) == pytest.approx(reference, abs=1e-12)
    assert frobenius_cosine(torch.from_numpy(x * 10.0**ex), torch.from_numpy(y * 10.0**ey)) == pytest.approx(
        reference, abs=1e-12
    )


@pytest.mark.parametrize("value", [1e-300, 1e-200, 5.64195638e-159, 1e154, 1e300])
def test_relative_error_and_projection_at_extreme_magnitudes(value):
    predicted = torch.full((3, 3), value, dtype=torch.float64)
    assert relative_error(2 * predicted, predicted) == pytest.approx(1.0)
    assert frobenius_cosine(predicted, -predicted) == pytest.approx(-1.0)
    # W - (<W, u>/<u, u>) u with W = D: both dot products of n = 9 positive terms are within
    # n eps of exact, so every entry of the residual is within (2n + 3) eps max|W| of zero.  No
    # summation order gives an exact 0 (an AVX-512 BLAS left one rounding unit, -1.5e138 at 1e154).
    residual = project_off(predicted, predicted)
    n = predicted.numel()
    assert float(residual.abs().max()) <= (2 * n + 3) * torch.finfo(torch.float64).eps * value


def test_zero_vectors_have_no_cosine_and_the_scale_is_per_matrix():
    assert cosine(np.zeros(3), np.ones(3)) is None
    # exact by design: the largest |x| is one of the inputs
    assert largest_magnitude(np.array([[[0.0, -2.0], [1.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]])).tolist() == [2.0, 0.0]
