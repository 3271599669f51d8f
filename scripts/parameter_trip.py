"""Follow one parameter through the engine's source: every function it is handed to, read with ``ast``.

Developer measurement behind the CHANGELOG's trip counts (how far a size such as ``L`` travels from an API
function).  Starting at ``FUNCTION``'s parameter ``PARAMETER``, each call inside the function that passes the
parameter on as a bare name (``f(L)``, ``f(x, L=L)``, ``f(int(L))``) is followed into the callee when the callee
is a function or class of the package that the calling module names (an import at the top of the module or
inside the function, or a function of the same module); the callee's receiving parameter is followed in turn.
Calls on objects (``theory.profile(L)``) and through ``**kwargs`` are counted as unresolved, not followed.

Counted over the whole trip (each function once per parameter name):

* ``stops``: the functions (and class constructors) the parameter reaches, the start included;
* ``modules``: the modules those stops are in;
* ``climbs``: calls from a module into a module of a higher layer (base < theory < numerics < validation <
  report < records < api < demo < cli), which the one-way import rule allows only through imports inside
  functions;
* ``returns``: the ``return`` statements of the stops;
* ``theory_handoffs``: calls from the validation layer or above into numerics or theory (the parameter handed
  to the theory);
* ``unresolved``: calls on objects or through ``**kwargs`` that carry the parameter.

    python scripts/parameter_trip.py emergence.api validate_posterior L
    python scripts/parameter_trip.py emergence.api phase_diagram L --list
    python scripts/parameter_trip.py emergence.api validate_posterior L --root /path/to/other/checkout
"""

from __future__ import annotations

import argparse
import ast
import json
import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "emergence"

LAYERS = ("base", "theory", "numerics", "validation", "report", "records", "api", "demo", "cli")
"""The layers from the ground floor up (``benchmarks`` and ``__main__`` sit with ``cli``)."""


def layer(module: str) -> int:
    """The height of ``module``'s layer in :data:`LAYERS`."""
    part = module.split(".")[1] if "." in module else "api"
    return LAYERS.index(part) if part in LAYERS else LAYERS.index("cli")


