"""Compiled (Numba) pair passes of the basis statistics: equal to the NumPy reference; optional."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given, settings

from emergence.numerics.leading_terms.basis_reference import literal_basis_statistics
from emergence.numerics.leading_terms.basis_statistics import basis_statistics
from emergence.base.errors import BackendUnavailableError
from emergence.validation.strategies import token_corpora

FIELDS = ("bigram", "interchangeability", "context", "composed", "key_query", "positional")


def _both(sequences, V):
    pytest.importorskip("numba")
    return basis_statistics(sequences, V, pair_pass="numpy"), basis_statistics(sequences, V, pair_pass="compiled")


@settings(max_examples=40)
@given(token_corpora(max_vocab=12, max_length=20, max_sequences=6))
@example((np.array([[0, 1, 2, 0, 1, 2, 0]]), 3))
@example((np.array([[0, 0]]), 1))
def test_compiled_and_numpy_passes_agree_to_1e_12(corpus):
    sequences, V = corpus
    reference, compiled = _both(sequences, V)
    for field in FIELDS:
        assert np.abs(getattr(compiled, field) - getattr(reference, field)).max() <= 1e-12, field


def test_compiled_passes_equal_the_literal_definition():
    """The compiled path against the literal T^3 construction directly."""
    pytest.importorskip("numba")
    sequences = np.random.default_rng(3).integers(0, 6, size=(5, 12))
    literal = literal_basis_statistics(sequences, 6)
    compiled = basis_statistics(sequences, 6, pair_pass="compiled")
    for key, field in {"Phi": "context", "G": "composed", "Q": "key_query", "Delta": "positional"}.items():
        assert np.abs(getattr(compiled, field) - literal[key]).max() <= 1e-13, key


def test_larger_corpus_agrees_with_numpy_at_V_300():
    sequences = np.random.default_rng(0).integers(0, 300, size=(8, 65))
    reference, compiled = _both(sequences, 300)
    for field in FIELDS:
        assert np.abs(getattr(compiled, field) - getattr(reference, field)).max() <= 1e-12, field


def test_pair_pass_names_are_checked():
    sequences = np.array([[0, 1, 0]])
    with pytest.raises(BackendUnavailableError):
        basis_statistics(sequences, 2, pair_pass="fortran")


def test_engine_works_without_numba():
    """With numba blocked, auto falls back to the NumPy passes and 'compiled' is one clear error."""
    program = (
        "import sys; sys.modules['numba'] = None\n"
        "import numpy as np\n"
        "from emergence.numerics.leading_terms.basis_statistics import basis_statistics\n"
        "from emergence.numerics.leading_terms.compiled_pair_pass import compiled_pair_pass_available\n"
        "from emergence.base.errors import BackendUnavailableError\n"
        "assert not compiled_pair_pass_available()\n"
        "stats = basis_statistics(np.array([[0, 1, 0, 1], [1, 1, 0, 0]]), 2)\n"
        "assert abs(stats.key_query.sum(axis=1)).max() < 1e-15\n"
        "try:\n"
        "    basis_statistics(np.array([[0, 1, 0]]), 2, pair_pass='compiled')\n"
        "except BackendUnavailableError as error:\n"
        "    print('refused:', error)\n"
        "assert 'numba' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
    )
    completed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert "refused:" in completed.stdout and "emergence[fast]" in completed.stdout
