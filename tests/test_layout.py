"""One rule from import path to file: ``emergence.a.b`` is ``emergence/a/b.py`` in the checkout.

The layers, the ground floor and the benchmarks keep their folders at the top of the repository and
are reached through links in ``emergence/`` (``docs/architecture.md``).  Every module is imported
and its ``__file__`` compared with the rule; every path the documentation cites exists.
"""

import importlib
import importlib.util
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import emergence
from package_layout import CHECKOUT, LINKED_FOLDERS, PACKAGE, rule_path


def emergence_modules() -> list[tuple[str, bool]]:
    """``(name, is_package)`` of every module of ``emergence``, found by walking the package as Python does."""
    modules = [("emergence", True)]
    modules += [(info.name, info.ispkg) for info in pkgutil.walk_packages(emergence.__path__, "emergence.")]
    return sorted(modules)


def test_the_package_is_the_checkouts_emergence_folder():
    assert Path(emergence.__file__) == PACKAGE / "__init__.py"
    assert list(emergence.__path__) == [str(PACKAGE)]


@pytest.mark.parametrize("name, is_package", emergence_modules())
def test_the_module_file_is_where_the_rule_puts_it(name, is_package):
    if name == "emergence.__main__":  # importing it runs the command line: its spec says where it is
        origin = importlib.util.find_spec(name).origin
    else:
        origin = importlib.import_module(name).__file__
    assert Path(origin) == rule_path(name, is_package)
    top, *rest = rule_path(name, is_package).relative_to(PACKAGE).parts
    if top in LINKED_FOLDERS:  # through the link, the file is in the top-level folder of its layer
        assert Path(origin).resolve() == CHECKOUT / top / Path(*rest)


def test_every_layer_folder_is_linked_into_the_package_and_nothing_else_is():
    links = sorted(path.name for path in PACKAGE.iterdir() if path.is_symlink())
    assert links == sorted(LINKED_FOLDERS)
    for name in LINKED_FOLDERS:
        assert os.readlink(PACKAGE / name) == f"../{name}", f"emergence/{name} must be a relative link to {name}/"
        assert (CHECKOUT / name).is_dir() and not (CHECKOUT / name).is_symlink()
        assert (PACKAGE / name / "__init__.py").is_file()
    nested = [str(Path(folder, entry).relative_to(CHECKOUT))
              for folder, directories, files in os.walk(PACKAGE, followlinks=True)
              for entry in directories + files if Path(folder, entry).is_symlink() and Path(folder) != PACKAGE]
    assert nested == []


@pytest.mark.parametrize("generic", [*LINKED_FOLDERS, "tools", "tests"])
def test_no_top_level_folder_is_importable_under_its_own_name(tmp_path, generic):
    result = subprocess.run([sys.executable, "-c", f"import {generic}"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode != 0 and "ModuleNotFoundError" in result.stderr


# --- every path cited in the documentation exists ---------------------------------------------------

CITATION = re.compile(r"`([^`\s]+)`|\]\(([^)\s]+)\)")
PLACEHOLDER = re.compile(r"\.\.\.|[a-z](\.py)?|<[^>]*>.*")
"""A path component that stands for any name (``emergence/a/b.py``, ``numerics/x.py``, ``emergence/theory/...``)."""


def tracked_files() -> list[str]:
    result = subprocess.run(["git", "ls-files"], cwd=CHECKOUT, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip("not a git checkout")
    return result.stdout.splitlines()


def cited_paths(document: Path, top_level: set[str]) -> list[tuple[str, Path]]:
    """``(as written, resolved path)`` of each repository path ``document`` cites.

    A Markdown link is resolved from the document's folder; a code span is a repository path when its
    first component is a top-level entry of the repository (``theory/``, ``docs/``, ``README.md`` ...),
    so outputs (``OUT/report.md``) and material outside the repository (``../shared/``) are not paths
    of it.  A path with a placeholder component (:data:`PLACEHOLDER`) is a pattern, not a path.
    ``{a,b}`` expands; a glob must match something.
    """
    cited = []
    for match in CITATION.finditer(document.read_text(encoding="utf-8")):
        span, link = match.groups()
        written = (span or link).split("#")[0].rstrip(".,:;")
        if not written or "://" in written or written.startswith(("mailto:", "/")):
            continue
        if any(PLACEHOLDER.fullmatch(part) for part in written.split("/")):
            continue
        if link:
            base = document.parent
        elif "/" in written and written.split("/")[0] in top_level:
            base = CHECKOUT
        else:
            continue
        braces = re.search(r"\{([^}]*)\}", written)
        variants = [written[:braces.start()] + choice + written[braces.end():] for choice in braces.group(1).split(",")] \
            if braces else [written]
        cited.extend((written, Path(os.path.normpath(base / variant))) for variant in variants)
    return cited


def test_every_path_cited_in_the_documentation_exists():
    files = tracked_files()
    top_level = {name.split("/")[0] for name in files}
    documents = [CHECKOUT / name for name in files if name.endswith(".md")]
    missing, checked = [], 0
    for document in documents:
        for written, path in cited_paths(document, top_level):
            if CHECKOUT not in path.parents and path != CHECKOUT:
                continue  # a link out of the repository
            checked += 1
            exists = any(path.parent.glob(path.name)) if "*" in path.name else path.exists()
            if not exists:
                missing.append(f"{document.relative_to(CHECKOUT)}: {written}")
    assert checked > 50
    assert missing == []
