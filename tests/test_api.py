"""The Python API: a light `import emergence`, records, one figure per record by every route, the
copy experiment's cache keyed on the engine's code, and docs/api.md run as a script."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import emergence
import emergence.report.figures
import emergence.records
from emergence.cli import main
from emergence.records import CopyHeadValidation, LeadingTermValidation, PhaseDiagram, ScalingVerdict

ROOT = Path(__file__).resolve().parent.parent

BLOCKER = """
import importlib.abc, sys
BLOCKED = {"torch", "matplotlib", "hypothesis", "sympy"}
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is blocked")
sys.meta_path.insert(0, Blocker())
"""


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCKER + code], capture_output=True, text=True, timeout=300)


def test_import_emergence_and_a_phase_diagram_need_no_torch_matplotlib_hypothesis_or_sympy():
    done = _python("import emergence, json\n"
                   "record = emergence.phase_diagram('softmax', 64, 8).to_dict()\n"
                   "print(json.dumps(record['transitions']['P_star']))\n"
                   "print(sorted(m for m in ('torch', 'matplotlib', 'hypothesis', 'sympy') if m in sys.modules))")
    assert done.returncode == 0, done.stderr
    P_star, loaded = done.stdout.splitlines()
    assert 2200 < float(P_star) < 2600 and loaded == "[]"  # default lambda = 1/L: P* = 2399.7 (lambda = 1: 900)


def test_the_blocker_does_block():
    """The subprocess test above would pass vacuously if the blocker let imports through."""
    done = _python("import matplotlib")
    assert done.returncode != 0 and "blocked" in done.stderr


COMMANDS_WITHOUT_API = {
    "export-kernels": "writes the generated kernel modules of the checkout (a build step, no result)",
    "check": "compares the engine's numbers with the golden baseline (a test of the engine)",
    "bench": "times the kernels on this machine (a measurement of the machine)",
    "demo": "runs the API's functions in sequence and writes a report",
}
"""Commands that are not one API function, and why."""


def command_paths() -> list[tuple[str, ...]]:
    """Every command of the command line, sub-commands as their path (``("validate", "copy-head")``)."""
    import argparse

    from emergence.cli.parser import build_parser

    def walk(parser, prefix):
        subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subparsers:
            return [prefix]
        return [path for name, child in subparsers[0].choices.items() for path in walk(child, (*prefix, name))]

    return walk(build_parser(), ())


def missing_from_the_top(top: tuple[str, ...]) -> list[str]:
    """Public functions of ``emergence.api`` and commands without a counterpart that ``top`` lacks.

    A command's counterpart is its path joined with ``_`` (``validate copy-head`` -> ``validate_copy_head``),
    or the longest prefix that names one (``derive copy-head`` -> ``derive``, the theory is its argument).
    """
    import inspect

    from emergence import api

    public = [name for name, value in vars(api).items() if not name.startswith("_") and
              (inspect.isfunction(value) or inspect.isclass(value)) and value.__module__ in (api.__name__, "emergence.validation.copy_task.copy_experiment")]
    missing = [name for name in sorted(set(public) | set(api.__all__)) if name not in top]
    for path in command_paths():
        names = ["_".join(path[:k]).replace("-", "_") for k in range(len(path), 0, -1)]
        if path[0] not in COMMANDS_WITHOUT_API and not any(name in top for name in names):
            missing.append(" ".join(path))
    return missing


def test_the_package_top_is_the_api():
    assert emergence.API == tuple(emergence.api.__all__)
    assert missing_from_the_top(emergence.API) == []
    for name in emergence.API:
        assert getattr(emergence, name) is getattr(emergence.api, name) and name in dir(emergence)
    assert callable(emergence.associate) and callable(emergence.checkpoints) and callable(emergence.validate_posterior)
    with pytest.raises(AttributeError):
        emergence.no_such_function  # noqa: B018


def test_a_name_missing_from_the_top_is_found(monkeypatch):
    """Planted: the top without ``checkpoints``, and an API function the top never heard of."""
    without = tuple(name for name in emergence.API if name != "checkpoints")
    assert missing_from_the_top(without) == ["checkpoints", "checkpoints"]  # the function, and the command
    monkeypatch.setattr(emergence.api, "compare_everything", lambda: None, raising=False)
    emergence.api.compare_everything.__module__ = "emergence.api"
    assert missing_from_the_top(emergence.API) == ["compare_everything"]


def test_phase_diagram_record_round_trips_and_matches_the_command(tmp_path):
    diagram = emergence.phase_diagram("linear", 64, 8, P=[10.0 * 1.2**k for k in range(60)])
    record = diagram.to_dict()
    # exact by design: a JSON round trip of floats (shortest repr) and a record rebuilt from its dict are copies
    assert json.loads(diagram.to_json()) == record
    assert PhaseDiagram.from_dict(record) == diagram
    assert record["convention"]["architecture"] == "T" and record["transitions"]["P1"] is not None
    assert main(["phase-diagram", "--attention", "linear", "--L", "64", "--V", "8", "--P-min", "10",
                 "--P-max", str(10.0 * 1.2**59), "--points", "60", "--json", str(tmp_path / "d.json")]) == 0
    from_cli = json.loads((tmp_path / "d.json").read_text())
    assert from_cli["transitions"]["P1"] == pytest.approx(record["transitions"]["P1"], rel=1e-9)
    assert set(from_cli) == set(record) | {"provenance"}


def test_bad_arguments_are_emergence_errors():
    from emergence.base.errors import EmergenceError

    with pytest.raises(EmergenceError):
        emergence.phase_diagram("quadratic", 64, 8)
    with pytest.raises(EmergenceError):
        emergence.phase_diagram("linear", 64, 8, P=[1.0, 2.0])  # fewer than 8 points
    with pytest.raises(EmergenceError):
        emergence.derive("no-such-theory")
    with pytest.raises(EmergenceError, match="no figure"):
        emergence.records.Derivation("copy-head", None, None, []).plot()


def test_the_cli_and_the_demo_draw_byte_identical_figures_from_one_record(tmp_path):
    from emergence.demo.figures import draw_plots, plot_record

    assert main(["phase-diagram", "--attention", "softmax", "--L", "64", "--V", "8", "--points", "40",
                 "--json", str(tmp_path / "d.json"), "--plot", str(tmp_path / "cli.png")]) == 0
    record = PhaseDiagram.from_dict(json.loads((tmp_path / "d.json").read_text()))
    plots = [plot_record("demo.png", "phase_diagram", record)]
    stored = json.loads(json.dumps(plots))  # as the demo's results.json holds it
    draw_plots(stored, tmp_path)
    cli, demo = (tmp_path / "cli.png").read_bytes(), (tmp_path / "demo.png").read_bytes()
    # exact by design: one record (its floats through an exact JSON round trip) drawn by the same code
    assert cli[:8] == b"\x89PNG\r\n\x1a\n" and cli == demo
    emergence.report.figures.save_figure(record.plot(), tmp_path / "notebook.png")
    assert (tmp_path / "notebook.png").read_bytes() == cli
    from matplotlib.figure import Figure

    own = Figure()
    panels = own.subplots(2, 1)  # a NumPy array of axes, as from pyplot.subplots
    assert record.plot(ax=panels) is own and all(axis.lines for axis in panels)


def _cosine_record(cosine: dict) -> LeadingTermValidation:
    epochs = len(cosine["W_O"][0])
    return LeadingTermValidation(config={"lr": 0.1, "layers": 2, "corpus": "synthetic"}, corpus={},
                                 steps=list(range(1, epochs + 1)), loss=[0.0] * epochs, step_limit=2.0,
                                 within_window=[True, True, False], cosine=cosine, min_cosine={},
                                 min_cosine_within_window={})


def test_an_unknown_figure_format_is_a_one_line_error(tmp_path, capsys):
    assert main(["phase-diagram", "--attention", "linear", "--L", "16", "--V", "4", "--points", "20",
                 "--plot", str(tmp_path / "figure.xyz")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("emergence: error: ") and "\n" not in error and "'.xyz'" in error
    from emergence.report.figures import figure_format
    from emergence.base.errors import EmergenceError

    with pytest.raises(EmergenceError, match="cannot write a figure as .xyz"):  # the API's own check
        figure_format(tmp_path / "figure.xyz")
    assert not list(tmp_path.iterdir())


def test_cosine_figure_shows_every_layer_an_exact_match_and_undefined_epochs():
    """Coinciding layers each get a line; 1 - cos = 0 and an undefined cosine are drawn and labelled."""
    record = _cosine_record({"W_O": [[1.0, 0.999, 0.99]], "V": [[None, 0.9, 0.8], [None, 0.9, 0.8]],
                             "W": [[None, None, 0.7], [None, None, 0.7]], "P": [[None, None, 0.6], [None, None, 0.6]]})
    axis = record.plot().axes[0]
    labels = axis.get_legend_handles_labels()[1]
    for name in ("$W_O$", "$V^{(1)}$", "$V^{(2)}$", "$W^{(2)}$", "$P^{(2)}$"):
        assert name in labels
    assert any(label.startswith("exact match") for label in labels)
    assert "cosine undefined (weight still zero)" in labels
    w_o = axis.get_lines()[0].get_ydata()
    assert w_o[0] == emergence.report.figures.EXACT_FLOOR  # not dropped from the log axis (exact: 1 - 1.0 = 0 -> the constant)
    clean = _cosine_record({"W_O": [[0.9, 0.8, 0.7]], "V": [[0.9, 0.8, 0.7]], "W": [[0.9, 0.8, 0.7]],
                            "P": [[0.9, 0.8, 0.7]]})
    clean_labels = clean.plot().axes[0].get_legend_handles_labels()[1]
    assert not any(label.startswith(("exact match", "cosine undefined")) for label in clean_labels)


def test_scaling_figure_labels_are_mathematics_and_panel_titles_distinct():
    sweep = {"L": [64, 128, 256], "V": [8, 8, 8]}
    verdict = ScalingVerdict(
        claim="linear-crossover", law="L**(3/2)*V**(1/2)",
        sizes=[{"L": L, "V": 8, "sweep": "L"} for L in sweep["L"]] + [{"L": 1024, "V": V, "sweep": "V"} for V in (8, 16, 32)],
        P_star=[1.0] * 6, ratio={"L": [1.2, 1.1, 1.05], "V": [1.1, 1.05, 1.02]},
        local_exponent={"L": [1.4, 1.45], "V": [0.45, 0.48]},
        fit={v: {"residual_exponent": [0.01], "coefficients": {}, "form": "c", "residual": 0.0} for v in "LV"},
        holds=True, tolerance=0.1, dps=30)
    axes = verdict.plot().axes
    assert [a.get_ylabel() for a in axes] == ["transition $P$ / $L^{3/2}\\,V^{1/2}$ (dimensionless)"] * 2
    assert len({a.get_title() for a in axes}) == 2
    assert "**" not in "".join(a.get_ylabel() + a.get_xlabel() for a in axes)


def test_no_module_selects_a_matplotlib_backend():
    sources = [p for folder in ("emergence", "theory", "numerics", "validation") for p in (ROOT / folder).rglob("*.py")]
    assert sources
    assert not [str(p) for p in sources if "matplotlib.use(" in p.read_text(encoding="utf-8")]


def test_a_change_of_one_line_of_training_code_changes_the_code_fingerprint(tmp_path):
    from emergence.base.sweeps import folder_fingerprint

    copy = tmp_path / "validation"
    shutil.copytree(ROOT / "validation", copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = folder_fingerprint({"emergence.validation": copy})
    assert before == folder_fingerprint({"emergence.validation": ROOT / "validation"})
    training = copy / "copy_task" / "training.py"
    lines = training.read_text(encoding="utf-8").splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith(("#", '"', "r\"")))
    training.write_text("".join(lines[:index] + ["# changed\n"] + lines[index:]), encoding="utf-8")
    assert folder_fingerprint({"emergence.validation": copy}) != before


def test_cached_copy_task_runs_are_recomputed_after_a_code_change(tmp_path, monkeypatch):
    """The demo's and the CLI's copy-task runs: reused under the same code, recomputed under another."""
    import emergence.base.sweeps as sweeps

    def experiment():
        return emergence.validate_copy_head("softmax", 4, 3, P=[4, 16], seeds=1, adam_steps=20,
                                            convention="architecture=M", device="cpu", workers=1,
                                            out=str(tmp_path / "runs"), progress=False)

    monkeypatch.setattr(sweeps, "source_fingerprint", lambda packages=sweeps.SCIENCE_PACKAGES: "code-A")
    first = experiment()
    files = sorted((tmp_path / "runs").iterdir())
    stamps = [f.stat().st_mtime_ns for f in files]
    assert [json.loads(f.read_text())["code"] for f in files] == ["code-A", "code-A"]
    assert experiment().measured == first.measured  # exact by design: read back from the stored runs (exact JSON)
    assert [f.stat().st_mtime_ns for f in files] == stamps  # same code: reused
    monkeypatch.setattr(sweeps, "source_fingerprint", lambda packages=sweeps.SCIENCE_PACKAGES: "code-B")
    experiment()
    assert sorted((tmp_path / "runs").iterdir()) == files
    assert [json.loads(f.read_text())["code"] for f in files] == ["code-B", "code-B"]  # recomputed


def test_copy_head_validation_is_one_record_for_the_cli_and_the_demo(tmp_path):
    validation = emergence.validate_copy_head("softmax", 4, 3, P=[4, 16], seeds=1, adam_steps=20,
                                              convention="architecture=M", device="cpu", workers=1,
                                              out=str(tmp_path / "runs"), progress=False)
    assert main(["validate", "copy-head", "--attention", "softmax", "--L", "4", "--V", "3", "--P-grid", "4,16",
                 "--seeds", "1", "--steps", "20", "--convention", "architecture=M", "--device", "cpu",
                 "--workers", "1", "--out", str(tmp_path / "runs"), "--json", str(tmp_path / "r.json"),
                 "--plot", str(tmp_path / "cli.png")]) == 0
    from_cli = CopyHeadValidation.from_dict(json.loads((tmp_path / "r.json").read_text()))
    # exact by design: the command reuses the stored runs of the same configuration (exact JSON round trip)
    assert from_cli.measured == validation.measured and from_cli.settings == validation.settings
    from emergence.demo.figures import draw_plots, plot_record

    draw_plots([plot_record("demo.png", "copy_task", from_cli)], tmp_path)
    # exact by design: the same record drawn by the same code
    assert (tmp_path / "demo.png").read_bytes() == (tmp_path / "cli.png").read_bytes()


def test_the_demo_recomputes_its_cached_copy_task_runs_after_a_code_change(tmp_path, monkeypatch):
    import emergence.base.sweeps as sweeps
    from emergence.demo.framework import DemoContext
    from emergence.demo.steps import _copy_task_experiment

    experiment = {"attention": "linear", "L": 4, "V": 3, "P": [4, 8], "seeds": 1, "adam_steps": 10,
                  "sgld_burn_in": 10, "sgld_draws": 4, "sgld_thin": 1, "chains": 1, "objective": "marginal"}
    context = DemoContext(out=tmp_path, quick=True, seed=0, corpus=None)
    runs = tmp_path / "steps" / "copy_task_runs"
    for code in ("code-A", "code-A", "code-B"):
        monkeypatch.setattr(sweeps, "source_fingerprint", lambda packages=sweeps.SCIENCE_PACKAGES, c=code: c)
        before = {f.name: f.stat().st_mtime_ns for f in runs.iterdir()} if runs.exists() else {}
        _copy_task_experiment(experiment, context)
        after = {f.name: f.stat().st_mtime_ns for f in runs.iterdir()}
        assert len(after) == 4  # two P, Adam and SGLD
        assert {json.loads((runs / name).read_text())["code"] for name in after} == {code}
        if before:
            reused = [name for name in after if after[name] == before.get(name)]
            assert reused == (list(after) if code == "code-A" else [])


def test_derive_returns_sympy_steps():
    import sympy as sp

    derivation = emergence.derive("copy-head", attention="linear")
    assert derivation.steps and all(isinstance(e.expression, sp.Basic) for e in derivation.steps[0].equations)
    assert derivation.to_dict()["theory"] == "copy-head" and "Reconstruction" in derivation.note


def test_docs_api_examples_run(tmp_path, monkeypatch):
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/api.md", "exec"), namespace)  # noqa: S102
    for figure in ("phase_diagram_softmax.png", "copy_task.png", "leading_term_cosines.png"):
        assert (tmp_path / figure).read_bytes()[:4] == b"\x89PNG"
