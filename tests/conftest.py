"""Test configuration: Hypothesis profiles and resets of global state between tests.

Profiles: ``dev`` (the default locally), ``ci`` (Hypothesis' own, loaded automatically
when ``CI`` is set: derandomised, no deadline, no database) and ``thorough`` for long
runs (``HYPOTHESIS_PROFILE=thorough pytest``).

No profile keeps an example database, and Hypothesis' other caches go to the system temp
directory (or ``HYPOTHESIS_STORAGE_DIRECTORY``), so nothing is written into the checkout and a
run never replays an example found by an earlier one: every run draws afresh.  A
counterexample that was found is pinned with ``@example`` in its test.
"""

import os
import random
import tempfile
from pathlib import Path

from real_text import NOVELS, TINYSTORIES, generated_stories, missing_reason, real_text

import mpmath
import numpy as np
import pytest
import sympy
import torch
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "emergence-hypothesis")
settings.register_profile("dev", max_examples=25, deadline=None, database=None)
settings.register_profile(
    "thorough",
    max_examples=500,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
if "HYPOTHESIS_PROFILE" in os.environ:
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
elif not os.environ.get("CI"):
    settings.load_profile("dev")


def pytest_configure(config):
    """The default suite computes on the CPU on every machine: CUDA is hidden from it.

    Commands pick ``cuda`` when torch sees a GPU; on a GPU machine the default suite would then
    train its tiny models there (launch-bound, and with the GPU's own rounding), so a GPU would
    change what the suite tests.  Unless the ``gpu`` marker is selected (``pytest -m gpu``),
    ``CUDA_VISIBLE_DEVICES`` is emptied before anything initialises CUDA (importing torch does
    not); subprocesses inherit it.  tests/test_devices.py tests the GPU choice itself.
    """
    if "gpu" not in config.getoption("markexpr", "").replace("not gpu", ""):
        os.environ["CUDA_VISIBLE_DEVICES"] = ""


@pytest.fixture(autouse=True)
def reset_global_state():
    """Every test starts at mpmath's default precision, an empty SymPy cache and fixed seeds."""
    mpmath.mp.dps = 15
    sympy.core.cache.clear_cache()
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    yield
    mpmath.mp.dps = 15


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models: one torch thread avoids pathological contention on a shared 2-core machine.

    Modules that train small models opt in with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


REAL_TEXT_FIXTURES = ("tinystories", "novels", "bigram_text")


def pytest_collection_modifyitems(items):
    """Every test that reads real English text (through the fixtures below) is marked ``real_text``."""
    for item in items:
        if set(REAL_TEXT_FIXTURES) & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.real_text)


def _real_text_or_skip(name: str) -> Path:
    path = real_text(name)
    if path is None:
        pytest.skip(missing_reason(name))
    return path


@pytest.fixture(scope="session")
def tinystories() -> Path:
    """The TinyStories sample (tests/real_text.py), or a skip that says how to provide it."""
    return _real_text_or_skip(TINYSTORIES)


@pytest.fixture(scope="session")
def novels() -> Path:
    """The novels' excerpts (tests/real_text.py), or a skip that says how to provide it."""
    return _real_text_or_skip(NOVELS)


@pytest.fixture(scope="session")
def bigram_text(tmp_path_factory) -> Path:
    """Text whose tokens depend on the previous ones: the TinyStories sample where present, otherwise the
    engine's seeded story corpus written to a file (a unigram-only model fails against either)."""
    return real_text(TINYSTORIES) or generated_stories(tmp_path_factory.mktemp("generated_corpus"))
