"""Array-module selection: NumPy by default, CuPy only when asked for and a GPU answers.

This module never imports an optional framework on its own: :func:`array_module` imports
CuPy only when the caller asks for it by name, and :func:`namespace_of` asks
``array_api_compat.array_namespace`` which library the given arrays belong to (it recognises
a CuPy array without importing CuPy, and raises ``TypeError`` on anything that is not an
array of a library it knows, rather than falling back to NumPy).

>>> array_module("numpy").__name__
'numpy'
>>> import numpy as np
>>> namespace_of(np.zeros(3), 2.0).__name__
'numpy'
>>> namespace_of([1.0, 2.0])
Traceback (most recent call last):
...
TypeError: list is not a supported array type
>>> to_numpy(np.arange(3))
array([0, 1, 2])
>>> array_module("tensorflow")
Traceback (most recent call last):
...
emergence.base.errors.BackendUnavailableError: unknown array backend 'tensorflow'; choose numpy or cupy
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

import numpy
from array_api_compat import array_namespace, is_cupy_array, to_device

from emergence.base.errors import BackendUnavailableError

BACKEND_NAMES: tuple[str, ...] = ("numpy", "cupy")


def cupy_status() -> tuple[bool, str]:
    """Whether CuPy can allocate on a GPU here, and why not if it cannot.

    ``import cupy`` can succeed on a CPU machine while every allocation raises
    ``CUDARuntimeError``; only a real allocation answers the question.
    """
    if importlib.util.find_spec("cupy") is None:
        return False, "CuPy is not installed (pip install 'emergence[gpu]')"
    try:
        cupy = importlib.import_module("cupy")
        probe = cupy.zeros(1)
        probe += 1
        cupy.cuda.Stream.null.synchronize()
    except Exception as error:  # any CUDA runtime/driver failure means "no usable GPU"
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return False, f"CuPy is installed but no GPU answered ({first_line})"
    return True, "ok"


def array_module(name: str = "numpy") -> ModuleType:
    """The array module called ``name``; raises :class:`BackendUnavailableError` if unusable."""
    if name == "numpy":
        import numpy

        return numpy
    if name == "cupy":
        usable, reason = cupy_status()
        if not usable:
            raise BackendUnavailableError(f"backend 'cupy' requested but unavailable: {reason}")
        return importlib.import_module("cupy")
    raise BackendUnavailableError(
        f"unknown array backend {name!r}; choose {' or '.join(BACKEND_NAMES)}"
    )


def namespace_of(*arrays) -> ModuleType:
    """The array library of ``arrays`` (Python scalars among them are ignored).

    The library itself (``numpy``, ``cupy``, ``array_api_strict``), as :func:`array_module`
    returns it, not a compatibility wrapper; ``TypeError`` when an argument is not an array of a
    known library or the arrays belong to different libraries.
    """
    return array_namespace(*arrays, use_compat=False)


def to_numpy(array) -> numpy.ndarray:
    """A NumPy array with the values of ``array``, from any library (copied to the host from a GPU).

    ``TypeError`` when ``array`` is not an array of a known library.
    """
    namespace_of(array)
    host = to_device(array, "cpu") if is_cupy_array(array) else array
    return numpy.asarray(host)
