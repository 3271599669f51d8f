"""Every kernel module the project generates, and the text of each.

Each theory sub-package that contributes kernels exposes ``kernel_modules() ->
list[KernelModule]`` and is named in :data:`KERNEL_SOURCES`.  The committed copies live
in ``numerics/kernels/`` (the ``xp`` form, so nothing at run time needs SymPy); a test
regenerates them and fails on any difference.  This module only renders text: in a source
checkout, ``python tools/regenerate.py kernels`` writes it there.
"""

from __future__ import annotations

import importlib

from emergence.theory.codegen import Backend, KernelModule, module_source

KERNEL_SOURCES: tuple[str, ...] = (
    "emergence.theory.leading_terms",
    "emergence.theory.copy_head.kernels",
)
"""Dotted names of the theory modules that define ``kernel_modules()``."""


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
