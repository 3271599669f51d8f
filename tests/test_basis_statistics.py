"""Basis statistics: invariants, agreement with the literal definition, conventions, Markov means."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from emergence.numerics.leading_terms.basis_reference import literal_basis_statistics, softmax_jacobian_tensor, uniform_causal_attention
from emergence.numerics.leading_terms.basis_statistics import PAPER_SYMBOLS as FIELDS
from emergence.numerics.leading_terms.basis_statistics import basis_statistics
from emergence.numerics.corpus.markov import expected_bigram, sample_markov_windows
from emergence.validation.strategies import markov_chains, token_corpora



def _scale(array):
    return max(float(np.abs(array).max()), 1e-300)


def _round_off(fast, literal, key, sequences):
    """|fast - literal| that round-off allows where a statistic vanishes (both values are then round-off).

    Each statistic sums at most n = N T (T + 1)/2 causal-pair terms of total size at most 4 (B, Phi: averages
    of terms bounded by 1; Sigma, G: products of two such), and |fl(sum) - sum| <= n eps sum|x_i|
    (Higham, ch. 4).  Q and Delta sum entries of G with weights totalling at most 2, so they also carry
    twice the difference of the two G's.
    """
    count, width = sequences.shape
    bound = 4 * count * (width - 1) * width // 2 * np.finfo(float).eps
    if key in ("Q", "Delta"):
        return 2 * np.abs(fast.composed - literal["G"]).max() + bound * _scale(literal["G"])
    return bound


@given(token_corpora())
def test_sum_rules_and_symmetry(corpus):
    sequences, V = corpus
    stats = basis_statistics(sequences, V)
    scale = max(_scale(stats.bigram), 1e-12)
    assert np.abs(stats.bigram.sum(axis=1)).max() <= 1e-14 * V
    assert np.abs(stats.context.sum(axis=0)).max() <= 1e-14 * V
    # Q and Delta are centred sums of entries of G: their round-off is relative to |G|, which
    # matters where Q itself is round-off (a corpus whose G vanishes in exact arithmetic)
    floor = _scale(stats.composed)
    assert np.abs(stats.key_query.sum(axis=1)).max() <= 1e-12 * max(_scale(stats.key_query), floor) * V
    assert abs(stats.positional.sum()) <= 1e-12 * max(_scale(stats.positional), floor) * sequences.shape[1]
    sigma = stats.interchangeability
    assert np.array_equal(sigma, sigma.T)  # exact by design: symmetrised by construction ((X + X^T)/2, h_k + h_l)
    # eigenvalues carry absolute round-off of order eps V |S| |B| with |S| <= 1 (the counts / NT)
    assert np.linalg.eigvalsh(sigma).min() >= -1e-14 * V * scale


@settings(max_examples=30)
@given(token_corpora(max_vocab=9, max_length=14, max_sequences=6), st.integers(1, 400))
@example((np.array([[0, 1, 2, 0, 1, 2, 0]]), 3), 1)
# Phi vanishes there: both values are round-off, 1.6e-16 apart (the former floor 1e-16 was below one ulp of 1/2)
@example((np.array([[0, 0, 0, 1, 1, 0, 1], [1, 1, 1, 0, 1, 0, 1], [0, 1, 0, 0, 1, 1, 0], [0, 1, 0, 0, 0, 0, 1]]), 2), 283)
def test_fast_statistics_equal_the_literal_definition(corpus, chunk_elements):
    sequences, V = corpus
    fast = basis_statistics(sequences, V, chunk_elements=chunk_elements)
    literal = literal_basis_statistics(sequences, V)
    for key, field in FIELDS.items():
        expected = literal[key]
        difference = np.abs(getattr(fast, field) - expected).max()
        assert difference <= 1e-10 * _scale(expected) or difference <= _round_off(fast, literal, key, sequences), key


@pytest.mark.parametrize("through_overlap", [True, False])
@pytest.mark.parametrize("shape, V", [((6, 13), 5), ((3, 10), 40), ((4, 2), 9), ((1, 2), 1)])
def test_both_ways_to_the_bigram_products_equal_the_literal_definition(monkeypatch, through_overlap, shape, V):
    """Sigma and G through P = S^T S or through S (chosen from the counts) both match the definition."""
    import emergence.numerics.leading_terms.basis_statistics as engine

    monkeypatch.setattr(engine, "_overlap_is_cheaper", lambda counts, xp: through_overlap)
    sequences = np.random.default_rng(sum(shape) + V).integers(0, V, size=shape)
    fast = basis_statistics(sequences, V, chunk_elements=40)
    literal = literal_basis_statistics(sequences, V)
    assert np.array_equal(fast.interchangeability, fast.interchangeability.T)  # exact by design: symmetrised
    for key, field in FIELDS.items():
        expected = literal[key]
        difference = np.abs(getattr(fast, field) - expected).max()
        assert difference <= 1e-10 * _scale(expected) or difference <= _round_off(fast, literal, key, sequences), key


def test_softmax_jacobian_tensor_matches_finite_differences():
    attention = uniform_causal_attention(4)
    jacobian = softmax_jacobian_tensor(attention)
    mask = np.tril(np.ones((4, 4), dtype=bool))
    step = 1e-6
    for t in range(4):
        for k in range(t + 1):
            shifted = np.where(mask[t], 0.0, -np.inf)
            shifted[k] += step
            probabilities = np.exp(shifted - shifted.max())
            probabilities /= probabilities.sum()
            numeric = (probabilities - attention[t]) / step
            assert np.allclose(numeric, jacobian[t, :, k], atol=1e-6)


def test_index_conventions_are_pinned():
    """B[current, next]; Phi[target, prefix token]; Delta[lag]."""
    cycle = np.array([[0, 1, 2, 0, 1, 2, 0]])
    stats = basis_statistics(cycle, 3)
    assert stats.bigram[0, 1] == pytest.approx(1 / 3 - 1 / 9)
    assert stats.bigram[1, 0] == pytest.approx(-1 / 9)
    # token 2 opens the window and is followed by the target 1; 2 is never a target
    opening = np.array([[2, 1, 0, 0, 0]])
    context = basis_statistics(opening, 3).context
    assert context[1, 2] > 0 > context[2, 1]
    assert context[1, 2] == pytest.approx((1 - (1 + 1 / 2 + 1 / 3 + 1 / 4) / 3) / 4)


def test_composed_statistic_never_needs_sigma():
    sequences = np.random.default_rng(3).integers(0, 6, size=(5, 9))
    with_sigma = basis_statistics(sequences, 6)
    without = basis_statistics(sequences, 6, include_interchangeability=False)
    assert without.interchangeability is None
    assert np.allclose(with_sigma.composed, with_sigma.interchangeability @ with_sigma.context, rtol=1e-12, atol=0)
    assert np.array_equal(with_sigma.key_query, without.key_query)  # exact by design: one code path, same input


@settings(max_examples=10)
@given(markov_chains(max_vocab=6), st.integers(0, 1000))
def test_bigram_of_a_stationary_markov_chain_approaches_its_mean(chain, seed):
    windows = sample_markov_windows(chain, count=400, context_length=50, seed=seed)
    measured = basis_statistics(windows, chain.vocab_size).bigram
    assert np.abs(measured - expected_bigram(chain)).max() < 0.03


@pytest.mark.gpu
def test_cupy_backend_agrees_with_numpy():
    from emergence.numerics.backend import array_module, to_numpy

    cupy = array_module("cupy")
    sequences = np.random.default_rng(0).integers(0, 50, size=(20, 65))
    on_gpu = basis_statistics(cupy.asarray(sequences), 50, xp=cupy)
    on_cpu = basis_statistics(sequences, 50)
    for field in FIELDS.values():
        assert np.allclose(to_numpy(getattr(on_gpu, field)), getattr(on_cpu, field), rtol=1e-10, atol=1e-15)


def test_streamed_statistics_equal_the_in_memory_pass():
    from emergence.numerics.leading_terms.streaming import streamed_basis_statistics

    windows = np.random.default_rng(3).integers(0, 11, size=(23, 9))
    expected = basis_statistics(windows, 11)
    streamed = streamed_basis_statistics(lambda: (windows[i : i + 4] for i in range(0, 23, 4)), 11)
    for name in ("bigram", "interchangeability", "context", "composed", "key_query", "positional"):
        assert np.allclose(getattr(streamed, name), getattr(expected, name), rtol=0, atol=1e-15), name
    assert (streamed.num_sequences, streamed.context_length) == (23, 8)
