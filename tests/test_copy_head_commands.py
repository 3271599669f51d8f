"""The phase-diagram and scaling commands: JSON keys, plot, provenance, one-line errors."""

import json

import pytest

from emergence.cli import main

PHASE_DIAGRAM_KEYS = {"attention", "L", "V", "convention", "P", "c1", "cG", "aG", "copy_fraction", "loss", "transitions",
                      "missing_transitions", "provenance"}
TRANSITION_KEYS = {"P1", "crossover", "crossover_literal", "P_star", "spinodals", "critical_exponent"}
SCALING_KEYS = {"claim", "law", "convention", "sizes", "P_star", "ratio", "local_exponent", "fit", "holds",
                "tolerance", "dps", "provenance", "law_replaced", "criterion"}


def test_phase_diagram_json_and_plot(tmp_path, capsys):
    out, plot = tmp_path / "pd.json", tmp_path / "pd.png"
    assert main(["phase-diagram", "--attention", "softmax", "--L", "64", "--V", "8", "--P-min", "100",
                 "--P-max", "1e5", "--points", "120", "--json", str(out), "--plot", str(plot)]) == 0
    record = json.loads(out.read_text())
    assert set(record) == PHASE_DIAGRAM_KEYS
    assert set(record["transitions"]) == TRANSITION_KEYS
    assert len(record["P"]) == len(record["c1"]) == len(record["cG"]) == len(record["loss"]) == 120
    assert record["transitions"]["P1"] is None and record["transitions"]["P_star"] > 100
    low, high = record["transitions"]["spinodals"]
    assert low < record["transitions"]["P_star"] < high
    assert record["provenance"]["config"]["L"] == 64
    assert plot.read_bytes()[:4] == b"\x89PNG"
    # the summary prints the record's own value (8 significant digits), not just the name
    assert f"P_star             {record['transitions']['P_star']:.8g}" in capsys.readouterr().out


def test_phase_diagram_linear_to_stdout(capsys):
    assert main(["phase-diagram", "--attention", "linear", "--L", "64", "--V", "8", "--points", "100",
                 "--convention", "c=0", "--json", "-"]) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)  # stdout holds only the JSON; the summary goes to stderr
    assert record["transitions"]["P1"] > 0 and record["transitions"]["P_star"] is None
    assert f"P1                 {record['transitions']['P1']:.8g}" in captured.err
    assert "P_star             none in range" in captured.err
    assert record["convention"]["architecture"] == "T"
    assert all(v is not None for v in record["loss"])


def test_scaling_json_reports_exponents(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["scaling", "--claim", "linear-second-order", "--dps", "30", "--quick", "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    assert set(record) == SCALING_KEYS
    assert record["law"] == "V**2" and record["holds"] is True
    printed = capsys.readouterr().out
    assert "measured local exponent" in printed and "spread" in printed


@pytest.mark.parametrize("arguments, message", [
    (["phase-diagram", "--attention", "linear", "--L", "1", "--V", "8"], "L must be"),
    (["phase-diagram", "--attention", "linear", "--L", "64", "--V", "8", "--P-min", "10", "--P-max", "1"], "P-min"),
    (["phase-diagram", "--attention", "softmax", "--L", "64", "--V", "8", "--convention", "b=1"], "unknown convention"),
    (["phase-diagram", "--attention", "softmax", "--L", "64", "--V", "8", "--convention", "architecture=M"], "architecture M"),
    (["scaling", "--claim", "linear-second-order", "--dps", "5"], "--dps"),
    (["scaling", "--claim", "softmax-first-order", "--law", "x*L"], "'x' is not allowed"),
    (["scaling", "--claim", "softmax-first-order", "--law", "L*log(L"], "--law: cannot"),
    (["scaling", "--claim", "softmax-first-order", "--law", "L.__class__"], "not allowed"),
    (["scaling", "--claim", "linear-second-order", "--law", "open(V)"], "not allowed"),
    (["scaling", "--claim", "linear-second-order", "--law=-V**2", "--quick"], "not finite and positive"),
])
def test_bad_input_is_a_one_line_error(arguments, message, capsys):
    assert main(arguments) == 2
    error = capsys.readouterr().err
    assert error.startswith("emergence: error:") and message in error and error.count("\n") == 1
