"""Array-module selection: NumPy by default, CuPy only when asked for and a GPU answers.

Like einops' backends, this module never imports an optional framework on its own:
:func:`namespace_of` recognises a CuPy array by its type's module, without importing
CuPy, and :func:`array_module` imports CuPy only when the caller asks for it by name.

>>> array_module("numpy").__name__
'numpy'
>>> import numpy as np
>>> namespace_of(np.zeros(3)).__name__
'numpy'
>>> array_module("tensorflow")
Traceback (most recent call last):
...
emergence.theory.errors.BackendUnavailableError: unknown array backend 'tensorflow'; choose numpy or cupy
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

from emergence.theory.errors import BackendUnavailableError

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
    """The array module the given arrays belong to (NumPy for plain Python numbers)."""
    for array in arrays:
        module = type(array).__module__.split(".")[0]
        if module == "cupy" and "cupy" in sys.modules:
            return sys.modules["cupy"]
        if module == "array_api_strict" and module in sys.modules:
            return sys.modules[module]
    import numpy

    return numpy


def to_numpy(array):
    """A NumPy copy of ``array`` from any backend (``.get()`` for CuPy)."""
    import numpy

    if hasattr(array, "get") and type(array).__module__.startswith("cupy"):
        return array.get()
    return numpy.asarray(array)
