"""The torch range is stated once in pyproject.toml; CI's range pass and the README say the same."""

import re
import tomllib
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]


def _stated_range() -> tuple[str, str]:
    extras = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (requirement,) = [r for r in extras["train"] if r.startswith("torch")]
    floor, cap = re.fullmatch(r"torch>=([\d.]+),<([\d.]+)", requirement).groups()
    return floor, cap


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_ci_tests_the_oldest_and_the_newest_torch_of_the_stated_range():
    floor, cap = _stated_range()
    script = (CHECKOUT / ".ci" / "run").read_text()
    oldest = re.search(r"^TORCH_OLDEST=([\d.]+)$", script, re.M).group(1)
    newest = re.search(r"^TORCH_NEWEST=([\d.]+)$", script, re.M).group(1)
    assert _version(oldest)[:2] == _version(floor)[:2] and _version(oldest) >= _version(floor)
    assert _version(floor) < _version(newest) < _version(cap)
    readme = (CHECKOUT / "README.md").read_text()
    assert f"torch ≥ {floor}, < {cap}" in readme and oldest in readme and newest in readme
