"""Packaging: the declared packages match the tree, optional frameworks stay optional, and the
wheel installs only the ``emergence`` namespace (slow: builds it and installs it into a fresh venv).

The subprocess tests make torch, matplotlib and hypothesis missing with a meta-path finder
that raises ``ModuleNotFoundError`` for them, as on a machine that never installed them.
"""

import json
import os
import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from package_layout import CHECKOUT, SETUPTOOLS, installed_packages_on_disk, installed_source_files

OPTIONAL_FRAMEWORKS = ("torch", "matplotlib", "hypothesis")


def missing(*frameworks: str) -> str:
    """Python source that makes ``frameworks`` unimportable in the process that runs it."""
    return textwrap.dedent(f"""\
        import importlib.abc, sys

        class Missing(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in {set(frameworks)!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None

        sys.meta_path.insert(0, Missing())
        """)


def run_python(source: str, python: str = sys.executable, cwd: Path | None = None, timeout: int = 600):
    return subprocess.run([python, "-c", source], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def test_declared_packages_are_exactly_the_folders_with_an_init():
    declared = set(SETUPTOOLS["packages"])
    on_disk = installed_packages_on_disk()
    assert on_disk - declared == set(), "folders with __init__.py missing from [tool.setuptools] packages"
    assert declared - on_disk == set(), "declared packages without a folder and __init__.py"


def test_base_theory_numerics_and_emergence_import_without_torch_matplotlib_or_hypothesis():
    source = missing(*OPTIONAL_FRAMEWORKS) + textwrap.dedent("""\
        import importlib, pkgutil

        def fail(name):
            raise ImportError(f"could not import {name}")

        import emergence
        for package in ("emergence.base", "emergence.theory", "emergence.numerics"):
            root = importlib.import_module(package)
            for info in pkgutil.walk_packages(root.__path__, package + ".", onerror=fail):
                importlib.import_module(info.name)
        loaded = sorted({name.partition(".")[0] for name in sys.modules} & {"torch", "matplotlib", "hypothesis"})
        assert not loaded, loaded
        try:
            import emergence.validation.samplers.sgld  # needs torch: shows the frameworks really are missing
        except ModuleNotFoundError as error:
            print("blocked", error.name)
        """)
    result = run_python(source)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["blocked", "torch"]


@pytest.mark.parametrize(
    "framework, extra, arguments",
    [
        ("torch", "train", ["validate", "copy-head", "--attention", "linear", "--L", "8", "--V", "4"]),
        ("matplotlib", "plot", ["phase-diagram", "--attention", "linear", "--L", "8", "--V", "4",
                                "--points", "8", "--plot", "figure.png"]),
    ],
)
def test_a_command_needing_a_missing_framework_names_its_extra(tmp_path, framework, extra, arguments):
    source = missing(framework) + f"from emergence.cli import main\nsys.exit(main({arguments!r}))\n"
    result = run_python(source, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert f"pip install 'emergence[{extra}]'" in result.stderr and framework in result.stderr
    assert not (tmp_path / "figure.png").exists()


def test_installed_modules_are_not_scripts():
    """Developer entry points (regenerating kernels, documents, status page, baseline) live in tools/regenerate.py."""
    scripts = [
        str(path.relative_to(CHECKOUT))
        for path in installed_source_files()
        if path.name != "__main__.py" and re.search(r"""^if __name__ == ["']__main__["']""", path.read_text(encoding="utf-8"), re.M)
    ]
    assert scripts == []


# --- slow: a real wheel in a fresh virtual environment, and pip's resolver beside torch 2.6 ------------


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built from the checkout (the links in ``emergence/`` are followed).

    setuptools' ``build/`` and ``*.egg-info`` folders go to a temporary folder (``DIST_EXTRA_CONFIG``),
    so that nothing is written into the checkout and no stale ``build/lib`` reaches the wheel.
    """
    out = tmp_path_factory.mktemp("wheel")
    work = tmp_path_factory.mktemp("build")
    config = work / "setup.cfg"
    config.write_text(f"[build]\nbuild_base = {work / 'build'}\n[egg_info]\negg_base = {work}\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(CHECKOUT)],
                   check=True, timeout=600, env={**os.environ, "DIST_EXTRA_CONFIG": str(config)})
    (built,) = out.glob("emergence-*.whl")
    return built


@pytest.fixture(scope="module")
def fresh_python(wheel, tmp_path_factory) -> str:
    """The interpreter of a new virtual environment with only the wheel and its hard dependencies."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=600)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", str(wheel)], check=True, timeout=600)
    return python