def package_files(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package (links followed): import name -> file."""
    modules = {}
    for folder, _, files in os.walk(root, followlinks=True):
        if "__init__.py" not in files:
            continue
        parts = Path(folder).relative_to(root).parts
        for file in files:
            if file.endswith(".py"):
                stem = () if file == "__init__.py" else (file[:-3],)
                modules[".".join(("emergence", *parts, *stem))] = Path(folder) / file
    return modules


class Source:
    """The parsed modules of the package, read once each."""

    def __init__(self, root: Path = PACKAGE):
        self.files = package_files(root)
        self.trees: dict[str, ast.Module] = {}

    def tree(self, module: str) -> ast.Module:
        if module not in self.trees:
            self.trees[module] = ast.parse(self.files[module].read_text(encoding="utf-8"))
        return self.trees[module]

    def definition(self, module: str, name: str):
        """The top-level function or class ``name`` of ``module`` (following one re-export), or None."""
        if module not in self.files:
            return None
        for node in self.tree(module).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                return module, node
        imported = bindings(self.tree(module).body, module, self).get(name)
        if imported and imported[1] and imported[0] != module:
            return self.definition(*imported)
        return None


def bindings(statements, module: str, source: Source) -> dict[str, tuple[str, str | None]]:
    """Names bound by the import statements among ``statements`` (not inside nested functions):
    local name -> (module, attribute) or (module, None) for a module."""
    found: dict[str, tuple[str, str | None]] = {}
    for node in statements:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found[alias.asname or alias.name] = (full, None) if full in source.files else (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    found[alias.asname] = (alias.name, None)
    return found


def function_imports(function: ast.AST, module: str, source: Source) -> dict[str, tuple[str, str | None]]:
    """Names bound by imports anywhere inside ``function``."""
    return bindings([node for node in ast.walk(function) if isinstance(node, (ast.Import, ast.ImportFrom))],
                    module, source)


def receiving_parameter(node, position: int | None, keyword: str | None) -> str | None:
    """The parameter of function or class ``node`` that a positional argument or keyword lands in."""
    if isinstance(node, ast.ClassDef):
        init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if init is None:  # a dataclass: its fields in order
            fields = [n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
            return keyword if keyword else (fields[position] if position is not None and position < len(fields) else None)
        node, position = init, None if position is None else position + 1
    arguments = [a.arg for a in node.args.posonlyargs + node.args.args]
    if keyword:
        return keyword if keyword in arguments + [a.arg for a in node.args.kwonlyargs] else None
    return arguments[position] if position is not None and position < len(arguments) else None


def carried(value: ast.AST, name: str) -> bool:
    """``value`` is the bare name, or a conversion of it (``int(L)``, ``float(L)``)."""
    if isinstance(value, ast.Name):
        return value.id == name
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("int", "float")
            and len(value.args) == 1 and carried(value.args[0], name))


def handed_on(function: ast.AST, name: str):
    """``(call, position, keyword)`` for each argument of a call inside ``function`` that carries ``name``."""
    for call in ast.walk(function):
        if not isinstance(call, ast.Call):
            continue
        for position, value in enumerate(call.args):
            if carried(value, name):
                yield call, position, None
        for keyword in call.keywords:
            if keyword.arg and carried(keyword.value, name):
                yield call, None, keyword.arg


def callee(call: ast.Call, module: str, local: dict, source: Source):
    """The package function or class ``call`` calls, as ``(module, node)``, or None."""
    target = call.func
    if isinstance(target, ast.Name):
        bound = local.get(target.id)
        if bound is None:
            return source.definition(module, target.id)
        return source.definition(*bound) if bound[1] else None
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        bound = local.get(target.value.id)
        if bound and bound[1] is None:
            return source.definition(bound[0], target.attr)
        if bound and bound[1] and f"{bound[0]}.{bound[1]}" in source.files:
            return source.definition(f"{bound[0]}.{bound[1]}", target.attr)
    return None


def trip(module: str, function: str, parameter: str, source: Source | None = None) -> dict:
    """Every function ``parameter`` of ``module.function`` reaches, and the counts of the module docstring."""
    source = source or Source()
    start = source.definition(module, function)
    if start is None:
        raise SystemExit(f"no function {function} in {module}")
    todo, seen, edges, unresolved = [(*start, parameter)], set(), [], 0
    while todo:
        where, node, name = todo.pop()
        if (where, node.name, name) in seen:
            continue
        seen.add((where, node.name, name))
        body = node if isinstance(node, ast.FunctionDef) else next(
            (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if body is None:
            continue
        local = {**bindings(source.tree(where).body, where, source), **function_imports(body, where, source)}
        for call, position, keyword in handed_on(body, name):
            found = callee(call, where, local, source)
            receiving = None if found is None else receiving_parameter(found[1], position, keyword)
            if receiving is None:
                unresolved += 1
                continue
            edges.append((where, found[0]))
            todo.append((*found, receiving))
    stops = sorted(seen)
    returns = 0
    for where, name, _ in stops:
        definition = source.definition(where, name)
        if definition and isinstance(definition[1], ast.FunctionDef):
            returns += sum(isinstance(n, ast.Return) for n in ast.walk(definition[1]))
    return {
        "start": f"{module}.{function}({parameter})",
        "stops": len(stops), "modules": len({where for where, _, _ in stops}),
        "climbs": sum(layer(b) > layer(a) for a, b in edges),
        "returns": returns,
        "theory_handoffs": sum(layer(a) >= LAYERS.index("validation")
                               and LAYERS.index("theory") <= layer(b) <= LAYERS.index("numerics") for a, b in edges),
        "unresolved": unresolved,
        "path": [f"{where}.{name}({parameter_name})" for where, name, parameter_name in stops],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module")
    parser.add_argument("function")
    parser.add_argument("parameter")
    parser.add_argument("--list", action="store_true", help="also list every stop")
    parser.add_argument("--root", type=Path, default=PACKAGE.parent, help="the checkout to read (default: this one)")
    args = parser.parse_args()
    result = trip(args.module, args.function, args.parameter, Source(args.root / "emergence"))
    if not args.list:
        result.pop("path")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
