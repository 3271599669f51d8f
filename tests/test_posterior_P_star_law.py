"""scripts/posterior_P_star_law.py: the ratio fit recovers a planted law, and the scan keeps the default's spacing."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "posterior_P_star_law.py"


def _script():
    spec = importlib.util.spec_from_file_location("posterior_P_star_law", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ratio_fit_recovers_a_planted_ratio_law_and_not_a_wrong_one():
    law = _script()
    sizes = [12, 16, 24, 32, 64, 128, 256]
    planted = [{"L": L, "ratio": 1.7 + 5.0 / np.log(L) ** 2} for L in sizes]
    fit = law.ratio_fit(planted)
    assert fit["r_inf"] == pytest.approx(1.7, rel=1e-12) and fit["c"] == pytest.approx(5.0, rel=1e-12)
    assert fit["residual_max"] < 1e-12
    other = law.ratio_fit([{"L": L, "ratio": 1.7 + 5.0 / np.log(L)} for L in sizes])  # 1/ln L is not 1/ln^2 L
    assert other["residual_max"] > 1e-3
    assert law.ratio_fit([{"L": L, "ratio": 1.7 + 5.0 / np.log(L)} for L in sizes], power=1)["c"] == pytest.approx(5.0)
    assert law.ratio_fit(planted[:2] + [{"L": 8, "ratio": None}]) is None  # fewer than three ratios


def test_scan_range_is_the_default_up_to_L16_and_keeps_its_spacing_above():
    law = _script()
    assert law.scan_range(12) == (20.0, 20_000.0, 16)
    default_step = np.log(1000.0) / 15
    for L in (24, 256, 1024):
        low, high, points = law.scan_range(L)
        assert low == 20.0 * L / 16 and high == 20_000.0 * (L / 16) ** 2
        assert np.log(high / low) / (points - 1) <= default_step


def test_an_unknown_trial_is_refused_with_one_line(tmp_path, capsys):
    assert _script().main(["--sizes", "8", "--trial", "row", "--out", str(tmp_path / "x.json")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()
