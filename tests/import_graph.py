"""The import graph of a package read from its source with ``ast``, and the circles in it.

Every ``import`` and ``from ... import`` statement counts wherever it stands: at the top of a module,
inside a function or method, under a condition. An import inside a function hides a circle from the
module's first lines but not from the code that runs it, so it is an edge like any other.

``from a.b import c`` is an edge to the module ``a.b.c`` when that is a module of the package, else to
``a.b`` (``c`` is a name defined there). A package's ``__init__`` is the module of the package's own
name; importing ``a.b.c`` is not counted as importing ``a`` and ``a.b`` (Python runs their
``__init__`` first, but every module of a package would otherwise import its package and the graph
would say nothing).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path


def package_modules(root: Path, name: str) -> dict[str, Path]:
    """Every module of the package at ``root`` (import name ``name``), links followed: import name -> file."""
    modules = {}
    for folder, _, files in os.walk(root, followlinks=True):
        parts = Path(folder).relative_to(root).parts
        if "__init__.py" not in files:
            continue
        for file in files:
            if file.endswith(".py"):
                stem = () if file == "__init__.py" else (file[:-3],)
                modules[".".join((name, *parts, *stem))] = Path(folder) / file
    return modules


def _imported_names(tree: ast.AST, module: str, is_package: bool) -> list[str]:
    """Every dotted name an import statement anywhere in ``tree`` asks for (relative imports resolved)."""
    package = module if is_package else module.rpartition(".")[0]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names.extend(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of ``modules`` it imports; an imported name stands for the longest module prefix of it."""
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets = set()
        for name in _imported_names(tree, module, path.name == "__init__.py"):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module that ``start`` imports directly or through others (``start`` itself only through a circle)."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or through others (the strongly connected
    components of more than one module, by reachability: the graph has a few hundred modules), each sorted."""
    reach = {module: reachable(graph, module) for module in graph}
    found = {frozenset(other for other in reach[module] if module in reach[other])
             for module in graph if module in reach[module]}
    return sorted(sorted(group) for group in found)
