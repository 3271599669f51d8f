"""The checkout's generated files as ``tools/regenerate.py`` renders them, and the SymPy they are pinned to.

Kernels and derivation documents are SymPy's printed output, which changes between releases;
they are committed as printed by the release the ``dev`` extra of ``pyproject.toml`` pins, and
the byte-exact comparisons skip (with that reason) on any other release.  The numeric
comparisons of the same kernels run on every release.
"""

import importlib.util
import tomllib
from pathlib import Path

import pytest
import sympy
from packaging.requirements import Requirement

CHECKOUT = Path(__file__).resolve().parents[1]


def _load_regenerate_tool():
    spec = importlib.util.spec_from_file_location("regenerate", CHECKOUT / "tools" / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


regenerate = _load_regenerate_tool()


def pinned_sympy() -> Requirement:
    """The SymPy requirement of the ``dev`` extra: the release the committed files were printed with."""
    extras = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    return next(r for r in map(Requirement, extras["dev"]) if r.name == "sympy")


requires_pinned_sympy = pytest.mark.skipif(
    not pinned_sympy().specifier.contains(sympy.__version__),
    reason=f"byte-exact regeneration needs the pinned SymPy ({pinned_sympy()}, the dev extra); "
    f"this is SymPy {sympy.__version__}, whose printer output may differ",
)


def assert_committed_equal_fresh(files: dict[Path, str], command: str) -> None:
    """Every committed file equals its fresh rendering; the message names the file and the fix."""
    for path, text in files.items():
        name = path.relative_to(CHECKOUT)
        assert path.exists(), f"{name} is missing: run {command}"
        assert path.read_text(encoding="utf-8") == text, (
            f"{name} differs from its regeneration (never edit generated files by hand): run {command}")
