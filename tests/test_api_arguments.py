"""The API checks its arguments before any work, in one layer (:mod:`emergence.base.arguments`): each bad
argument is an :class:`~emergence.base.errors.InvalidArgumentError` whose message names the API parameter,
never a command-line flag; the command line puts its own flag in that place.

Every case below was found by calling the API as a user would; each failed before the check existed
(silently rounded, accepted, or a bare ``TypeError``/``ValueError``/``AttributeError``).
"""

import pytest

import emergence
from emergence import api
from emergence.base.errors import EmergenceError, InvalidArgumentError
from emergence.cli import main

CASES = {
    "non-integral L": (lambda: api.phase_diagram("softmax", 64.5, 8), "L", "L must be an integer >= 3, got 64.5"),
    "L as text": (lambda: api.phase_diagram("softmax", "64", 8), "L", "got '64' (a str)"),
    "L as a truth value": (lambda: api.phase_diagram("softmax", True, 8), "L", "got True (a bool)"),
    "empty P": (lambda: api.phase_diagram("softmax", 64, 8, P=[]), "P", "P must hold at least 8 values, got 0"),
    "L is None": (lambda: api.phase_diagram("softmax", None, 8), "L", "got None"),
    "tokenizer 5": (lambda: api.basis("synthetic", tokenizer=5), "tokenizer", "tokenizer 5: unknown tokenizer; choose natural"),
    "missing .npz": (lambda: api.predict_weights("missing.npz", 1, 0.1, 1), "stats", "'missing.npz' does not exist"),
    "seeds as text": (lambda: api.validate_copy_head("linear", 8, 4, [8, 16], seeds="two"), "seeds",
                      "seeds must be an integer >= 1, got 'two'"),
    "dps too small": (lambda: api.scaling("linear-second-order", dps=5), "dps", "dps must be an integer >= 15"),
    "top 0": (lambda: api.associate("synthetic", "the", top=0), "top", "top must be an integer >= 1, got 0"),
    "unknown executor": (lambda: api.scaling("linear-second-order", executor="ray"), "executor",
                         "executor must be local, dask or dask:ADDRESS"),
    "one window centre at 0": (lambda: api.validate_posterior("softmax", 8, 4, centres=[0]), "centres",
                               "centres must hold at least 2 values"),  # found by tests/test_api_fuzz.py
    "basin divide at 1": (lambda: api.validate_posterior("softmax", 8, 4, divide=1.0), "divide", "< 1, got 1.0"),
    "method False": (lambda: api.validate_posterior("softmax", 8, 4, method=False), "method", "got False"),
    "unsafe law": (lambda: api.scaling("linear-second-order", law="os"), "law", "law: 'os' is not allowed"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_bad_argument_is_refused_naming_the_parameter_not_a_flag(case):
    call, parameter, fragment = CASES[case]
    with pytest.raises(InvalidArgumentError) as caught:
        call()
    assert caught.value.parameter == parameter and fragment in str(caught.value)
    assert "--" not in str(caught.value) and "\n" not in str(caught.value)


def test_a_single_query_string_is_one_word_not_its_letters():
    record = api.associate("synthetic", "the", top=3)
    assert list(record.queries) == ["the"] and record.queries["the"]["token"] == "the"
    assert record.config["query"] == ["the"]


def test_deeper_layers_name_parameters_too():
    """The layers below the API are called by it; their refusals name the same parameters."""
    from emergence.base.executors import parse_executor
    from emergence.numerics.copy_head.scaling import scaling_report

    for call in (lambda: parse_executor("ray"), lambda: scaling_report("linear-second-order", None, dps=5)):
        with pytest.raises(InvalidArgumentError) as caught:
            call()
        assert not str(caught.value).startswith("--")


@pytest.mark.parametrize("arguments, line", [
    (["phase-diagram", "--attention", "softmax", "--L", "2", "--V", "8"], "argument --L: L must be an integer >= 3, got 2"),
    (["associate", "synthetic", "--query", "the", "--top", "0"], "--top"),
    (["scaling", "--claim", "linear-second-order", "--law", "os"], "--law: 'os' is not allowed"),
])
def test_the_command_line_names_its_flag_where_the_api_names_its_parameter(capsys, arguments, line):
    assert main(arguments) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("emergence: error: ") and "\n" not in error and line in error, error


def test_the_option_of_an_api_parameter_is_found_in_the_chosen_sub_command():
    from emergence.cli.parser import build_parser, option_of

    parser = build_parser()
    copy_head = parser.parse_args(["validate", "copy-head", "--attention", "linear", "--L", "8", "--V", "4"])
    assert [option_of(parser, copy_head, name) for name in ("P", "adam_steps", "seeds", "bisections")] == \
           ["--P-grid", "--steps", "--seeds", "--bisect"]
    basis = parser.parse_args(["basis", "x.txt", "--out", "s.npz"])
    assert [option_of(parser, basis, name) for name in ("T", "bpe_vocab", "corpus")] == ["--T", "--bpe-vocab", "corpus"]


def test_predict_weights_reads_the_npz_that_basis_writes(tmp_path):
    import numpy as np

    assert main(["basis", "synthetic", "--T", "16", "--out", str(tmp_path / "stats.npz")]) == 0
    from_file = api.predict_weights(tmp_path / "stats.npz", 3, 0.1, 2)
    from_record = api.predict_weights(api.basis("synthetic", T=16), 3, 0.1, 2)
    assert from_file.tokens == from_record.tokens
    for name, value in from_record.weights.items():
        # exact by design: the .npz stores the float64 statistics bit for bit and the same code predicts from them
        assert np.array_equal(from_file.weights[name], value)
    (tmp_path / "other.npz").write_bytes(b"not a zip")
    with pytest.raises(InvalidArgumentError, match="stats '.*other.npz' is not a basis .npz"):
        api.predict_weights(tmp_path / "other.npz", 3, 0.1, 2)


def test_an_unknown_option_is_refused_by_name():
    with pytest.raises(InvalidArgumentError, match="^step must be|^step is not an option"):
        api.validate_copy_head("linear", 8, 4, [8, 16], step=10)
    with pytest.raises(InvalidArgumentError, match="^kapa is not a setting of the umbrella sampler"):
        api.validate_posterior("softmax", 8, 4, kapa=3.0)
    with pytest.raises(EmergenceError, match="^vocabulary is not an option of basis"):
        api.associate("synthetic", ["the"], vocabulary=5)
    assert emergence.api.InvalidArgumentError is InvalidArgumentError
