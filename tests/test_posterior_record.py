"""``validate_posterior`` returns a :class:`~emergence.records.PosteriorValidation` whose JSON is what
``emergence validate posterior --json`` writes, key for key (tiny sizes: the chains do not converge, which
the record says; the numbers are not the point here)."""

import json

import pytest

from emergence import api
from emergence.cli import main
from emergence.records import PosteriorValidation

MACHINE = {"created", "command", "limit_flop_per_second", "fraction_of_limit"}
"""Keys whose values belong to the run, not the result: the time, the command line, the core's measured rate."""


def _without_machine(data):
    if isinstance(data, dict):
        return {key: "-" if key in MACHINE else _without_machine(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_without_machine(value) for value in data]
    return data


CANNED = {"predicted": {"P1": 18.2, "c1": [0.9, 2.4]}, "saddle": {"transitions": {"P1": None}},
          "measured": {"P": [8, 32], "c1_mean": [1.0, float("nan")], "flops_per_gradient": [2e6, 8e6],
                       "seconds_per_gradient": [0.004, 0.005]},
          "agreement": {"passes": False, "reason": "not converged at P = [8, 32]"}}
"""What the linear HMC validation returns, in its shape (the sampler itself is tested in test_validate_posterior.py)."""


def test_the_record_and_the_command_write_the_same_json(monkeypatch, tmp_path, capsys):
    """The API's record and the command's ``--json -`` from the same validation result (sampler replaced)."""
    import copy

    from emergence.base import runtime
    from emergence.validation.copy_task import linear_posterior_sampling

    monkeypatch.setattr(linear_posterior_sampling, "run_linear_hmc_validation", lambda *args, **kwargs: copy.deepcopy(CANNED))
    monkeypatch.setattr(runtime, "torch_single_thread_flops", lambda: 4e10)
    assert main(["validate", "posterior", "--attention", "linear", "--L", "4", "--V", "2", "--P-grid", "8,32",
                 "--out", str(tmp_path), "--json", "-"]) == 0
    written = json.loads(capsys.readouterr().out)
    record = api.validate_posterior("linear", 4, 2, [8, 32], out=str(tmp_path), progress=False,
                                    **written["provenance"]["config"]["settings"])
    ours = json.loads(record.to_json())
    assert list(ours) == list(written) and list(ours)[-1] == "cost" and record.method == "hmc"
    assert _without_machine(ours) == _without_machine(written)
    assert ours["cost"]["fraction_of_limit"] == [2e6 / 0.004 / 4e10, 8e6 / 0.005 / 4e10]


@pytest.mark.slow
def test_the_record_is_the_commands_json_key_for_key(tmp_path):
    assert main(["validate", "posterior", "--attention", "linear", "--L", "4", "--V", "2", "--P-grid", "8,32",
                 "--chains", "2", "--warmup", "6", "--draws", "6", "--leapfrog", "3", "--theory-draws", "100",
                 "--workers", "1", "--out", str(tmp_path / "runs"), "--json", str(tmp_path / "report.json")]) == 0
    written = json.loads((tmp_path / "report.json").read_text())
    settings = written["provenance"]["config"]["settings"]  # the sampler fields the command passes to the API
    record = api.validate_posterior("linear", 4, 2, [8, 32], theory_draws=100, workers=1, out=str(tmp_path / "runs"),
                                    progress=False, **settings)
    assert isinstance(record, PosteriorValidation) and record.method == "hmc"  # the linear default
    assert record.cost is not None and record.agreement["passes"] is False
    ours = json.loads(record.to_json())
    assert list(ours) == list(written)  # the same keys in the same order
    # exact by design: the API resumes the points the command stored; only the time, the command line and the
    # core's measured rate differ between the two runs
    assert _without_machine(ours) == _without_machine(written)
    assert PosteriorValidation.from_dict(written).to_dict() == written
    assert record.plot().axes


@pytest.mark.parametrize("attention, default", [("linear", "hmc"), ("softmax", "umbrella")])
def test_the_command_and_the_api_take_the_same_default_method(monkeypatch, tmp_path, capsys, attention, default):
    """Without ``--method``/``method=``, the command and the API hand the dispatcher the same method: the one
    :func:`~emergence.validation.copy_task.posterior_methods.posterior_method` decides (sampler replaced)."""
    import copy

    pytest.importorskip("arviz")
    if attention == "softmax":
        pytest.importorskip("pymbar")
    from emergence.base import runtime
    from emergence.validation.copy_task import posterior_methods

    chosen = []

    def dispatcher(attention, L, V, P, method, *args, **kwargs):
        chosen.append(method)
        return copy.deepcopy(CANNED)

    monkeypatch.setattr(posterior_methods, "run_posterior_validation", dispatcher)
    monkeypatch.setattr(runtime, "torch_single_thread_flops", lambda: 4e10)
    assert main(["validate", "posterior", "--attention", attention, "--L", "4", "--V", "2", "--P-grid", "8,32",
                 "--out", str(tmp_path / "command"), "--json", "-"]) == 0
    written = json.loads(capsys.readouterr().out)
    record = api.validate_posterior(attention, 4, 2, [8, 32], out=str(tmp_path / "api"), progress=False)
    assert chosen == [default, default] and written["method"] == record.method == default
    assert written["provenance"]["config"]["method"] == default