@pytest.mark.slow
def test_wheel_holds_only_the_emergence_namespace(wheel):
    with zipfile.ZipFile(wheel) as archive:
        top_level = {name.split("/")[0] for name in archive.namelist()}
    metadata = {name for name in top_level if name.endswith(".dist-info")}
    assert len(metadata) == 1 and top_level - metadata == {"emergence"}, sorted(top_level)


@pytest.mark.slow
@pytest.mark.parametrize("generic", ["base", "theory", "numerics", "validation", "benchmarks", "tools"])
def test_fresh_install_puts_no_generic_package_on_the_path(fresh_python, tmp_path, generic):
    result = run_python(f"import {generic}", python=fresh_python, cwd=tmp_path)
    assert result.returncode != 0 and "ModuleNotFoundError" in result.stderr


@pytest.mark.slow
def test_fresh_install_derives_a_phase_diagram_without_optional_frameworks(fresh_python, tmp_path):
    source = textwrap.dedent("""\
        import sys
        import numpy as np
        import emergence
        from emergence.numerics.copy_head.phase_diagram import phase_diagram
        from emergence.numerics.copy_head.reduced_action import reduced_action

        diagram = phase_diagram(reduced_action("softmax", 64, 8), np.geomspace(1e2, 1e5, 40))
        print(diagram.transitions["P_star"] is not None)
        print(sorted({name.partition(".")[0] for name in sys.modules} & {"torch", "matplotlib", "hypothesis"}))
        """)
    result = run_python(source, python=fresh_python, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["True", "[]"]
    command = subprocess.run([str(Path(fresh_python).parent / "emergence"), "validate", "copy-head",
                              "--attention", "linear", "--L", "8", "--V", "4"],
                             capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert command.returncode == 2 and "pip install 'emergence[train]'" in command.stderr


@pytest.mark.slow
def test_fresh_install_runs_the_python_api(fresh_python, tmp_path):
    source = "import emergence; emergence.phase_diagram('softmax', 64, 8).to_dict()"
    result = run_python(source, python=fresh_python, cwd=tmp_path)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_the_project_resolves_beside_torch_2_6(wheel, tmp_path):
    """torch 2.5 and 2.6 require sympy==1.13.1, which the runtime requirement sympy>=1.13 admits.

    Resolves the wheel with its train, plot and testing extras against the package index (network).
    Costly: where the index serves no separate wheel metadata (as here), pip downloads every wheel
    it considers, about 3 GB for torch 2.6's CUDA dependencies (2 min here).  ``PIP_CONSTRAINT`` is
    emptied because a machine-wide pip constraint file (here /etc/xdg/pip/constraints.txt) may cap torch.
    """
    report = tmp_path / "report.json"
    for attempt in range(2):  # a download cut short fails pip's hash check; that is the network, not the resolution
        result = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
             "--report", str(report), f"{wheel}[train,plot,testing]", "torch==2.6.0"],
            capture_output=True, text=True, timeout=1200, env={**os.environ, "PIP_CONSTRAINT": ""},
        )
        if "DO NOT MATCH THE HASHES" not in result.stderr:
            break
    assert result.returncode == 0, result.stderr[-2000:]
    resolved = {item["metadata"]["name"].lower(): item["metadata"]["version"]
                for item in json.loads(report.read_text())["install"]}
    assert resolved["torch"] == "2.6.0"
    assert resolved["sympy"].startswith("1.13")
    assert resolved["emergence"] == wheel.name.split("-")[1]


def test_license_and_citation_match_the_project():
    """LICENSE is the MIT text pyproject.toml declares; CITATION.cff (CFF 1.2.0; checked once with
    ``cffconvert --validate``) cites this version and the two papers whose theories the engine implements."""
    import tomllib

    yaml = pytest.importorskip("yaml")
    project = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    license_text = (CHECKOUT / "LICENSE").read_text(encoding="utf-8")
    assert project["license"] == {"text": "MIT"} and license_text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the emergence authors" in license_text
    citation = yaml.safe_load((CHECKOUT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and citation["type"] == "software"
    assert citation["version"] == project["version"] and citation["license"] == "MIT"
    cited = {identifier["value"] for reference in citation["references"] for identifier in reference["identifiers"]}
    assert cited == {"arXiv:2606.12058", "arXiv:2601.19208"}
