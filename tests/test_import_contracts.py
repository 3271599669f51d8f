"""The import contracts of pyproject.toml hold (``lint-imports``), and break on a planted violation.

Contracts: cli -> report -> validation -> numerics -> theory (every module of ``emergence`` in a
layer), and no SymPy in numerics or validation.  import-linter finds modules by walking the root
package's folder, which in an editable install holds only ``emergence/`` (the science layers are
mapped in from ``theory/``, ``numerics/``, ``validation/``); so it runs on a copy of the sources
laid out as they are installed.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from installed_layout import CHECKOUT, stage_installed_layout


def lint_imports(layout: Path) -> subprocess.CompletedProcess:
    beside_python = Path(sys.executable).parent / "lint-imports"
    command = str(beside_python) if beside_python.exists() else shutil.which("lint-imports")
    assert command, "lint-imports is missing: install the dev extra (pip install -e '.[dev]')"
    return subprocess.run([command, "--no-cache", "--config", str(CHECKOUT / "pyproject.toml")],
                          cwd=layout, capture_output=True, text=True, timeout=600)


@pytest.fixture
def layout(tmp_path) -> Path:
    return stage_installed_layout(tmp_path)


def test_lint_imports_passes(layout):
    result = lint_imports(layout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"Contracts: [1-9]\d* kept, 0 broken\.", result.stdout), result.stdout


@pytest.mark.parametrize(
    "module, planted, broken",
    [
        ("emergence/numerics/io.py", "import emergence.base.sweeps", "Layers"),
        ("emergence/theory/errors.py", "import emergence.base.io", "Layers"),
        ("emergence/validation/runtime.py", "from emergence import demo", "Layers"),
        ("emergence/numerics/backend.py", "import sympy", "No SymPy"),
        ("emergence/validation/golden.py", "from emergence.theory.copy_head import landau", "No SymPy"),
    ],
)
def test_a_planted_violation_breaks_its_contract(layout, module, planted, broken):
    path = layout / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{planted}\n", encoding="utf-8")
    result = lint_imports(layout)
    assert result.returncode == 1
    assert broken in result.stdout.split("Broken contracts")[-1]


def test_a_module_outside_every_layer_breaks_the_layers_contract(layout):
    (layout / "emergence" / "unplaced.py").write_text('"""A module no layer lists."""\n', encoding="utf-8")
    result = lint_imports(layout)
    assert result.returncode != 0
    assert "unplaced" in result.stdout + result.stderr
