"""Loose consistency with the note's reference numbers (L = 256, V = 16, model T defaults).

The note's numbers come from its own reconstruction (with the prior written c1^2/(2 s1) + L cG^2/(2 sG) and
L g^2 for the softmax copy logits); the derivation here differs at O(1/L), so only loose agreement is
expected. Exact values of this derivation are pinned by `emergence check` (validation/golden_baseline.json).
"""

import numpy as np

from emergence.numerics.kernels.copy_head_scales import copy_head_scales, copy_head_softmax_scales
from emergence.numerics.kernels.copy_head_linear import linear_copy_mode_onset, linear_second_order_point
from emergence.numerics.kernels.copy_head_softmax import softmax_action_derivative
from emergence.validation.copy_head_derivation_golden import softmax_coexistence

L, V = 256, 16
KNOBS = (1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0)  # the note's lambda = 1 (r = 0)


def test_linear_reference_numbers():
    s1, sG, lam, beta = copy_head_scales(L, V, *KNOBS)
    assert abs(linear_second_order_point(L, V, s1, lam, beta) / 411.9 - 1) < 1e-3
    # The note's copy onset 1.85e4 was read off numerically (steepest rise); P_G zeroes the copy curvature.
    assert abs(linear_copy_mode_onset(L, V, s1, sG, lam, beta) / 1.85e4 - 1) < 0.15


def local_minima(P):
    sG, lam, beta = copy_head_softmax_scales(L, V, *KNOBS)
    a = np.linspace(0.5 / L, 0.6, 200001)
    slope = softmax_action_derivative(a, P, L, V, sG, lam, beta)
    return a[1:][(slope[:-1] < 0) & (slope[1:] > 0)]


def test_softmax_reference_numbers_and_the_jump():
    coexistence = softmax_coexistence(L, V, r=0)  # the note's lambda = 1
    assert abs(float(coexistence["P_star"]) / 5.29e3 - 1) < 0.05
    a_uniform, a_copy = float(coexistence["a_uniform"]), float(coexistence["a_copy"])
    assert abs(a_uniform / 0.0041 - 1) < 0.05 and abs(a_copy / 0.121 - 1) < 0.15
    assert a_copy - a_uniform >= 0.05 and a_copy >= 10 * a_uniform
    for P in (4.2e3 * 1.05, 1.5e4 * 0.95):  # inside the note's bistable window: two local minima
        assert len(local_minima(P)) == 2
    assert len(local_minima(2.0e3)) == 1
