"""phase-diagram never raises on a legal convention: a transition not in range is null, with a reason."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from emergence.numerics.copy_head.phase_diagram import phase_diagram
from emergence.numerics.copy_head.reduced_action import reduced_action
from emergence.theory.copy_head.conventions import Convention

TRANSITIONS = ("P1", "critical_exponent", "crossover", "crossover_literal", "P_star", "spinodals")


@settings(max_examples=12, deadline=None)
@given(attention=st.sampled_from(("linear", "softmax")), L=st.integers(8, 96), V=st.integers(2, 16),
       a=st.floats(0.0, 3.0), c=st.floats(0.0, 2.0), d=st.floats(0.0, 2.0), e=st.floats(0.0, 1.0),
       r=st.floats(0.0, 2.0))
@example(attention="softmax", L=64, V=8, a=0.0, c=2.0, d=1.0, e=0.0, r=0.0)  # crashed brentq in literal_crossover
@example(attention="linear", L=64, V=8, a=0.0, c=0.0, d=1.0, e=0.0, r=1.0)  # box scaled with the normalisation
@example(attention="softmax", L=48, V=15, a=0.83984375, c=0.96875, d=1.28515625, e=0.0, r=0.248046875)  # fold on a coarse grid
def test_phase_diagram_never_raises_on_a_legal_convention(attention, L, V, a, c, d, e, r):
    convention = Convention(a=a, c=c, d=d, e=e, r=r)
    diagram = phase_diagram(reduced_action(attention, L, V, convention), np.geomspace(1.0, 1e8, 60))
    record = diagram.as_record(convention)
    assert set(record["transitions"]) == set(TRANSITIONS)
    missing = {name for name in TRANSITIONS if record["transitions"][name] is None}
    assert set(record["missing_transitions"]) == missing
    assert all(isinstance(reason, str) and reason for reason in record["missing_transitions"].values())


@settings(max_examples=20, deadline=None)
@given(L=st.integers(3, 40), c1=st.floats(-2, 2), cG=st.floats(-2, 2))
def test_copy_fraction_and_aG_against_the_dense_matrix(L, c1, cG):
    from emergence.numerics.copy_head.phase_diagram import attention_on_previous, copy_fraction

    S = np.eye(L)[np.arange(L) - 1]  # S[l, l-1] = 1 (cyclic)
    A = c1 * np.ones((L, L)) / L + cG * S
    if np.sum(A * A) < 1e-6:
        return
    assert abs(copy_fraction(c1, cG, L) - np.sum(A * S) ** 2 / (np.sum(A * A) * np.sum(S * S))) < 1e-9
    assert abs(attention_on_previous(c1, cG, L) - np.trace(A.T @ S) / L) < 1e-9
