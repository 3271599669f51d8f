"""validate posterior estimates its memory before any work, and leaves no temporary folder behind on any exit path."""

import os
import subprocess
import sys
import textwrap

import pytest

from emergence.base.errors import InvalidSizeError
from emergence.cli import main


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """A temporary directory of the test's own, so that a folder left behind is seen."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr("tempfile.tempdir", str(folder))
    return folder


@pytest.mark.parametrize("arguments, fragment", [
    (["--attention", "softmax", "--L", "100000", "--V", "8"], "softmax posterior theory at L=100000"),
    (["--attention", "linear", "--L", "100000", "--V", "8"], "linear posterior theory at L=100000"),
    (["--attention", "linear", "--L", "8", "--V", "4", "--method", "replica-exchange", "--P-grid", "8,100000000"],
     "validate posterior (replica-exchange) at L=8, V=4, P up to 100000000"),
    (["--attention", "softmax", "--L", "64", "--V", "8", "--P-grid", "100,100000000"],
     "validate posterior (umbrella) at L=64, V=8, P up to 100000000"),
    (["--attention", "linear", "--L", "8", "--V", "4", "--P-grid", "8,100000000", "--workers", "1"],
     "P up to 100000000 with 32 models per point on 1 worker(s)"),
])
def test_an_oversize_posterior_run_is_refused_with_its_estimate(capsys, private_tmp, arguments, fragment):
    assert main(["validate", "posterior", *arguments]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("emergence: error: ") and "\n" not in error, error
    assert "needs an estimated" in error and "more than the budget" in error and fragment in error, error
    assert list(private_tmp.iterdir()) == []


def test_the_api_refuses_before_any_work(private_tmp, monkeypatch):
    """The API path raises the same error before the theory or a sweep starts (both replaced by failures here)."""
    from emergence import api
    from emergence.validation.copy_task import posterior_free_energy

    def never(*arguments, **options):
        raise AssertionError("work started before the memory estimate")

    monkeypatch.setattr(posterior_free_energy, "posterior_P_star", never)
    monkeypatch.setattr(posterior_free_energy, "run_free_energy_validation", never)
    with pytest.raises(InvalidSizeError, match="needs an estimated"):
        api.validate_posterior("softmax", 100_000, 8)
    with pytest.raises(InvalidSizeError, match="P up to 100000000"):
        api.validate_posterior("softmax", 16, 8, [100, 100_000_000], workers=1)
    assert list(private_tmp.iterdir()) == []


def test_the_estimate_bounds_a_sampler_point_and_scales_with_its_sizes():
    from emergence.validation.copy_task.config import FREE_ENERGY_DEFAULTS, POSTERIOR_DEFAULTS
    from emergence.validation.copy_task.posterior_memory import sampler_point_bytes, sampler_runs, theory_bytes

    assert sampler_runs("umbrella", FREE_ENERGY_DEFAULTS) == 16 * 4  # the placement may add windows up to 16
    assert sampler_runs("umbrella", {**FREE_ENERGY_DEFAULTS, "min_overlap": 0.0}) == 8 * 4
    assert sampler_runs("replica-exchange", {"replicas": 3, "chains": 2}) == 6
    assert sampler_runs("replica-exchange", {}) == POSTERIOR_DEFAULTS["replicas"] * POSTERIOR_DEFAULTS["chains"]
    small = sampler_point_bytes("umbrella", 16, 8, 900, FREE_ENERGY_DEFAULTS)
    assert sampler_point_bytes("umbrella", 16, 8, 9000, FREE_ENERGY_DEFAULTS) > 5 * small
    assert sampler_point_bytes("umbrella", 16, 8, 900, {**FREE_ENERGY_DEFAULTS, "data_multiple": 4}) > 2 * small
    assert theory_bytes("softmax", 2000, 8, None) > 80 * theory_bytes("softmax", 16, 8, None)
    assert theory_bytes("linear", 160, 8, None) > 50 * theory_bytes("linear", 16, 8, None)


@pytest.mark.parametrize("ending", ["return", "error", "interrupt"])
def test_the_temporary_results_folder_is_removed_on_every_exit_path(tmp_path, ending):
    """A run without --out keeps its points in a temporary folder that goes when the process ends, however it ends."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    script = textwrap.dedent(f"""
        import os, pathlib, sys
        from emergence import api
        from emergence.base.errors import EmergenceError
        from emergence.validation.copy_task import linear_posterior_sampling

        def sweep(L, V, convention, P_grid, settings, out, **options):
            assert pathlib.Path(out).is_dir() and pathlib.Path(out).parent == pathlib.Path({str(folder)!r})
            print("folder", out, flush=True)
            if {ending!r} == "error":
                raise EmergenceError("a failing sweep")
            if {ending!r} == "interrupt":
                raise KeyboardInterrupt
            return {{"measured": {{"P": P_grid, "seconds_per_gradient": [1.0, 1.0], "flops_per_gradient": [1e6, 1e6]}},
                    "predicted": {{}}, "saddle": {{}}, "agreement": {{}}}}

        linear_posterior_sampling.run_linear_hmc_validation = sweep
        api.validate_posterior("linear", 8, 4, [8, 16], workers=1, progress=False)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "TMPDIR": str(folder)})
    assert "folder " + str(folder) in result.stdout, result.stderr
    assert (result.returncode == 0) == (ending == "return"), result.stderr
    assert list(folder.iterdir()) == []


def test_the_compiled_loops_bound_is_smaller_and_still_above_the_measured_peak():
    """Softmax model T samples through the compiled loops, which keep no autograd tables: its bound sits above the
    peak RSS measured for a whole L = 24 point (1.51 GiB, 100 models, P = 1040) and far below the autograd bound
    (which refused 20 windows on two workers)."""
    from emergence.validation.copy_task.config import FREE_ENERGY_DEFAULTS
    from emergence.validation.copy_task.posterior_memory import compiled_sampling, sampler_point_bytes

    settings = {**FREE_ENERGY_DEFAULTS, "centres": [0.05 + 0.025 * k for k in range(25)], "max_windows": 25}
    compiled = sampler_point_bytes("umbrella", 24, 4, 1040, settings, compiled=True) / 2**30
    autograd = sampler_point_bytes("umbrella", 24, 4, 1040, settings) / 2**30
    assert 1.51 < compiled < 3.5 and autograd > 3 * compiled, (compiled, autograd)
    assert not compiled_sampling("umbrella", "softmax", "M") and not compiled_sampling("replica-exchange", "softmax", "T")
    assert not compiled_sampling("umbrella", "linear", "T") and not compiled_sampling("umbrella", "softmax", None)
