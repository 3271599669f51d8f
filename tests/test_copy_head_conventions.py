"""Conventions: parse/as_dict round trip, bad input, and the scale laws they fix."""

import pytest
from hypothesis import given, settings

from emergence.numerics.kernels.copy_head_scales import copy_head_scales_T
from emergence.theory.copy_head.conventions import DEFAULT_CONVENTION, Convention
from emergence.theory.copy_head.model import convention_scales
from emergence.theory.copy_head.symbols import L, V
from emergence.theory.errors import EmergenceError
from emergence.validation.strategies import conventions


@settings(max_examples=25)
@given(conventions())
def test_parse_inverts_as_dict(convention):
    text = ",".join(f"{key}={value}" for key, value in convention.as_dict().items())
    assert Convention.parse(text) == convention


@settings(max_examples=15)
@given(conventions(architectures=("T",)))
def test_scale_laws_equal_the_generated_scales_kernel(convention):
    laws = convention_scales(convention)
    point = {L: 96, V: 12}
    k = convention.attention_normalisation_exponent
    _, _, lam, beta = copy_head_scales_T(96, 12, convention.sigma_G2, convention.a, convention.sigma_W2, convention.c,
                                         convention.beta0, convention.d, convention.e, k)
    assert abs(float(laws["lam"].subs(point)) - lam) <= 1e-9 * lam
    assert abs(float(laws["beta"].subs(point)) - beta) <= 1e-9 * beta


def test_defaults_are_model_T_of_the_note():
    assert DEFAULT_CONVENTION.architecture == "T" and DEFAULT_CONVENTION.d == 1
    assert convention_scales(DEFAULT_CONVENTION)["beta"] == 1 / L


@pytest.mark.parametrize("text", ["architecture=X", "a=one", "sigma_G2=-1", "a", "bogus=1"])
def test_bad_conventions_are_one_line_errors(text):
    with pytest.raises(EmergenceError):
        Convention.parse(text)
