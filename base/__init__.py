"""Ground floor: what every layer shares and no layer owns.

:mod:`emergence.base.errors` (the exception family the command line reports in one line),
:mod:`emergence.base.io` (atomic result files, provenance), :mod:`emergence.base.progress`
(progress bars and logging), :mod:`emergence.base.limits` (size limits),
:mod:`emergence.base.sweeps` (the resumable sweep store), :mod:`emergence.base.executors`
(local and Dask executors) and :mod:`emergence.base.runtime` (torch threads and devices).
Every layer may import it; it imports no layer, and no SymPy.
"""
