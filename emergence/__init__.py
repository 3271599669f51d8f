"""emergence: a symbolic-numeric theory engine for how attention learns.

The importable science lives in three layers, with imports pointing one way::

    validation  ->  numerics  ->  theory

``theory`` derives (SymPy), ``numerics`` evaluates (generated array kernels, corpus
statistics, solvers, mpmath asymptotics), ``validation`` trains torch models.  This
package holds only the command line and the report that sit on top.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("emergence")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.1.0+source"
