"""The no-precursor criterion: holds for the default softmax model, fails for a model with a precursor."""

import pytest

import emergence
from emergence.numerics.copy_head.precursor import PRECURSOR_THRESHOLD, precursor_verdict


@pytest.mark.parametrize("L, V, convention", [(256, 16, None), (4096, 16, None), (256, 16, "r=0")])
def test_softmax_has_no_precursor(L, V, convention):
    verdict = precursor_verdict(emergence.phase_diagram("softmax", L, V, convention=convention).to_dict())
    assert verdict["holds"] is True and verdict["fraction"] < 0.01


@pytest.mark.parametrize("L, V", [(1024, 4), (4096, 8)])
def test_linear_attention_with_a_copy_jump_has_a_pooling_precursor(L, V):
    """Model T's linear copy mode switches on by a jump at large L/V, after uniform pooling c1 grew from P1 on."""
    record = emergence.phase_diagram("linear", L, V).to_dict()
    assert record["transitions"]["P_star"] is not None and record["transitions"]["P1"] < record["transitions"]["P_star"]
    verdict = precursor_verdict(record)
    assert verdict["holds"] is False and verdict["by_order_parameter"]["c1"] > 10 * PRECURSOR_THRESHOLD


def test_no_jump_is_not_a_pass():
    record = emergence.phase_diagram("linear", 256, 16).to_dict()  # smooth crossover: no P_star
    verdict = precursor_verdict(record)
    assert verdict["holds"] is False and "no first-order jump" in verdict["reason"]


def test_a_softmax_record_with_a_rising_copy_weight_fails():
    """The same default record with c_G made to rise towards the jump (a continuous precursor) fails."""
    record = emergence.phase_diagram("softmax", 256, 16).to_dict()
    P_star = record["transitions"]["P_star"]
    below = [i for i, P in enumerate(record["P"]) if P < P_star]
    ramp = {i: 0.3 * k / len(below) for k, i in enumerate(below)}
    record["cG"] = [cG + ramp.get(i, 0.0) for i, cG in enumerate(record["cG"])]
    record["c1"] = [1 - cG for cG in record["cG"]]
    assert precursor_verdict(record)["holds"] is False
