"""Conventions: parse/as_dict round trip, bad input, and the scale laws they fix."""

import pytest
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.numerics.kernels.copy_head_scales import copy_head_scales_T
from emergence.theory.copy_head.conventions import DEFAULT_CONVENTION, Convention
from emergence.theory.copy_head.model import convention_scales
from emergence.theory.copy_head.symbols import L, V
from emergence.base.errors import EmergenceError
from emergence.validation.strategies import conventions


@settings(max_examples=25)
@given(conventions())
def test_parse_inverts_as_dict(convention):
    text = ",".join(f"{key}={value}" for key, value in convention.as_dict().items())
    assert Convention.parse(text) == convention  # exact by design: floats are written with repr, which round-trips


@settings(max_examples=15)
@given(conventions(architectures=("T",)))
def test_scale_laws_equal_the_generated_scales_kernel(convention):
    laws = convention_scales(convention)
    point = {L: 96, V: 12}
    k = convention.attention_normalisation_exponent
    _, _, lam, beta = copy_head_scales_T(96, 12, convention.sigma_G2, convention.a, convention.sigma_W2, convention.c,
                                         convention.r, convention.beta0, convention.d, convention.e, k)
    assert abs(float(laws["lam"].subs(point)) - lam) <= 1e-9 * lam
    assert abs(float(laws["beta"].subs(point)) - beta) <= 1e-9 * beta


def test_defaults_are_model_T_of_the_note():
    assert DEFAULT_CONVENTION.architecture == "T" and DEFAULT_CONVENTION.d == 1
    assert convention_scales(DEFAULT_CONVENTION)["beta"] == 1 / L


@pytest.mark.parametrize("text", ["architecture=X", "a=one", "sigma_G2=-1", "a", "bogus=1"])
def test_bad_conventions_are_one_line_errors(text):
    with pytest.raises(EmergenceError):
        Convention.parse(text)


@settings(max_examples=10, deadline=None)
@given(r=st.floats(0.0, 2.0), L_value=st.integers(16, 2048), V_value=st.integers(2, 64))
def test_matched_normalisation_leaves_the_linear_transitions_unchanged(r, L_value, V_value):
    """lambda = L^-r with A = G / L^(1 - r/2): P1 and the copy-mode onset do not depend on r."""
    from emergence.numerics.copy_head.reduced_action import generated_kernels, model_scales
    from emergence.numerics.kernels.copy_head_linear import linear_copy_mode_onset, linear_second_order_point

    kernels = generated_kernels()
    points = []
    for convention in (Convention(), Convention(r=r)):
        s1, sG, lam, beta = model_scales(kernels, "linear", L_value, V_value, convention)
        points.append((linear_second_order_point(L_value, V_value, s1, lam, beta),
                       linear_copy_mode_onset(L_value, V_value, s1, sG, lam, beta)))
    np.testing.assert_allclose(points[0], points[1], rtol=1e-9)


def test_matched_normalisation_is_derived():
    from emergence.theory.copy_head.order_parameters import matched_linear_normalisation
    from emergence.theory.copy_head.symbols import r_W

    derived = matched_linear_normalisation()
    assert derived["invariance"] == (0, 0, 0)
    for r in (0.0, 0.5, 1.0, 2.0):
        # exact by design: 1 - r/2 is exact in binary for these dyadic r
        assert float(derived["k"].subs(r_W, r)) == Convention(r=r).attention_normalisation_exponent
