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


class _DoubleWell:
    """S = (y^2 - 1)^2 + (P - 2) y: spinodals at P = 2 -+ 8/sqrt(27); S'' = 12 y^2 - 4 vanishes at y = +-1/sqrt(3)."""

    attention = "softmax"
    bounds = np.array([[-2.0, 2.0]])

    def canonical(self, y):
        return y

    def value(self, y, P):
        return (y[0] ** 2 - 1) ** 2 + (P - 2) * y[0]

    def gradient(self, y, P):
        return (4 * y[0] * (y[0] ** 2 - 1) + P - 2)[None]

    def hessian(self, y, P):
        return (12 * y[0] ** 2 - 4 + 0 * P)[None, None]


def test_inflection_far_from_the_fold_is_a_clean_reason_not_a_crash():
    """_inflection used to raise a bare ValueError; it is FoldNotFound with where it looked."""
    import pytest

    from emergence.numerics.copy_head.first_order import FoldNotFound, _inflection

    assert abs(_inflection(_DoubleWell(), 1.0, 0.5, 0.3) - 3 ** -0.5) < 1e-12
    with pytest.raises(FoldNotFound, match="no inflection point"):
        _inflection(_DoubleWell(), 1.0, 1.5, 0.2)  # S'' > 0 on [1.3, 1.7]


def test_phase_diagram_reports_why_a_transition_could_not_be_located(monkeypatch):
    """A root finder failing on a grid (here: the fold of the metastable branch) gives a null transition with
    the failure as its reason, never a traceback."""
    from emergence.numerics.copy_head import phase_diagram as module
    from emergence.numerics.copy_head.first_order import FoldNotFound

    def no_fold(action, minima):
        raise FoldNotFound("no inflection point of the action within u = 1.5 +- 0.2 at P = 1")

    monkeypatch.setattr(module, "spinodals", no_fold)
    action = reduced_action("softmax", 64, 8)
    record = phase_diagram(action, np.geomspace(10.0, 1e6, 80)).as_record(Convention())
    assert record["transitions"]["P_star"] is not None and record["transitions"]["spinodals"] is None
    assert record["missing_transitions"]["spinodals"].startswith("not located on this grid: no inflection point")
