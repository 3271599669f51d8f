"""`emergence bench --executor`: each benchmark module is one point, with the limits of the machine it ran on."""

import json
import sys
import types


def test_bench_points_run_on_an_executor(monkeypatch, capsys, tmp_path):
    from emergence import benchmarks  # the checkout's benchmarks (not installed by a wheel)

    fake = types.ModuleType("emergence.benchmarks.fake_rows")
    fake.run = lambda quick: [{"name": "fake", "size": f"quick={quick}", "ratio_median": 2.0, "ratio_min": 1.0,
                               "ratio_max": 3.0, "engine_seconds": 0.5, "alternative_seconds": 1.0,
                               "engine_bytes": 1e9}]
    monkeypatch.setitem(sys.modules, "emergence.benchmarks.fake_rows", fake)
    monkeypatch.setattr(benchmarks, "BENCHMARK_MODULES", ("emergence.benchmarks.fake_rows",))
    from emergence.cli import main

    out = tmp_path / "bench.json"
    assert main(["bench", "--quick", "--executor", "local", "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    limits = document["hardware_limits"]["emergence.benchmarks.fake_rows"]["cpu"]
    (row,) = document["records"]
    assert row["size"] == "quick=True" and row["limit"] == f"copy bandwidth, {limits['name']}"
    # exact by design: the same IEEE division of the same operands (1e9 / 0.5 = 2e9 exactly)
    assert row["fraction_of_limit"] == 2e9 / limits["copy_bytes_per_second"]
    assert "fake" in capsys.readouterr().out
