"""`emergence bench`: each row's fraction is of the limits of the device its engine ran on, never another's."""

import json
import sys
import types

import pytest

CPU = {"name": "CPU, 2 cores", "float64_flop_per_second": 5e10, "float32_flop_per_second": 1e11,
       "copy_bytes_per_second": 1e10}
GPU = {"name": "Fake GPU 141GB", "float64_flop_per_second": 6e13, "float32_flop_per_second": 5e13,
       "copy_bytes_per_second": 4e12}


def _row(device, **work):
    return {"name": f"{device} row", "size": "n=1", "ratio_median": 50.0, "ratio_min": 40.0, "ratio_max": 60.0,
            "engine_seconds": 0.5, "alternative_seconds": 25.0, "engine_device": device,
            "engine_cores": 2 if device == "cpu" else None, "alternative_device": "cpu", "alternative_cores": 2,
            **work}


def test_a_gpu_row_is_a_fraction_of_the_gpu_limits_and_a_cpu_row_of_the_cpu_limits():
    from emergence.benchmarks.hardware_limits import with_fraction_of_limit

    limits = {"cpu": CPU, "cuda": GPU}
    gpu_bytes = with_fraction_of_limit(_row("cuda", engine_bytes=1e12), limits)
    gpu_flops = with_fraction_of_limit(_row("cuda", engine_flops=1e12, engine_dtype="float32"), limits)
    cpu_bytes = with_fraction_of_limit(_row("cpu", engine_bytes=1e9), limits)
    # exact by design: the same IEEE divisions of the same operands
    assert gpu_bytes["fraction_of_limit"] == (1e12 / 0.5) / GPU["copy_bytes_per_second"]
    assert gpu_bytes["limit"] == "copy bandwidth, Fake GPU 141GB"
    assert gpu_flops["fraction_of_limit"] == (1e12 / 0.5) / GPU["float32_flop_per_second"]
    assert cpu_bytes["fraction_of_limit"] == (1e9 / 0.5) / CPU["copy_bytes_per_second"]
    assert cpu_bytes["limit"] == "copy bandwidth, CPU, 2 cores"


def test_a_gpu_row_without_gpu_limits_gets_no_fraction_rather_than_the_cpus():
    from emergence.benchmarks.hardware_limits import with_fraction_of_limit

    row = with_fraction_of_limit(_row("cuda", engine_bytes=1e12), {"cpu": CPU})
    assert "fraction_of_limit" not in row and row["limit"] == "no cuda limits measured"


def test_bench_prints_each_rows_device_and_fraction_of_its_own_limits(monkeypatch, capsys, tmp_path):
    from emergence import benchmarks
    from emergence.benchmarks import suite

    fake = types.ModuleType("emergence.benchmarks.fake_devices")
    fake.run = lambda quick: [_row("cuda", engine_bytes=1e12), _row("cpu", engine_bytes=1e9)]
    monkeypatch.setitem(sys.modules, "emergence.benchmarks.fake_devices", fake)
    monkeypatch.setattr(benchmarks, "BENCHMARK_MODULES", ("emergence.benchmarks.fake_devices",))
    monkeypatch.setattr(suite, "measure_hardware_limits", lambda quick: {"cpu": CPU, "cuda": GPU})
    from emergence.cli import main

    out = tmp_path / "bench.json"
    assert main(["bench", "--quick", "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["hardware_limits"] == {"cpu": CPU, "cuda": GPU}
    gpu_row, cpu_row = document["records"]
    assert gpu_row["fraction_of_limit"] == 2e12 / GPU["copy_bytes_per_second"]  # 50 %, not 2e4 % of the CPU's
    assert cpu_row["fraction_of_limit"] == 2e9 / CPU["copy_bytes_per_second"]
    table = capsys.readouterr().out.splitlines()
    gpu_line = next(line for line in table if line.startswith("cuda row"))
    assert "cuda vs 2 cores" in gpu_line and "50 %" in gpu_line and "Fake GPU 141GB" in gpu_line


def test_a_row_without_an_alternative_prints_dashes():
    from emergence.benchmarks.harness import engine_only, format_table

    row = engine_only("engine-only", "n=1", lambda: None, repeats=1, engine_device="cuda")
    fields = format_table([row]).splitlines()[-1].split()
    assert row["ratio_median"] is None and row["alternative_seconds"] is None
    # name, size, ratio, engine s, alt s, "cuda vs -", fraction: the ratio, alternative and fraction are dashes
    assert fields[2] == "-" and fields[4:] == ["-", "cuda", "vs", "-", "-"]


@pytest.mark.gpu
def test_the_gpu_basis_row_is_a_fraction_of_the_measured_gpu_limits():
    from emergence.benchmarks import basis_statistics_gpu
    from emergence.benchmarks.hardware_limits import measure_hardware_limits, with_fraction_of_limit

    limits = measure_hardware_limits(quick=True)
    if "cuda" not in limits:
        pytest.fail("the gpu tests need a GPU that torch or CuPy sees")
    row = with_fraction_of_limit(basis_statistics_gpu._gpu_record(64, 500, 256, repeats=1), limits)
    assert row["engine_device"] == "cuda" and limits["cuda"]["name"] in row["limit"]
    assert row["fraction_of_limit"] == row["achieved_bytes_per_second"] / limits["cuda"]["copy_bytes_per_second"]
