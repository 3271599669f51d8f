"""The lag statistics of a token stream (numerics/corpus/lag_statistics.py) against brute force and a process
whose lag joints are known in closed form."""

import numpy as np
import pytest

from emergence.base.errors import EmergenceError
from emergence.numerics.corpus.lag_statistics import corpus_lag_statistics, lag_counts, lag_statistics
from emergence.numerics.corpus.stories import story_corpus
from emergence.numerics.corpus.tokenizers import natural_tokens
from emergence.numerics.corpus.vocabulary import vocabulary_from_counts, token_counts


def _pair_loop(documents, V, max_lag):
    """counts[k, a, b] by a double loop over positions: the literal definition."""
    counts = np.zeros((max_lag + 1, V, V), dtype=np.int64)
    for ids in documents:
        for k in range(max_lag + 1):
            for position in range(k, len(ids)):
                counts[k, ids[position], ids[position - k]] += 1
    return counts


def test_counts_equal_the_literal_pair_loop_and_never_cross_a_document():
    rng = np.random.default_rng(0)
    documents = [rng.integers(0, 5, size=n) for n in (1, 2, 7, 30, 3)]
    assert np.array_equal(lag_counts(documents, 5, 6), _pair_loop(documents, 5, 6))  # integers: exact
    joined = [np.concatenate(documents)]
    assert not np.array_equal(lag_counts(joined, 5, 6)[1:], lag_counts(documents, 5, 6)[1:])


def _persistent_stream(rho: float, V: int, documents: int, length: int, seed: int) -> np.ndarray:
    """x_l = x_{l-1} with probability rho, otherwise uniform over V (x_0 uniform): stationary, pi uniform."""
    rng = np.random.default_rng(seed)
    fresh = rng.integers(0, V, size=(documents, length))
    keep = rng.random((documents, length)) < rho
    ids = fresh.copy()
    for position in range(1, length):
        ids[:, position] = np.where(keep[:, position], ids[:, position - 1], fresh[:, position])
    return ids


def _persistent_joints(rho: float, V: int, max_lag: int, power_shift: int = 0) -> np.ndarray:
    """J_k = rho^k diag(1/V) + (1 - rho^k) / V^2: the token survives k steps with probability rho^k."""
    survive = rho ** (np.arange(max_lag + 1) + power_shift)
    return survive[:, None, None] * np.eye(V) / V + (1 - survive)[:, None, None] / V**2


@pytest.mark.parametrize("rho", [0.2, 0.6])
def test_a_persistent_stream_has_the_closed_form_lag_joints(rho):
    """Twelve independent streams: every entry of J_k within 5 standard errors of the closed form; the
    same estimate against rho^(k+1) (a mutated lag exponent) fails."""
    V, max_lag = 3, 4
    estimates = np.array([lag_statistics(_persistent_stream(rho, V, 400, 24, seed), tuple("abc"), max_lag).joints
                          for seed in range(12)])
    mean, error = estimates.mean(axis=0), estimates.std(axis=0, ddof=1) / np.sqrt(len(estimates))
    assert np.all(np.abs(mean - _persistent_joints(rho, V, max_lag)) <= 5 * error + 1e-15)
    assert np.any(np.abs(mean - _persistent_joints(rho, V, max_lag, power_shift=1)) > 5 * error)


def test_the_streamed_file_equals_the_same_classes_in_memory(tmp_path):
    text = story_corpus(40, seed=3)
    path = tmp_path / "stories.txt"
    path.write_text(text, encoding="utf-8")
    streamed = corpus_lag_statistics(path, V=6, max_lag=8, block_bytes=257)
    documents = [part for part in text.split("\n\n") if part.strip()]
    vocabulary = vocabulary_from_counts(token_counts(natural_tokens(d) for d in documents), 5, "unk")
    in_memory = lag_statistics([vocabulary.encode(natural_tokens(d)) for d in documents], vocabulary.tokens, 8)
    assert streamed.classes == in_memory.classes and streamed.classes[-1] == "<unk>"
    assert np.array_equal(streamed.pairs, in_memory.pairs) and np.array_equal(streamed.joints, in_memory.joints)
    assert 0 < streamed.coverage() < 1 and streamed.joints.sum(axis=(1, 2)) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda path: corpus_lag_statistics(path, V=2, max_lag=4), "V >= 3"),
    (lambda path: corpus_lag_statistics(path.parent / "missing.txt", V=4, max_lag=4), "does not exist"),
    (lambda path: corpus_lag_statistics(path, V=4, max_lag=0), "at least 1"),
    (lambda path: corpus_lag_statistics(path, V=4, max_lag=10_000), "no document is longer"),
    (lambda path: corpus_lag_statistics(path, V=400, max_lag=4), "vocabulary size"),
])
def test_bad_input_is_one_emergence_error(tmp_path, call, message):
    path = tmp_path / "c.txt"
    path.write_text(story_corpus(3, seed=0), encoding="utf-8")
    with pytest.raises(EmergenceError, match=message):
        call(path)


def test_real_text_is_a_correlated_stream(bigram_text):
    """On real (or generated) text the lag-1 joint departs from the i.i.d. one far beyond a shuffled stream's."""
    stats = corpus_lag_statistics(bigram_text, V=8, max_lag=2)
    rng = np.random.default_rng(0)
    shuffled_ids = rng.permutation(np.repeat(np.arange(8), np.round(stats.unigram * stats.pairs[0]).astype(int)))
    shuffled = lag_statistics([shuffled_ids], stats.classes, 2)
    assert np.abs(stats.excess(1)).sum() > 5 * np.abs(shuffled.excess(1)).sum()
