"""The static tools pass when run from the repository root, as a developer runs them after the README's
install: ``lint-imports`` (the import contracts), ``mypy`` (base, theory, numerics) and ``ruff check``,
each configured in pyproject.toml.  No staged copy: each tool reads the checkout itself.

Only the caches go elsewhere: import-linter's and ruff's are off, mypy's is kept in the system temp
folder (one per checkout), so that nothing is written into the checkout.
"""

import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from package_layout import CHECKOUT

MYPY_CACHE = Path(tempfile.gettempdir()) / f"emergence-mypy-{hashlib.sha256(str(CHECKOUT).encode()).hexdigest()[:12]}"


def tool(name: str) -> str:
    """The command ``name`` installed beside this Python (the dev extra), else on the PATH."""
    beside_python = Path(sys.executable).parent / name
    command = str(beside_python) if beside_python.exists() else shutil.which(name)
    assert command, f"{name} is missing: install the dev extra (pip install -e '.[dev]')"
    return command


def run_from_the_root(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(arguments, cwd=CHECKOUT, capture_output=True, text=True, timeout=900)


def test_lint_imports_passes_from_the_root():
    result = run_from_the_root(tool("lint-imports"), "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"Contracts: [1-9]\d* kept, 0 broken\.", result.stdout), result.stdout


def test_mypy_passes_from_the_root():
    result = run_from_the_root(tool("mypy"), "--cache-dir", str(MYPY_CACHE))
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.match(r"Success: no issues found in \d+ source files", result.stdout), result.stdout


def test_ruff_passes_from_the_root():
    result = run_from_the_root(tool("ruff"), "check", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_reports_a_type_error_in_the_ground_floor_theory_and_numerics(tmp_path):
    """A planted error in one module of each checked layer is reported at the module's path by the rule
    (``--shadow-file`` makes mypy read a changed copy instead of the checkout's file)."""
    planted = ["emergence/base/limits.py", "emergence/theory/codegen.py", "emergence/numerics/backend.py"]
    shadows = []
    for index, path in enumerate(planted):
        shadow = tmp_path / f"{index}.py"
        shadow.write_text((CHECKOUT / path).read_text(encoding="utf-8") + '\nplanted: int = "a string"\n', encoding="utf-8")
        shadows += ["--shadow-file", path, str(shadow)]
    result = run_from_the_root(tool("mypy"), "--cache-dir", str(MYPY_CACHE), *shadows)
    assert result.returncode == 1, result.stdout + result.stderr
    reported = {line.split(":")[0] for line in result.stdout.splitlines() if "error:" in line}
    assert reported == set(planted), result.stdout


CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""ASCII control characters other than tab and newline: in a docstring they are what "\\frac", "\\bar" or
"\\approx" become when written into a non-raw string (form feed, backspace, bell)."""


def test_no_source_or_doc_file_holds_control_characters():
    folders = ("base", "theory", "numerics", "validation", "emergence", "benchmarks", "tests", "tools", "docs")
    files = sorted({path.resolve() for folder in folders for path in (CHECKOUT / folder).rglob("*")
                    if path.suffix in (".py", ".md") and path.is_file()})
    assert len(files) > 100
    found = [f"{path}:{number}" for path in files
             for number, line in enumerate(path.read_bytes().decode("utf-8").split("\n"), 1)
             if CONTROL_CHARACTERS.search(line)]
    assert not found, f"control characters (a LaTeX escape in a non-raw string?) at {found}"
