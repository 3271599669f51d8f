"""The Gram and weight metrics, their frequency baseline by power sums, and a verdict that fails on frequency alone."""

import numpy as np
import pytest

from emergence.numerics.leading_terms import token_metrics as tm

K = 80


def _zipf(keep=K):
    p = 1.0 / np.arange(1, keep + 1)
    return p / p.sum()


def _theory(seed=0):
    """A K x K matrix with token structure beyond frequency: p p^T plus a rank-4 random part."""
    rng = np.random.default_rng(seed)
    p = _zipf()
    return 3 * np.outer(p, p) + rng.standard_normal((K, 4)) @ rng.standard_normal((4, K)) / K


def test_frequency_baselines_from_sums_equal_the_explicit_outer_product():
    rng = np.random.default_rng(1)
    p, a = _zipf(), rng.standard_normal((K, K))
    gram = tm.row_normalised_gram(a)
    outer = np.outer(p, p)
    # sums of K^2 products of order-1 terms: 64 rounding units of 1
    assert abs(tm.offdiagonal_correlation_with_outer(gram, p) - tm.similarity("gram", gram, outer)) <= 64 * 2.0**-52
    assert abs(tm.cosine_with_outer(a, p) - tm.frobenius_cosine(a, outer)) <= 64 * 2.0**-52
    assert np.allclose(np.diag(gram), 1.0, rtol=0, atol=8 * 2.0**-52)


def _masked_correlation(a, b):
    """The off-diagonal Pearson correlation the slow way: masked copies and numpy's corrcoef."""
    mask = ~np.eye(len(a), dtype=bool)
    return np.corrcoef(a[mask], b[mask])[0, 1]


def test_offdiagonal_correlation_from_power_sums_equals_the_masked_entries():
    """Power sums with the diagonal subtracted give the masked correlation: on uncentred matrices (off-diagonal
    mean 0.5, spread 0.3: error about (mu/sigma)^2 = 3 rounding units per summed term), on a sub-block view
    (the rank > k0 variant, not contiguous) and on centred Grams of nearly parallel rows (mu/sigma = 240 before
    centring, the case of a random model's hidden states). The diagonal (1 in a Gram) must not enter."""
    rng = np.random.default_rng(4)
    a = 0.5 + 0.3 * rng.standard_normal((K, K)) + 5 * np.eye(K)
    b = 0.5 * a + 0.3 * rng.standard_normal((K, K)) - 3 * np.eye(K)
    tolerance = 64 * K * 2.0**-52  # K^2 terms summed pairwise or blocked, each term's rounding about 3 units
    assert abs(tm.similarity("gram", a, b) - _masked_correlation(a, b)) <= tolerance
    assert abs(tm.similarity("gram", a[20:, 20:], b[20:, 20:]) - _masked_correlation(a[20:, 20:], b[20:, 20:])) <= tolerance
    aligned = rng.standard_normal((K, 40)) + 6 * rng.standard_normal(40)
    other = rng.standard_normal((K, 30)) + 1
    expected = _masked_correlation(tm.row_normalised_gram(aligned), tm.row_normalised_gram(other))
    centred = tm.represent("gram", aligned), tm.represent("gram", other)
    # centred: below one rounding unit in five seeds; uncentred power sums miss by 60-3200 units
    assert abs(tm.similarity("gram", *centred) - expected) <= 16 * 2.0**-52


@pytest.mark.parametrize("metric", tm.METRICS)
def test_the_noise_level_equals_the_metric_against_explicitly_relabelled_theories(metric):
    """The noise level uses the theory's moments once and gathers the relabelled theory a block of rows at a
    time; the explicit way relabels the whole matrix and recomputes everything."""
    rng = np.random.default_rng(5)
    reference = tm.Reference.build(metric, _theory(), _zipf(), k0=20, permutations=6, seed=1)
    matrix = _theory(seed=2) + 0.3 * rng.standard_normal((K, K)) / K
    representations = tm.variant_representations(metric, matrix, reference.k0)
    for variant in tm.VARIANTS:
        target, representation = reference.targets[variant], representations[variant]
        explicit = np.std([tm.similarity(metric, representation, target[order][:, order])
                           for order in reference.permutations[variant]])
        scored = reference.score_variant(variant, representation, None)
        assert abs(scored["noise"] - explicit) <= 64 * K * 2.0**-52
        assert scored["value"] == pytest.approx(tm.similarity(metric, representation, target), rel=0, abs=64 * K * 2.0**-52)
    # a general matrix (a Gram's diagonal is constant, so there the diagonal's relabeling is invisible)
    a, b, order = rng.standard_normal((K, K)), rng.standard_normal((K, K)), rng.permutation(K)
    relabelled = tm.similarity_from(metric, tm.relabelled_inner(a, b, order, rows=7), tm.Moments.of(metric, a),
                                    tm.Moments.of(metric, b).relabelled(order))
    assert abs(relabelled - tm.similarity(metric, a, b[order][:, order])) <= 64 * K * 2.0**-52


