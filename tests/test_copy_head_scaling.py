"""The three scaling claims on model T at high precision, and the verdict failing for wrong laws."""

import mpmath
import pytest
from hypothesis import given, settings

from emergence.numerics.asymptotics import scaling_check
from emergence.numerics.copy_head.scaling import scaling_report
from emergence.numerics.copy_head.scaling_claims import CLAIMS
from emergence.validation.strategies import log_uniform_floats


@pytest.fixture(scope="module")
def fast_reports():
    return {name: scaling_report(name, dps=30, fast=True) for name in CLAIMS}


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_claims_hold_for_model_t_at_the_fast_sizes(fast_reports, name):
    report = fast_reports[name]
    assert report["holds"] is True
    assert set(report["local_exponent"]) == {s.variable for s in CLAIMS[name].sweeps}
    for fit in report["fit"].values():
        assert fit["coefficients"]["c"] > 0


def test_measured_exponents_are_close_to_the_claimed_powers(fast_reports):
    assert fast_reports["linear-second-order"]["local_exponent"]["V"][-1] == pytest.approx(2.0, abs=0.01)
    crossover = fast_reports["linear-crossover"]["local_exponent"]
    assert crossover["L"][-1] == pytest.approx(1.5, abs=0.05)
    assert crossover["V"][-1] == pytest.approx(0.5, abs=0.05)
    softmax = fast_reports["softmax-first-order"]
    L = [s["L"] for s in softmax["sizes"]]
    law_exponent = 1 + 2 / mpmath.log(mpmath.sqrt(L[-1] * L[-2]))
    assert softmax["local_exponent"]["L"][-1] == pytest.approx(float(law_exponent), abs=0.1)


@pytest.mark.parametrize("name, wrong_powers", [
    ("softmax-first-order", {"L": 1, "logL": 1}),
    ("softmax-first-order", {"L": 1, "logL": 3}),
    ("linear-second-order", {"V": 1.5}),
    ("linear-crossover", {"L": 1.0, "V": 0.5}),
])
def test_verdict_fails_for_a_wrong_law_on_the_same_data(fast_reports, name, wrong_powers):
    report, claim = fast_reports[name], CLAIMS[name]
    ctx = mpmath.mp.clone()
    ctx.dps = 30
    failed = []
    for sweep in claim.sweeps:
        points = [(s["L"], s["V"], value) for s, value in zip(report["sizes"], report["P_star"]) if s["sweep"] == sweep.variable]
        xs = [ctx.mpf(L if sweep.variable == "L" else V) for L, V, _ in points]
        law = [ctx.mpf(L) ** wrong_powers.get("L", 0) * ctx.mpf(V) ** wrong_powers.get("V", 0)
               * ctx.log(L) ** wrong_powers.get("logL", 0) for L, V, _ in points]
        check = scaling_check(xs, [ctx.mpf(v) for _, _, v in points], law, kind=claim.kind, ctx=ctx)
        failed.append(not check["holds"])
    assert any(failed)


@settings(max_examples=20, deadline=None)
@given(log_uniform_floats(0.1, 10.0), log_uniform_floats(0.01, 1.0))
def test_log_verdict_on_synthetic_data_with_log_corrections(constant, correction):
    """P = c x ln^2 x (1 + k/ln x): the claimed ln^2 holds, ln^1 and ln^3 fail, the fit recovers c."""
    ctx = mpmath.mp.clone()
    ctx.dps = 40
    xs = [ctx.mpf(2) ** k for k in range(5, 15)]
    data = [constant * x * ctx.log(x) ** 2 * (1 + correction / ctx.log(x)) for x in xs]
    verdicts = {p: scaling_check(xs, data, [x * ctx.log(x) ** p for x in xs], kind="log", ctx=ctx) for p in (1, 2, 3)}
    assert verdicts[2]["holds"] and not verdicts[1]["holds"] and not verdicts[3]["holds"]
    assert verdicts[2]["fit"]["coefficients"]["c"] == pytest.approx(constant, rel=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_claims_hold_for_model_t_at_full_sizes_and_fifty_digits(name):
    report = scaling_report(name, dps=50)
    assert report["holds"] is True
    if name == "softmax-first-order":
        assert max(s["L"] for s in report["sizes"]) >= 10**4
