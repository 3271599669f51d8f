"""The default model T (readout variance lambda = 1/L, convention r = 1): the reference numbers of
the convention study and the scaling verdicts that reject wrong laws on the same data."""

import json
import math

import mpmath
import pytest

import emergence
from emergence.cli import main
from emergence.numerics.copy_head.scaling_certification import derived_reference
from emergence.theory.copy_head.conventions import DEFAULT_CONVENTION, Convention


def _softmax_diagram(L, capsys):
    assert main(["phase-diagram", "--attention", "softmax", "--L", str(L), "--V", "16", "--points", "400",
                 "--json", "-"]) == 0
    return json.loads(capsys.readouterr().out)


def test_default_readout_scaling_is_one_over_L():
    assert DEFAULT_CONVENTION.r == 1.0 and Convention.parse("").r == 1.0  # exact by design: a default constant
    from emergence.validation.copy_task.config import CopyTaskConvention

    assert CopyTaskConvention.parse("", attention="softmax").r == 1.0  # exact by design: a default constant


@pytest.mark.parametrize("L", [256, 4096])
def test_softmax_jump_lands_on_a_strong_head(L, capsys):
    record = _softmax_diagram(L, capsys)
    transitions = record["transitions"]
    P_star = transitions["P_star"]
    low, high = transitions["spinodals"]
    assert low < P_star < high
    before = [a for P, a in zip(record["P"], record["aG"]) if P < P_star]
    after = [a for P, a in zip(record["P"], record["aG"]) if P > P_star]
    assert before and after
    assert max(before) <= 0.01 and min(after) >= 0.5
    if L == 256:  # 400-point grid on [1, 1e8]; P* itself is refined by Brent
        assert P_star == pytest.approx(16605.1, rel=1e-5)
        assert low == pytest.approx(11238, rel=1e-4) and high == pytest.approx(123313, rel=1e-4)
        # crossover_literal (first cG >= c1, i.e. aG >= ~1/2) is crossed by the jump itself
        assert transitions["crossover_literal"] == pytest.approx(P_star, rel=1e-9)


def test_linear_transitions_do_not_move_with_the_readout_scaling():
    default = emergence.phase_diagram("linear", 256, 16).transitions
    lambda_one = emergence.phase_diagram("linear", 256, 16, convention="r=0").transitions
    assert default["P1"] == pytest.approx(411.85856, rel=1e-6)
    assert default["P1"] == pytest.approx(lambda_one["P1"], rel=1e-9)
    assert default["crossover"] == pytest.approx(lambda_one["crossover"], rel=1e-3)


def test_derived_law_constant_of_the_default_balance_is_reached_far_out():
    """lim P*/(L ln^2 L) = V/(beta0 sG (V-1)) (SymPy, kernel) against the balance solved numerically at
    L = e^1e4 and e^1e5: the gap shrinks and is below 1e-3 (V/(4(V-1)), the lambda = 1 constant, fails)."""
    reference = derived_reference("softmax-first-order", DEFAULT_CONVENTION)
    assert reference.law_constant == pytest.approx(8 / 7, rel=1e-12)
    ctx = mpmath.mp.clone()
    ctx.dps = 30
    gaps = []
    for u in (10**4, 10**5):
        L = ctx.exp(u)
        gaps.append(abs(reference.value(L, 8, ctx) / (L * u**2) / reference.law_constant - 1))
    assert gaps[1] < gaps[0] < 1e-3


@pytest.fixture(scope="module")
def claimed():
    return {name: emergence.scaling(name, dps=30, fast=True).to_dict()
            for name in ("softmax-first-order", "linear-second-order", "linear-crossover")}


@pytest.mark.parametrize("claim, law", [
    ("softmax-first-order", "L*log(L)"),
    ("softmax-first-order", "L*log(L)**1.5"),
    ("softmax-first-order", "L*log(L)**2.5"),
    ("linear-second-order", "V**1.8"),
    ("linear-second-order", "V**2.2"),
    ("linear-crossover", "L**1.3*V**0.5"),
    ("linear-crossover", "L**1.5*V**0.7"),
])
def test_scaling_rejects_a_wrong_law_on_the_same_data(claimed, claim, law):
    report = emergence.scaling(claim, law=law, dps=30, fast=True).to_dict()
    assert report["law_replaced"] is True and report["holds"] is False
    assert report["P_star"] == claimed[claim]["P_star"]  # same data (exact by design: one code path, one process)
    assert claimed[claim]["holds"] is True


@pytest.mark.parametrize("law", ["L*log(L)**2", "3*L*log(L)**2 + L*log(L)", "L*(log(L) - log(log(L)))**2"])
def test_scaling_accepts_laws_with_the_claimed_growth(law):
    assert emergence.scaling("softmax-first-order", law=law, dps=30, fast=True).holds is True


def test_softmax_report_carries_the_certification(claimed):
    report = claimed["softmax-first-order"]
    assert report["criterion"] == "derived balance"
    certification = report["certification"]
    assert max(certification["sizes"]) >= 10**12
    assert all(abs(r - 1) < 1e-5 for r in certification["ratio_to_balance"])
    assert 1.0 < report["effective_log_power"] < certification["effective_log_power"] < 2.0
    assert abs(report["asymptotic"]["kappa"]) < 0.01
    fit = report["fit"]["L"]
    assert fit["derived_constant"] == pytest.approx(8 / 7)
    assert math.isclose(fit["fitted_over_derived"], fit["coefficients"]["c"] / fit["derived_constant"])


def test_softmax_claim_holds_at_the_command_sizes_and_wrong_laws_fail():
    """The claim at the command's default sizes (L = 32 ... 16384, 50 digits); the data are measured once."""
    report = emergence.scaling("softmax-first-order")
    assert report.holds is True and max(s["L"] for s in report.sizes) >= 10**4
    for law in ("L*log(L)", "L*log(L)**1.5", "L*log(L)**2.5"):
        assert emergence.scaling("softmax-first-order", law=law).holds is False
