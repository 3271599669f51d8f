r"""Benchmark: one token-space map scored by the Gram metric, power sums against masked copies.

What ``emergence checkpoints`` does about 300 times per model (every head's and layer's map): the
map's row-normalised Gram (K x K) is compared with the theory's by the Pearson correlation of the
off-diagonal entries, beside the frequency baseline :math:`pp^\top` and the noise level over
``permutations`` relabelings of the theory's tokens.  The engine
(:meth:`~emergence.numerics.leading_terms.token_metrics.Reference.score_variant` on one variant's
representation) takes every correlation from power sums over the whole matrices with the diagonal's share
subtracted, on Grams centred once; it computes each side's moments once (a relabeling changes none but the
diagonal's order) and gathers the relabelled theory a block of 256 rows at a time
(:func:`~emergence.numerics.leading_terms.token_metrics.relabelled_inner`).  The alternative is what one
writes from the definition: masked copies of the off-diagonal entries, ``np.corrcoef``, and ``target[order][:, order]``.
Both score the same Grams (built once, outside the timing); the row records the largest difference of
the values (``max_abs_difference``).

Work counted (``engine_bytes``), a traffic model: K^2 float64 read from memory 4 times for the value
(the map's sum and squares, the inner product's two sides), 3 for the frequency baseline, and 2 per
relabeling (the gathered theory rows and the map's rows; the gathered block stays in cache).  Not a
test: nothing is asserted.
"""

from __future__ import annotations

import numpy as np

from emergence.benchmarks.hardware_limits import cpu_cores, sides
from emergence.benchmarks.harness import compare
from emergence.numerics.leading_terms import token_metrics as tm

PERMUTATIONS = 8


def _masked_correlation(a: np.ndarray, b: np.ndarray) -> float:
    mask = ~np.eye(len(a), dtype=bool)
    return float(np.corrcoef(a[mask], b[mask])[0, 1])


def _record(keep: int, repeats: int) -> dict:
    rng = np.random.default_rng(0)
    frequency = 1.0 / np.arange(1, keep + 1)
    frequency /= frequency.sum()
    theory = np.outer(frequency, frequency) * keep + rng.standard_normal((keep, 8)) @ rng.standard_normal((8, keep)) / keep
    model_map = tm.Factored(rng.standard_normal((keep, 64)) + 2.0, rng.standard_normal((keep, 64)))
    reference = tm.Reference.build("gram", theory, frequency, tm.default_k0(keep), PERMUTATIONS)
    representation = tm.represent("gram", model_map)
    gram, target = tm.row_normalised_gram(model_map), tm.row_normalised_gram(theory)
    outer = np.outer(frequency, frequency)
    orders = reference.permutations["all"]

    def engine():
        return reference.score_variant("all", representation, None)

    def literal():
        return {"value": _masked_correlation(gram, target), "frequency": _masked_correlation(gram, outer),
                "noise": float(np.std([_masked_correlation(gram, target[order][:, order]) for order in orders]))}

    fast, slow = engine(), literal()
    difference = max(abs(fast["value"] - slow["value"]), abs(fast["baselines"]["frequency"] - slow["frequency"]),
                     abs(fast["noise"] - slow["noise"]))
    record = compare("Gram metric: power sums vs masked", f"K={keep}, {PERMUTATIONS} relabelings", engine, literal,
                     repeats=repeats, **sides("cpu", cpu_cores(), "cpu", cpu_cores()))
    passes = 4 + 3 + 2 * PERMUTATIONS
    record["engine_bytes"] = passes * 8 * keep**2
    record["work_counted"] = "traffic model: K^2 float64 read per pass; 4 (value) + 3 (frequency) + 2 per relabeling"
    record["max_abs_difference"] = difference
    return record


def run(quick: bool) -> list[dict]:
    """One row at K = 2000 (quick: 1000)."""
    return [_record(1000, 2)] if quick else [_record(2000, 5)]