def test_top_component_removed_leaves_the_rest_of_the_spectrum():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((K, 30))
    s = np.linalg.svd(a, compute_uv=False)
    assert np.allclose(np.linalg.svd(tm.without_top_component(a), compute_uv=False)[:-1], s[1:], rtol=1e-12, atol=0)


@pytest.mark.parametrize("metric", tm.METRICS)
def test_planted_structure_passes_and_frequency_alone_fails(metric):
    """A model whose map is the theory plus noise passes; one whose map is p p^T (what a unigram-only model learns)
    plus the same noise fails, as does a random map; without a random-init baseline nothing passes."""
    rng = np.random.default_rng(3)
    theory, p = _theory(), _zipf()
    reference = tm.Reference.build(metric, theory, p, k0=20, permutations=16, seed=0)
    random_map = rng.standard_normal((K, K)) * np.std(theory)
    random_values = reference.values(random_map)
    noise = 0.3 * np.std(theory) * rng.standard_normal((K, K))
    planted = reference.score(theory + noise, random_values)
    frequency_only = reference.score(3 * np.outer(p, p) + noise, random_values)
    assert planted["passes"], planted["reason"]
    assert planted["excess"] > tm.NOISE_MULTIPLE * planted["noise"] > 0
    assert not frequency_only["passes"] and "within" in frequency_only["reason"]
    assert not reference.score(random_map, random_values)["passes"]
    missing = reference.score(theory + noise, None)
    assert not missing["passes"] and missing["reason"] == "no random-init baseline"
    for variant in ("rank_above_k0", "top_component_removed"):
        assert set(planted[variant]) == {"value", "baselines", "strongest_baseline", "excess", "noise"}


def test_excess_is_over_the_baselines_size():
    """A model anti-aligned with p p^T is as frequency-bound as an aligned one: the excess subtracts |baseline|."""
    theory, p = _theory(), _zipf()
    reference = tm.Reference.build("weight", theory, p, k0=20, permutations=4)
    scored = reference.score(-5 * np.outer(p, p) + theory / 10, {v: 0.0 for v in tm.VARIANTS})
    assert scored["baselines"]["frequency"] < -0.5
    assert scored["excess"] == scored["value"] - abs(scored["baselines"]["frequency"])  # one subtraction, exact


def test_lag_profile_is_the_deltas_construction_by_loops():
    """D_d = sum_{t >= d} (1/t)(S_{t,t-d} - mean_{k<=t} S_{tk}), t 1-based, against explicit loops."""
    from emergence.numerics.leading_terms.positions import lag_profile

    rng = np.random.default_rng(4)
    scores = rng.standard_normal((12, 12))
    expected = np.zeros(12)
    for t in range(1, 13):
        row = scores[t - 1, :t]
        for tau in range(1, t + 1):
            expected[t - tau] += (row[tau - 1] - row.mean()) / t
    assert np.allclose(lag_profile(scores), expected, rtol=0, atol=32 * 2.0**-52)
    assert abs(lag_profile(scores).sum()) <= 32 * 2.0**-52  # centred per query: the lags sum to zero, as Delta does


def test_position_verdict_passes_a_planted_profile_and_fails_a_random_one():
    from emergence.numerics.leading_terms.positions import PositionReference

    delta = np.exp(-np.arange(32) / 4.0)
    delta -= delta.mean()
    reference = PositionReference.build(delta, permutations=16)
    random_profile = np.random.default_rng(5).standard_normal(32)
    baseline = reference.values(random_profile)
    assert reference.score(delta + 0.05 * random_profile, baseline)["passes"]
    assert not reference.score(random_profile, baseline)["passes"]
    assert reference.score(delta, None)["reason"] == "no random-init baseline"


def test_factored_maps_give_the_dense_gram_and_deflation():
    """A rank-r map L R^T: its Gram through R^T R and its deflation through the r x r core equal the dense ones."""
    rng = np.random.default_rng(6)
    factored = tm.Factored(rng.standard_normal((K, 6)), rng.standard_normal((K, 6)))
    dense = factored.dense()
    # K^2 r products of order-1 terms; relative rounding a few hundred units
    assert np.allclose(tm.row_normalised_gram(factored), tm.row_normalised_gram(dense), rtol=0, atol=2.0**-40)
    assert np.allclose(tm.without_top_component(factored).dense(), tm.without_top_component(dense), rtol=0,
                       atol=2.0**-40 * np.abs(dense).max())
    summed = tm.Factored.concatenate([factored, factored])
    assert np.allclose(summed.dense(), 2 * dense, rtol=0, atol=2.0**-48 * np.abs(dense).max())
