"""Every docstring example of the engine runs, one test per module, under its installed name.

The science layers live in the folders ``theory/``, ``numerics/`` and ``validation/`` but are
imported as ``emergence.theory`` and so on; collecting their doctests by file path would
import each module a second time under a bare top-level name, so they are run from here.
The benchmark modules are not installed and are imported from the checkout.
"""

import doctest
import importlib
import pkgutil
import sys
from pathlib import Path

import pytest

ENGINE_PACKAGES = ("emergence", "emergence.theory", "emergence.numerics", "emergence.validation")
CHECKOUT = Path(__file__).resolve().parents[1]


def engine_modules() -> list[str]:
    """Dotted names of every module of the installed engine, plus the checkout's benchmarks."""
    names = set(ENGINE_PACKAGES)
    for package in ENGINE_PACKAGES:
        module = importlib.import_module(package)
        names.update(info.name for info in pkgutil.walk_packages(module.__path__, package + "."))
    if str(CHECKOUT) not in sys.path:
        sys.path.insert(0, str(CHECKOUT))
    benchmarks = importlib.import_module("benchmarks")
    names.add("benchmarks")
    names.update(info.name for info in pkgutil.walk_packages(benchmarks.__path__, "benchmarks."))
    return sorted(names - {"emergence.__main__"})


@pytest.mark.parametrize("name", engine_modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(module, name, globs=vars(module).copy()):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples of {name} failed (output above)"
