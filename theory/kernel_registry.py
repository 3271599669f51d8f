"""Every kernel module the project generates, and the writer that puts them on disk.

Each theory sub-package that contributes kernels exposes ``kernel_modules() ->
list[KernelModule]`` and is named in :data:`KERNEL_SOURCES`.  The committed copies live
in ``numerics/kernels/`` (the ``xp`` form, so nothing at run time needs SymPy); a test
regenerates them and fails on any difference.

Run ``python -m emergence.theory.kernel_registry`` to rewrite the committed copies.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from emergence.theory.codegen import Backend, KernelModule, module_source

KERNEL_SOURCES: tuple[str, ...] = (
    "emergence.theory.leading_terms",
    "emergence.theory.copy_head.kernels",
)
"""Dotted names of the theory modules that define ``kernel_modules()``."""

COMMITTED_KERNELS_DIR = Path(__file__).resolve().parent.parent / "numerics" / "kernels"


def all_kernel_modules() -> list[KernelModule]:
    """Every :class:`KernelModule` of the project, in registry order."""
    modules: list[KernelModule] = []
    for dotted in KERNEL_SOURCES:
        modules.extend(importlib.import_module(dotted).kernel_modules())
    names = [m.name for m in modules]
    duplicated = {n for n in names if names.count(n) > 1}
    if duplicated:
        raise ValueError(f"kernel module names used twice: {sorted(duplicated)}")
    return modules


def rendered_modules(backend: Backend = "xp") -> dict[str, str]:
    """File name -> source text for every kernel module."""
    return {f"{m.name}.py": module_source(m, backend) for m in all_kernel_modules()}


def write_committed_kernels(directory: Path = COMMITTED_KERNELS_DIR) -> list[Path]:
    """Rewrite the committed ``xp`` kernels; return the files written."""
    written = []
    for filename, text in rendered_modules("xp").items():
        path = directory / filename
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_committed_kernels():
        print(path)
