"""The installed layout of the checkout, read from ``[tool.setuptools]`` in ``pyproject.toml``.

The folders ``emergence/``, ``theory/``, ``numerics/`` and ``validation/`` install as
``emergence``, ``emergence.theory``, ``emergence.numerics`` and ``emergence.validation``.
"""

import shutil
import tomllib
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def package_folders() -> dict[str, Path]:
    """Installed package name -> checkout folder, for each root of ``package-dir``."""
    return {name: CHECKOUT / folder for name, folder in SETUPTOOLS["package-dir"].items()}


def packages_on_disk() -> set[str]:
    """Every folder with an ``__init__.py`` under a root of ``package-dir``, by installed name."""
    return {
        ".".join((name, *init.parent.relative_to(folder).parts))
        for name, folder in package_folders().items()
        for init in folder.rglob("__init__.py")
    }


def stage_installed_layout(destination: Path) -> Path:
    """Copy the sources into ``destination`` as they are installed (``emergence/theory/...``)."""
    for name, folder in sorted(package_folders().items()):
        shutil.copytree(folder, destination.joinpath(*name.split(".")), dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return destination


def stage_source_tree(destination: Path) -> Path:
    """Copy what a build reads (``pyproject.toml``, ``README.md``, the package folders) into ``destination``.

    Building from the copy keeps ``build/`` and ``*.egg-info`` out of the checkout.
    """
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(CHECKOUT / name, destination / name)
    for folder in package_folders().values():
        shutil.copytree(folder, destination / folder.relative_to(CHECKOUT), dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return destination
