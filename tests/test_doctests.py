"""Every docstring example of the engine runs, one test per module, under its import name.

The layer folders ``theory/``, ``numerics/``, ``validation/``, ``base/`` and ``benchmarks/`` are
reached through their links in ``emergence/``; collecting their doctests by file path would
import each module a second time under a bare top-level name, so they are run from here.
"""

import doctest
import importlib
import pkgutil

import pytest


def engine_modules() -> list[str]:
    """Dotted names of every module of the ``emergence`` package (with the checkout's benchmarks)."""
    import emergence

    names = {"emergence"} | {info.name for info in pkgutil.walk_packages(emergence.__path__, "emergence.")}
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
