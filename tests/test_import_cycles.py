"""No two modules of ``emergence`` import each other, directly or through others.

The graph is read from the source (``tests/import_graph.py``: ``ast``, imports inside functions
included) over ``emergence/`` and the layers linked into it (``base``, ``theory``, ``numerics``,
``validation``, ``benchmarks``). The layers contract of ``pyproject.toml`` forbids circles between
layers; this test forbids them inside a layer too.
"""

import textwrap

from import_graph import circles, import_graph, package_modules
from package_layout import LINKED_FOLDERS, PACKAGE


def test_the_graph_covers_every_linked_layer():
    modules = package_modules(PACKAGE, "emergence")
    layers = {name.split(".")[1] for name in modules if name.count(".") >= 1}
    assert set(LINKED_FOLDERS) <= layers
    assert "emergence.validation.samplers.umbrella" in modules


def test_no_module_of_the_package_is_in_an_import_circle():
    assert circles(import_graph(package_modules(PACKAGE, "emergence"))) == []


def _write(root, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_a_circle_hidden_inside_a_function_is_caught(tmp_path):
    _write(tmp_path / "toy", {
        "__init__.py": "",
        "profile.py": "from toy.diagnosis import check\n",
        "diagnosis.py": """
            import math

            def check():
                from toy.profile import grid  # the import that closes the circle, hidden in a function
                return math.pi
            """,
        "tools/__init__.py": "",
        "tools/free.py": "from ..profile import grid\n",  # relative, leaves the circle
    })
    modules = package_modules(tmp_path / "toy", "toy")
    assert set(modules) == {"toy", "toy.profile", "toy.diagnosis", "toy.tools", "toy.tools.free"}
    assert circles(import_graph(modules)) == [["toy.diagnosis", "toy.profile"]]


def test_a_circle_through_relative_and_package_imports_is_caught(tmp_path):
    _write(tmp_path / "toy", {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "from .sub import c\n",
        "sub/__init__.py": "",
        "sub/c.py": "class Thing:\n    def f(self):\n        from ..a import name\n",
        "d.py": "import toy.a\n",  # imports into the circle, is not part of it
    })
    assert circles(import_graph(package_modules(tmp_path / "toy", "toy"))) == [["toy.a", "toy.b", "toy.sub.c"]]


def test_imports_that_only_point_one_way_make_no_circle(tmp_path):
    _write(tmp_path / "toy", {
        "__init__.py": "from toy.a import name\n",
        "a.py": "import json\nfrom toy import b\nname = b.value\n",
        "b.py": "value = 1\n",
    })
    graph = import_graph(package_modules(tmp_path / "toy", "toy"))
    assert graph == {"toy": {"toy.a"}, "toy.a": {"toy.b"}, "toy.b": set()}
    assert circles(graph) == []
