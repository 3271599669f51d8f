"""`emergence derive copy-head`: every step printed, in every format; bad input is a one-line error."""

import json

import pytest

from emergence.cli import main


@pytest.mark.parametrize("attention", ["linear", "softmax"])
@pytest.mark.parametrize("architecture", ["T", "M"])
def test_json_lists_every_step_with_sympy_and_latex(attention, architecture, capsys):
    assert main(["derive", "copy-head", "--attention", attention, "--architecture", architecture,
                 "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "Reconstruction" in document["note"]
    keys = [step["key"] for step in document["steps"]]
    assert keys[:3] == ["model", "marginal", "population"] and keys[-1] in ("loss", "convention_bound")
    assert ("landau" in keys) == (attention == "linear")
    assert ("asymptotics" in keys) == (attention == "softmax" and architecture == "T")
    for step in document["steps"]:
        for equation in step["equations"]:
            assert equation["sympy"] and equation["latex"]


def test_text_and_latex_formats(capsys):
    assert main(["derive", "copy-head", "--attention", "linear"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Reconstruction") and "P_1 = " in text and "s1 = sigma2*(L + V)**2/(L**2*V**2)" in text
    assert main(["derive", "copy-head", "--attention", "softmax", "--format", "latex"]) == 0
    latex = capsys.readouterr().out
    assert latex.startswith("% Reconstruction") and "W_{-1}" in latex


def test_missing_theory_is_a_one_line_error(capsys):
    assert main(["derive"]) == 2
    assert capsys.readouterr().err.strip() == "emergence: error: choose a theory to derive: copy-head"
