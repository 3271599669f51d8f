"""Records saved and loaded: ``save(path)`` writes ``to_json()`` atomically, ``load(path)`` gives back an equal
record with its array fields as NumPy arrays, for every record type; the JSON a record writes is the layer's
dictionary written as it always was (arrays change the Python side only)."""

import json

import numpy as np
import pytest

from emergence import api
from emergence.base.errors import EmergenceError
from emergence.base.io import to_json_text
from emergence.records import (
    CheckpointComparison,
    CopyHeadValidation,
    LeadingTermValidation,
    PhaseDiagram,
    PosteriorStudy,
    PosteriorValidation,
    Record,
    RhoSweep,
    ScalingVerdict,
)


def _scaling() -> ScalingVerdict:
    return ScalingVerdict(
        claim="linear-crossover", law="L**(3/2)*V**(1/2)", sizes=[{"L": L, "V": 8, "sweep": "L"} for L in (64, 128, 256)],
        P_star=[1.5, 2.5, float("nan")], ratio={"L": [1.2, 1.1]}, local_exponent={"L": [1.4, 1.45]},
        fit={"L": {"residual_exponent": [0.01], "coefficients": {}, "form": "c", "residual": 0.0}},
        holds=True, tolerance=0.1, dps=30)


def _copy_head() -> CopyHeadValidation:
    return CopyHeadValidation(
        attention="linear", L=8, V=4, P=[8, 16], optimizer="adam", settings={"adam_steps": 5}, predicted=None,
        measured={"c1_mean": [0.1, None], "transitions": {"P1": None}}, agreement={"holds": False},
        prediction_note="none", provenance={"seed": 0}, details={"extra": [1, 2.5]})


def _leading_terms() -> LeadingTermValidation:
    return LeadingTermValidation(
        config={"lr": 0.1}, corpus={}, steps=[1, 2, 3], loss=[2.0, 1.5, float("nan")], step_limit=2.0,
        within_window=[True, True, False], cosine={"W_O": [[1.0, None, 0.9]]}, min_cosine={}, min_cosine_within_window={})


RECORDS = {
    "PhaseDiagram": lambda: api.phase_diagram("linear", 16, 4, P=list(np.geomspace(10, 1e5, 12))),
    "ScalingVerdict": _scaling,
    "Derivation": lambda: api.derive("copy-head", "softmax"),
    "Basis": lambda: api.basis("synthetic", T=8),
    "LeadingWeights": lambda: api.predict_weights(api.basis("synthetic", T=8), 3, 0.1, 2),
    "CopyHeadValidation": _copy_head,
    "LeadingTermValidation": _leading_terms,
    "CheckpointComparison": lambda: CheckpointComparison(
        top_k=2, T=8, N=3, tokenizer="t.json", tokens=["a", "b"], tokens_raw=["a", "b"], settings={"k0": None},
        checkpoints=[{"name": "step-1", "layers": []}]),
    "Associations": lambda: api.associate("synthetic", "the", top=3),
    "PosteriorStudy": lambda: PosteriorStudy(
        rows=[{"L": 8, "sampled": {"value": 215.0, "error": 9.0}, "saddle": 120.0, "theory": 245.0},
              {"L": 16, "sampled": None, "saddle": 292.0, "theory": None, "reason": "no converged pair"}],
        summary={"sizes_measured": 1, "sizes": 2}, V=4, results_folder="/tmp/study", provenance={"seed": 0}),
    "RhoSweep": lambda: RhoSweep(
        attention="softmax", L=16, V=4, theory=[{"rho": 0.0, "type": "first order", "P_star": 292.3, "spinodals": [280.0, 319.0]},
                                               {"rho": 0.6, "type": "continuous", "onset": 306.9}],
        corpus={"tokens": "corpus:/tmp/text.txt", "rho_eff": 0.1, "type": "continuous", "onset": 680.5,
                "token_statistics": {"file": "/tmp/text.txt", "sha256": "0" * 64}},
        adam=[{"tokens": "markov:rho=0", "rho": 0.0, "bracket": [249, 292]}], provenance={"seed": None}),
    "PosteriorValidation": lambda: PosteriorValidation(
        predicted={"c1": [0.1, 0.2]}, saddle=None, measured={"P": [8, 32], "c1_mean": [0.1, float("nan")]},
        agreement={"passes": False, "reason": "not converged"}, method="hmc", results_folder="/tmp/runs",
        cost={"seconds_per_gradient": [0.01, 0.02]}, details={"extra": True}),
}


