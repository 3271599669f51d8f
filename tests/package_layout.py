"""The layout of the checkout: one rule from import path to file.

The import path ``emergence.a.b`` is the file ``emergence/a/b.py`` (or ``emergence/a/b/__init__.py``).
The layers, the ground floor and the benchmarks keep their folders at the top of the repository;
``emergence/theory`` and so on are links to them (``docs/architecture.md``).
"""

import os
import tomllib
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
PACKAGE = CHECKOUT / "emergence"
PYPROJECT = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]

LINKED_FOLDERS = ("base", "theory", "numerics", "validation", "benchmarks")
"""Top-level folders of the repository that are packages of ``emergence`` through a link in ``emergence/``."""

CHECKOUT_ONLY = {"emergence.benchmarks"}
"""Packages importable from a checkout installed in editable mode that a wheel does not install."""


def rule_path(name: str, is_package: bool) -> Path:
    """Where the one rule puts the module ``name`` (a dotted ``emergence.*`` name)."""
    head, *rest = name.split(".")
    assert head == "emergence", name
    folder = PACKAGE.joinpath(*rest)
    return folder / "__init__.py" if is_package else folder.with_suffix(".py")


def packages_on_disk() -> set[str]:
    """Every folder with an ``__init__.py`` under ``emergence/`` (through its links), by import name."""
    found = set()
    for folder, _, files in os.walk(PACKAGE, followlinks=True):
        if "__init__.py" in files:
            found.add(".".join(("emergence", *Path(folder).relative_to(PACKAGE).parts)).rstrip("."))
    return found


def installed_packages_on_disk() -> set[str]:
    """:func:`packages_on_disk` less the checkout-only packages and what lies inside them."""
    return {name for name in packages_on_disk()
            if not any(name == other or name.startswith(other + ".") for other in CHECKOUT_ONLY)}


def installed_source_files() -> list[Path]:
    """Every ``*.py`` file of the installed packages, at its path through the links."""
    return sorted(path for name in installed_packages_on_disk()
                  for path in rule_path(name, is_package=True).parent.glob("*.py"))
