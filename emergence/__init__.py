"""emergence: a symbolic-numeric theory engine for how attention learns.

The importable science lives in three layers on a ground floor, under the interface, with imports
pointing one way::

    cli  ->  demo  ->  api  ->  records  ->  report  ->  validation  ->  numerics  ->  theory  ->  base

``theory`` derives (SymPy), ``numerics`` evaluates (generated array kernels, corpus
statistics, solvers, mpmath asymptotics), ``validation`` trains torch models and decides the
verdicts, and ``base`` holds what they share (errors, atomic IO, progress, limits, sweeps,
executors, runtime).  The interface sits on top: the Python API (:mod:`emergence.api`) and its
records (:mod:`emergence.records`) here, the report writer, figures and status page in
:mod:`emergence.report`, the demo in :mod:`emergence.demo`, the command line in :mod:`emergence.cli`.

The API's functions (``emergence.api.__all__``) are attributes of the package; each imports the
layers it needs when it is called, so that ``import emergence`` stays light (no torch, matplotlib,
hypothesis or SymPy)::

    >>> import emergence
    >>> diagram = emergence.phase_diagram("softmax", 64, 8)     # doctest: +SKIP
    >>> diagram.transitions["P_star"]                          # doctest: +SKIP
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("emergence")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.1.0+source"

from emergence.api import __all__ as _public_api  # noqa: E402  (light: the API imports its layers on first call)

API = tuple(_public_api)
"""The names of :mod:`emergence.api` offered at the top of the package: its ``__all__``."""

__all__ = ["__version__", *API]


def __getattr__(name: str):
    if name in API:
        from emergence import api

        return getattr(api, name)
    raise AttributeError(f"module 'emergence' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(API))