def test_every_record_type_has_a_round_trip_case():
    assert set(RECORDS) == {cls.__name__ for cls in Record.__subclasses__()}


@pytest.mark.parametrize("name", RECORDS)
def test_save_then_load_gives_the_same_record_and_the_same_json(name, tmp_path):
    record = RECORDS[name]()
    path = record.save(tmp_path / "record.json")
    assert path.read_text(encoding="utf-8") == record.to_json()
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]  # the temporary file was renamed, none left
    loaded = type(record).load(path)
    assert loaded == record and loaded.to_json() == record.to_json()  # exact by design: JSON floats round-trip
    arrays = {"Basis": lambda r: r.arrays().values(), "LeadingWeights": lambda r: r.weights.values()}
    assert all(isinstance(value, np.ndarray) for value in arrays.get(name, lambda r: [])(loaded))
    for field in type(record).array_fields:
        value = getattr(loaded, field)
        assert isinstance(value, np.ndarray) or (isinstance(value, list) and None in value), (field, value)


def test_array_fields_are_numpy_arrays_and_the_json_is_the_layers_dictionary():
    layer = {"attention": "linear", "L": 8, "V": 4, "convention": {}, "P": [1.0, 2.0], "c1": [0.0, 0.1],
             "cG": [None, 0.0], "loss": [1.0, float("nan")], "transitions": {"P1": 1.5}, "provenance": None, "note": "kept"}
    record = PhaseDiagram.from_dict(layer)
    assert isinstance(record.P, np.ndarray) and isinstance(record.c1, np.ndarray) and isinstance(record.loss, np.ndarray)
    assert record.cG == [None, 0.0]  # a gap (None) stays a list: an array would write NaN instead of null
    assert record.to_json() == to_json_text(layer)  # byte for byte what the layer's dictionary writes
    ints = CopyHeadValidation.from_dict(json.loads(_copy_head().to_json()))
    assert ints.P.dtype.kind == "i" and json.loads(ints.to_json())["P"] == [8, 16]  # 8, not 8.0
    steps = _leading_terms()
    assert steps.within_window.dtype == bool and steps.to_dict()["within_window"] == [True, True, False]


def test_a_record_compares_arrays_by_value():
    assert _leading_terms() == _leading_terms()  # NaN in loss equal to NaN, as the JSON keeps it
    changed = _leading_terms()
    changed.loss[0] = 2.5
    assert changed != _leading_terms()


def test_loading_another_record_or_a_corrupt_file_is_one_line_error(tmp_path):
    path = _copy_head().save(tmp_path / "copy.json")
    with pytest.raises(EmergenceError, match="does not hold a PhaseDiagram"):
        PhaseDiagram.load(path)
    path.write_text(path.read_text()[:30])
    with pytest.raises(EmergenceError, match="is corrupt"):
        CopyHeadValidation.load(path)


def test_the_provenance_and_details_tail_is_declared_once_on_record():
    """No record declares ``provenance`` or ``details`` itself; each writes its own fields, then its
    ``json_tail`` (provenance where it has one), then the details: the JSON keys of the layer's dictionary."""
    for cls in Record.__subclasses__():
        assert not {"provenance", "details"} & set(vars(cls).get("__annotations__", {})), cls.__name__
    record = PhaseDiagram.from_dict({"attention": "linear", "L": 8, "V": 4, "convention": {}, "P": [1.0], "c1": [0.0],
                                     "cG": [0.0], "loss": [1.0], "transitions": {}, "provenance": {"seed": 1},
                                     "note": "kept"})
    assert list(record.to_dict())[-2:] == ["provenance", "note"] and record.provenance == {"seed": 1}
    assert list(RECORDS["PosteriorValidation"]().to_dict())[-3:] == ["provenance", "cost", "extra"]
    assert "provenance" not in RECORDS["LeadingWeights"]().to_dict()  # an analytic prediction has none
