"""Array-backend selection: NumPy default, CuPy only with a GPU that answers."""

import array_api_strict
import numpy as np
import pytest

from emergence.numerics.backend import array_module, cupy_status, namespace_of, to_numpy
from emergence.base.errors import BackendUnavailableError


def test_numpy_is_the_default():
    assert array_module() is np


def test_unknown_backend_is_a_one_line_error():
    with pytest.raises(BackendUnavailableError) as error:
        array_module("jax")
    assert "\n" not in str(error.value) and "numpy or cupy" in str(error.value)


def test_cupy_without_a_gpu_is_a_clear_error():
    usable, reason = cupy_status()
    if usable:
        assert array_module("cupy").__name__ == "cupy"
    else:
        with pytest.raises(BackendUnavailableError) as error:
            array_module("cupy")
        assert "\n" not in str(error.value) and reason in str(error.value)


def test_namespace_of_gives_the_library_itself_and_ignores_scalars():
    assert namespace_of(np.ones(2), 3.0) is np
    assert namespace_of(array_api_strict.asarray([1.0])) is array_api_strict
    np.testing.assert_array_equal(to_numpy(array_api_strict.asarray([1.0, 2.0])), np.array([1.0, 2.0]))  # exact by design: a copy


@pytest.mark.parametrize("not_an_array", [[1, 2], (1.0,), "text", 1.0, object()])
def test_unknown_array_types_raise_instead_of_falling_back_to_numpy(not_an_array):
    with pytest.raises(TypeError):
        namespace_of(not_an_array)
    with pytest.raises(TypeError):
        to_numpy(not_an_array)


def test_arrays_of_two_libraries_have_no_one_namespace():
    with pytest.raises(TypeError, match="Multiple namespaces"):
        namespace_of(np.ones(2), array_api_strict.asarray([1.0]))


@pytest.mark.gpu
def test_cupy_allocates_and_round_trips():
    cupy = array_module("cupy")
    values = cupy.arange(5, dtype=cupy.float64) ** 2
    assert namespace_of(values) is cupy
    np.testing.assert_array_equal(to_numpy(values), np.arange(5.0) ** 2)  # exact by design: squares of small integers
