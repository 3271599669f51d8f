r"""Cyclomatic complexity (radon) stays small where the house rules put a bound on it.

* ``emergence/cli/commands/``: a command module only parses arguments, calls the API (``emergence/api.py``)
  and prints, so every function in it has complexity at most ``COMMAND_LIMIT`` (10).
* The interface layer (the modules of ``emergence/`` itself and of its folders ``cli/``, ``demo/`` and
  ``report/``, not the linked science folders): every function has complexity at most ``INTERFACE_LIMIT``
  (15), with no exceptions.
* ``theory/``, ``numerics/``, ``validation/``: every function has complexity at most ``SCIENCE_LIMIT``
  (20), unless its docstring says why in one line of the form ``Complexity N: reason`` with
  ``N`` at least the measured complexity.  The declared ``N`` is a ceiling, so a function that grows past
  its own explanation fails again.

Complexity is radon's (McCabe's count plus boolean operators and comprehensions); a closure is measured
on its own and its count is also part of the function that holds it, as radon reports it.
"""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from package_layout import CHECKOUT

COMMAND_LIMIT = 10
INTERFACE_LIMIT = 15
SCIENCE_LIMIT = 20
SCIENCE_FOLDERS = ("theory", "numerics", "validation")

DECLARED = re.compile(r"^\s*Complexity (\d+): \S", re.MULTILINE)
"""A docstring line that explains why a science function may exceed ``SCIENCE_LIMIT``."""

@dataclass(frozen=True)
class Measured:
    """One function as radon measures it: where it is, its complexity and its docstring."""

    key: str  # "path/relative/to/the/checkout.py:qualified.name"
    complexity: int
    docstring: str


def radon_complexity():
    """radon's ``cc_visit``, or a failure that says how to install it (the dev extra pins it)."""
    try:
        from radon.complexity import cc_visit
    except ImportError:  # pragma: no cover - the dev extra installs radon
        pytest.fail("radon is missing: install the dev extra (pip install -e '.[dev]')")
    return cc_visit


def measure(path: Path) -> list[Measured]:
    """Every function and method of ``path``, closures included, with radon's complexity."""
    source = path.read_text(encoding="utf-8")
    docstrings = {(node.name, node.lineno): ast.get_docstring(node) or "" for node in ast.walk(ast.parse(source))
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    relative = path.relative_to(CHECKOUT).as_posix()
    found = []

    def visit(block, prefix: str):
        name = f"{prefix}{block.name}"
        found.append(Measured(f"{relative}:{name}", block.complexity, docstrings.get((block.name, block.lineno), "")))
        for closure in block.closures:
            visit(closure, f"{name}.")

    for block in radon_complexity()(source):
        if hasattr(block, "closures"):  # a Function; a Class's methods are listed as Functions too
            visit(block, f"{block.classname}." if block.classname else "")
    return found


def measure_folder(folder: Path) -> list[Measured]:
    return [each for path in sorted(folder.rglob("*.py")) for each in measure(path)]


def over_the_limit(functions: list[Measured], limit: int, explained=lambda function: False) -> list[str]:
    """The functions above ``limit``, less the explained ones and those another branch owns."""
    return [f"{each.key} has complexity {each.complexity} > {limit}" for each in functions
            if each.complexity > limit and not explained(each)]


def declared_ceiling(function: Measured) -> bool:
    """The docstring declares ``Complexity N: reason`` with ``N`` at least the measured complexity."""
    match = DECLARED.search(function.docstring)
    return bool(match) and int(match.group(1)) >= function.complexity


def test_every_command_function_only_parses_calls_and_prints():
    functions = measure_folder(CHECKOUT / "emergence" / "cli" / "commands")
    assert len(functions) > 20, "the command modules were not found"
    assert over_the_limit(functions, COMMAND_LIMIT) == []


INTERFACE_FOLDERS = ("cli", "demo", "report")
"""The interface layer's folders inside ``emergence/``."""


def interface_modules(checkout: Path) -> list[Path]:
    """The interface layer's own modules: ``emergence/*.py`` and every module under ``emergence/cli/``,
    ``emergence/demo/`` and ``emergence/report/`` (the science folders linked into ``emergence/`` are not
    part of it)."""
    package = checkout / "emergence"
    return sorted(package.glob("*.py")) + sorted(path for folder in INTERFACE_FOLDERS
                                                 for path in (package / folder).rglob("*.py"))


def test_every_interface_function_is_small():
    functions = [each for path in interface_modules(CHECKOUT) for each in measure(path)]
    assert len(functions) > 200, "the interface modules were not found"
    assert over_the_limit(functions, INTERFACE_LIMIT) == []


def test_every_science_function_is_small_or_says_why():
    functions = [each for folder in SCIENCE_FOLDERS for each in measure_folder(CHECKOUT / folder)]
    assert len(functions) > 500, "the science folders were not found"
    assert over_the_limit(functions, SCIENCE_LIMIT, declared_ceiling) == []


def test_explanations_are_rare_and_still_needed():
    """A ``Complexity N:`` line is used sparingly and only where the function exceeds the limit."""
    functions = [each for folder in SCIENCE_FOLDERS for each in measure_folder(CHECKOUT / folder)]
    declared = [each for each in functions if DECLARED.search(each.docstring)]
    assert [each.key for each in declared if each.complexity <= SCIENCE_LIMIT] == []
    assert len(declared) <= 3, [each.key for each in declared]


def test_a_planted_branchy_function_is_caught(tmp_path, monkeypatch):
    """The bound fails on a function of complexity 12 in a command module, 17 in an interface module and
    22 in a science module, and a ``Complexity N:`` line with too small an ``N`` does not excuse it."""
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(11))
    planted = tmp_path / "emergence" / "cli" / "commands" / "planted.py"
    planted.parent.mkdir(parents=True)
    planted.write_text(f"def run(x):\n{branches}\n    return x and -1\n", encoding="utf-8")
    monkeypatch.setitem(globals(), "CHECKOUT", tmp_path)
    assert over_the_limit(measure(planted), COMMAND_LIMIT) == [
        "emergence/cli/commands/planted.py:run has complexity 13 > 10"]

    fifteen = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(15))
    interface = tmp_path / "emergence" / "planted.py"
    interface.write_text(f"def render(x):\n{fifteen}\n    return x and -1\n", encoding="utf-8")
    assert interface in interface_modules(tmp_path)
    assert [over_the_limit(measure(path), INTERFACE_LIMIT) for path in interface_modules(tmp_path)] == [
        ["emergence/planted.py:render has complexity 17 > 15"], []]

    many = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(21))
    science = tmp_path / "numerics" / "planted.py"
    science.parent.mkdir(parents=True)
    for declaration, caught in (("", True), ("Complexity 21: too small a ceiling.", True),
                                ("Complexity 22: one branch per planted case.", False)):
        science.write_text(f'def solve(x):\n    """Planted.\n\n    {declaration}\n    """\n{many}\n    return x\n', encoding="utf-8")
        assert bool(over_the_limit(measure(science), SCIENCE_LIMIT, declared_ceiling)) is caught, declaration
