"""Every public API function, fed random wrong types and values, refuses them with an
:class:`~emergence.base.errors.EmergenceError` before any work, and raises nothing else.

Each function starts from arguments that are valid (and would start real work); Hypothesis replaces
one or more of them with a wrong value of the parameter's kind (:data:`KINDS`), adds unknown keyword
options, and the call must end in an ``EmergenceError``.  :data:`SPECS` names every parameter of every
function of ``emergence.api.__all__`` (a test fails when a new one has no kind), so no parameter goes unfuzzed.

``EMERGENCE_FUZZ_EXAMPLES`` sets the examples per function (default 25, kept small for the default suite).
"""

import functools
import inspect
import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emergence import api
from emergence.base.errors import EmergenceError

EXAMPLES = int(os.environ.get("EMERGENCE_FUZZ_EXAMPLES", "25"))
MISSING = "/nonexistent-emergence-folder/missing"
RECORD = Path(__file__).resolve().parents[1] / "docs" / "theory_status.json"
"""An existing JSON file: ``judge_posterior`` reads its records before the work (guarded here) starts."""

OTHER_TYPES = st.one_of(st.booleans(), st.binary(max_size=3), st.lists(st.integers(), max_size=2),
                        st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
                        st.complex_numbers(allow_nan=False, max_magnitude=1e3).filter(lambda z: z.imag != 0),
                        st.builds(object), st.sets(st.integers(), max_size=2))
"""Values of no kind the API takes anywhere (bool counts: it is no number and no text to the engine)."""

NOT_A_WHOLE_NUMBER = st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not (math.isfinite(x) and x.is_integer()))


def wrong(*strategies, optional: bool = False):
    """A wrong value: one of ``strategies``, another type, or ``None`` where ``None`` is not allowed."""
    return st.one_of(OTHER_TYPES, *strategies, *(() if optional else (st.none(),)))


def wrong_integer(low: int, high: int | None = None, optional: bool = False):
    bounds = [st.integers(max_value=low - 1)] + ([st.integers(min_value=high + 1)] if high is not None else [])
    return wrong(NOT_A_WHOLE_NUMBER, st.integers(low, low + 100).map(str), *bounds, optional=optional)


def wrong_number(low: float, open_low: bool = True, optional: bool = False):
    below = st.floats(max_value=low, exclude_max=not open_low, allow_nan=False)
    return wrong(st.sampled_from([math.nan, math.inf, -math.inf]), below, st.just("0.5"), optional=optional)


def wrong_choice(options, optional: bool = False):
    return wrong(st.text(max_size=8).filter(lambda text: text not in options), st.integers(), optional=optional)


def wrong_path(optional: bool = False):
    return wrong(st.text("abc", min_size=1, max_size=6).map(lambda name: f"{MISSING}/{name}"), st.integers(),
                 optional=optional)


def wrong_flag():
    return st.one_of(st.none(), st.integers(), st.floats(), st.text(max_size=3), st.lists(st.booleans(), max_size=1))


def wrong_grid(minimum: int, element_low: float):
    bad_element = st.one_of(st.floats(max_value=element_low, exclude_max=True), st.just(math.nan), st.text(max_size=2),
                            st.none(), st.booleans())
    return st.one_of(st.none(), st.text(max_size=3), st.integers(), st.builds(object),
                     st.lists(st.integers(1, 10**6), max_size=minimum - 1),
                     st.lists(st.integers(1, 10**6), min_size=minimum, max_size=minimum + 2).flatmap(
                         lambda good: bad_element.map(lambda bad: [*good, bad])))


def wrong_words():
    return st.one_of(st.just(""), st.just([]), st.none(), st.integers(), st.lists(st.integers(), min_size=1, max_size=2),
                     st.lists(st.just(""), min_size=1, max_size=2))


SIZE = wrong_integer(2)
SEED = wrong_integer(0, 2**32 - 1)


def _executor_text(text: str) -> bool:
    """Whether ``text`` names an executor (``local``, ``local:``, ``dask``, ``dask:ADDRESS``)."""
    from emergence.base.executors import parse_executor

    try:
        parse_executor(text)
    except EmergenceError:
        return False
    return True


def sweep(in_process: bool) -> dict:
    """Wrong ``executor``, ``workers`` and ``progress`` (``executor=None``, this process, is right where ``in_process``)."""
    executor = wrong(st.text(max_size=8).filter(lambda text: not _executor_text(text)), optional=in_process)
    return {"executor": executor, "workers": wrong_integer(1, optional=True), "progress": wrong_flag()}


CONVENTION = wrong(st.integers(), st.floats(), optional=True)
CORPUS = wrong_path()
CORPUS_OPTIONS = {
    "tokenizer": wrong(st.integers(), st.just(f"{MISSING}/tokenizer.json")), "vocab": wrong_integer(2, optional=True),
    "T": wrong_integer(1), "windows": wrong_choice(("first", "all")), "oov": wrong_choice(("drop", "unk")), "seed": SEED,
    "backend": wrong_choice(("numpy", "cupy")), "separator": wrong_choice(("auto", "eot", "blank-line", "line")),
    "bpe_vocab": wrong_integer(2, optional=True), "stream": wrong_flag(), "include_interchangeability": wrong_flag(),
}

SPECS = {
    "phase_diagram": ({"attention": "softmax", "L": 64, "V": 8},
                      {"attention": wrong_choice(("linear", "softmax")), "L": wrong_integer(3), "V": SIZE,
                       "P": wrong_grid(8, 0.0).filter(lambda grid: grid is not None), "convention": CONVENTION,
                       "tokens": wrong(st.integers(), st.sampled_from(["markov", "markov:rho=1", "zipf:alpha=-1", "iid:x"]))}),
    "rho_sweep": ({"L": 16, "V": 4},
                  {"L": wrong_integer(4), "V": SIZE, "P": wrong_grid(8, 0.0).filter(lambda grid: grid is not None),
                   "rho": wrong(st.just([]), st.just([1.0]), st.just([-0.1]), st.just([math.nan]), st.just("0.2")),
                   "tokens": wrong(st.integers(), st.sampled_from(["markov", "markov:rho=1", "zipf:alpha=-1", "iid:x"])),
                   "adam": wrong(st.just([{}]), st.just([{"measured": {}, "L": 8, "V": 4}]), st.just("record"),
                                 st.just([{"measured": {}, "attention": "linear", "L": 16, "V": 4}]),
                                 st.just([{"measured": {}, "attention": "softmax", "L": 16, "V": 4}]))
                           .filter(lambda value: not (isinstance(value, (list, set)) and not value)),  # no records is valid
                   "attention": wrong_choice(("linear", "softmax"))}),
    "scaling": ({"claim": "linear-second-order"},
                {"claim": wrong_choice(("linear-second-order",)), "law": wrong(st.sampled_from(["", "os", "L.x", "x*L"]), optional=True),
                 "convention": CONVENTION, "dps": wrong_integer(15, 1000), "fast": wrong_flag(), **sweep(True),
                 "out": wrong(st.integers(), optional=True)}),
    "derive": ({"theory": "copy-head"},
               {"theory": wrong_choice(("copy-head",)), "attention": wrong_choice(("linear", "softmax"), optional=True),
                "architecture": wrong_choice(("T", "M"))}),
    "basis": ({"corpus": "synthetic"}, {"corpus": CORPUS, **CORPUS_OPTIONS}),
    "predict_weights": ({"stats": "basis record", "steps": 2, "lr": 0.1, "layers": 1},  # the record: valid_arguments
                        {"stats": wrong_path(), "steps": wrong_integer(0), "lr": wrong_number(0.0), "layers": wrong_integer(1)}),
    "validate_copy_head": ({"attention": "linear", "L": 8, "V": 4, "P": [8, 16]},
                           {"attention": wrong_choice(("linear", "softmax")), "L": SIZE, "V": SIZE,
                            "P": wrong_grid(1, 1.0), "seeds": wrong_integer(1), "adam_steps": wrong_integer(1),
                            "adam_lr": wrong_number(0.0), "sgld_draws": wrong_integer(4), "optimizer": wrong_choice(("adam", "sgld")),
                            "dtype": wrong_choice(("float32", "float64")), "seed": SEED, "bisections": wrong_integer(0),
                            "device": wrong_choice(("cpu", "cuda"), optional=True), **sweep(False)}),
    "validate_leading_terms": ({"corpus": "synthetic"},
                               {"corpus": CORPUS, "progress": wrong(st.integers(), optional=True).filter(lambda v: not callable(v)),
                                "layers": wrong_integer(1), "lr": wrong_number(0.0, optional=True), "epochs": wrong_integer(1),
                                "vocab_size": wrong_integer(2, optional=True), "context_length": wrong_integer(1),
                                "batch_size": wrong_integer(1, optional=True), "seed": SEED,
                                "tokenizer": CORPUS_OPTIONS["tokenizer"], "device": wrong_choice(("cpu", "cuda"), optional=True)}),
    "associate": ({"corpus": "synthetic", "queries": ["the"]},
                  {"corpus": CORPUS, "queries": wrong_words(), "top": wrong_integer(1),
                   "normalize": wrong_choice(("none", "cosine", "pmi")), "min_count": wrong_integer(1, optional=True),
                   "T": CORPUS_OPTIONS["T"], "tokenizer": CORPUS_OPTIONS["tokenizer"]}),
    "checkpoints": ({"paths": ["."], "corpus": "synthetic"},
                    {"paths": wrong(st.just([]), st.lists(st.just(MISSING), min_size=1, max_size=2)), "corpus": CORPUS,
                     "stats": wrong_path(optional=True), "top_k": wrong_integer(2, optional=True), "T": wrong_integer(1),
                     "separator": CORPUS_OPTIONS["separator"], "seed": SEED, "tokenizer": wrong_path(optional=True),
                     "permutations": wrong_integer(2), "k0": wrong_integer(0, optional=True),
                     "forward_windows": wrong_integer(1, optional=True), **sweep(True), "out": wrong(st.integers(), optional=True),
                     "ids": wrong(st.integers(), optional=True)}),
    "validate_posterior": ({"attention": "softmax", "L": 8, "V": 4},
                           {"attention": wrong_choice(("linear", "softmax")), "L": SIZE, "V": SIZE,
                            "P": wrong_grid(2, 1.0).filter(lambda grid: grid is not None),
                            "method": wrong_choice(("umbrella",), optional=True), "convention": CONVENTION, "seed": SEED,
                            "theory_draws": wrong_integer(1, optional=True), "kappa": wrong_number(0.0),
                            "warmup": wrong_integer(0), "divide": wrong(st.floats(min_value=1.0), st.floats(max_value=0.0)),
                            "centres": wrong(st.lists(st.floats(min_value=1.0), min_size=2, max_size=3), st.just([0.2, 0.2]),
                                             st.just([math.nan, 0.5]), st.just("0.5")),
                            "trial": wrong_choice(("gauge", "block"), optional=True),
                            **sweep(False), "out": wrong(st.integers(), optional=True)}),
    "judge_posterior": ({"records": [str(RECORD)]},
                        {"records": wrong(st.just([]), st.lists(st.just(MISSING), min_size=1, max_size=2), st.integers()),
                         "trial": wrong_choice(("gauge", "block"), optional=True), "theory_draws": wrong_integer(100, optional=True),
                         "importance_draws": wrong_integer(0), "progress": wrong_flag()}),
    "posterior_study": ({"sizes": [8, 12], "V": 4},
                        {"sizes": wrong(st.just([]), st.lists(st.integers(max_value=2), min_size=1, max_size=3),
                                        st.just("8,12"), st.just([8.5])),
                         "V": SIZE, "convention": CONVENTION, "seed": SEED, "theory_draws": wrong_integer(1, optional=True),
                         "extensions": wrong_integer(0), "kappa": wrong_number(0.0), "warmup": wrong_integer(0),
                         "per_size": st.one_of(OTHER_TYPES.filter(lambda value: value != {}),  # {}: no size's own
                                               st.sampled_from([{16: {"kappa": 800.0}}, {8: {"kappa": -1.0}},
                                                                {8: {"P": [100]}}, {8: {"P": [100, 2.5]}}, {8: {"speed": 1}},
                                                                {8: 3}, {"x": {}}, [(8, {"kappa": 800.0})]])),
                         **sweep(False), "out": wrong(st.integers(), optional=True)}),
    "run_copy_experiment": ({"config": api.CopyExperiment("linear", 8, 4, (8, 16))},
                            {"config": wrong(st.integers(), st.text(max_size=3),
                                             st.builds(api.CopyExperiment, st.just("linear"), SIZE, st.just(4), st.just((8, 16))),
                                             st.builds(api.CopyExperiment, st.just("linear"), st.just(8), st.just(4),
                                                       wrong_grid(1, 1.0)))}),
}
"""Per function: valid arguments (they would start real work), and the wrong values of each parameter."""

UNKNOWN_OPTION = st.sampled_from(["frobnicate", "step", "kapa", "vocabulary"])
"""Keyword options a function does not have (the functions with ``**options`` must still refuse them)."""


def functions():
    return [name for name in api.__all__ if inspect.isfunction(getattr(api, name))]


def test_every_parameter_of_every_api_function_has_wrong_values():
    assert set(SPECS) == set(functions())
    for name in functions():
        named = {p.name for p in inspect.signature(getattr(api, name)).parameters.values()
                 if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
        assert named <= set(SPECS[name][1]), (name, named - set(SPECS[name][1]))


def _takes_options(function) -> bool:
    return any(p.kind == p.VAR_KEYWORD for p in inspect.signature(function).parameters.values())


@functools.cache
def basis_record():
    return api.basis("synthetic", T=8)


def valid_arguments(name: str) -> dict:
    """``name``'s valid arguments (``predict_weights``: with a real basis record, computed once)."""
    valid = dict(SPECS[name][0])
    if name == "predict_weights":
        valid["stats"] = basis_record()
    return valid


@st.composite
def wrong_call(draw, name: str):
    """The valid arguments of ``name`` with at least one of them (or an unknown option) replaced by a wrong value."""
    valid, kinds = valid_arguments(name), SPECS[name][1]
    chosen = draw(st.lists(st.sampled_from(sorted(kinds)), min_size=1, max_size=3, unique=True))
    arguments = {**valid, **{parameter: draw(kinds[parameter], label=parameter) for parameter in chosen}}
    if _takes_options(getattr(api, name)) and draw(st.booleans()):
        arguments[draw(UNKNOWN_OPTION)] = draw(st.integers())
    return arguments


class WorkStarted(AssertionError):
    """Raised where a function's work begins: its arguments were all accepted (the engine catches no AssertionError)."""


WORK = {
    "phase_diagram": ("emergence.numerics.copy_head.phase_diagram", "phase_diagram"),
    "rho_sweep": ("emergence.numerics.copy_head.rho_sweep", "persistence_sweep"),
    "scaling": ("emergence.numerics.copy_head.scaling", "scaling_report"),
    "derive": ("emergence.theory.copy_head.steps", "derivation_steps"),
    "basis": ("emergence.numerics.corpus.documents", "load_corpus"),
    "associate": ("emergence.numerics.corpus.documents", "load_corpus"),
    "predict_weights": ("emergence.numerics.leading_terms.leading_weights", "predicted_weights"),
    "validate_copy_head": ("emergence.base.executors", "sweep_executor"),
    "run_copy_experiment": ("emergence.base.executors", "sweep_executor"),
    "validate_leading_terms": ("emergence.validation.leading_terms.experiment", "run_leading_term_validation"),
    "checkpoints": ("emergence.validation.leading_terms.checkpoints", "find_tokenizer"),
    "validate_posterior": ("tempfile", "mkdtemp"),
    "judge_posterior": ("emergence.validation.copy_task.posterior_rejudge", "judge_measurement"),
    "posterior_study": ("tempfile", "mkdtemp"),
}
"""Where each function's work begins (after its checks, before it makes a pool of workers or a folder):
replaced by :class:`WorkStarted` in these tests."""


@pytest.fixture(scope="module")
def every_engine_module():
    """Every engine module imported before the first guard: a module first imported under it would bind the guard
    in place of the work function (``from ... import phase_diagram``) for the rest of the pytest run, and a later test
    file run in the same session (``pytest tests/test_api_fuzz.py tests/test_validate_posterior.py``) would fail."""
    import importlib
    import pkgutil

    import emergence

    for module in pkgutil.walk_packages(emergence.__path__, "emergence."):
        if not module.name.endswith("__main__"):
            try:
                importlib.import_module(module.name)
            except ModuleNotFoundError as error:  # a module of an extra that is not installed
                if (error.name or "").startswith("emergence"):
                    raise


@pytest.fixture
def guarded(monkeypatch, tmp_path, every_engine_module):
    """Work raises :class:`WorkStarted`; the current folder is an empty temporary one ("." is a folder)."""
    import importlib

    monkeypatch.chdir(tmp_path)
    basis_record()  # before the guard: predict_weights' valid statistics are computed for real

    def started(*args, **kwargs):
        raise WorkStarted

    for module, name in set(WORK.values()):
        monkeypatch.setattr(importlib.import_module(module), name, started)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_valid_arguments_reach_the_work(name, guarded):
    """The fuzzing starts from arguments that pass every check: without a wrong value the work starts."""
    with pytest.raises(WorkStarted):
        getattr(api, name)(**valid_arguments(name))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_wrong_arguments_are_refused_with_an_emergence_error_only(name, guarded):
    function = getattr(api, name)

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(arguments=wrong_call(name))
    def refused(arguments):
        with pytest.raises(EmergenceError):
            function(**arguments)
        refused.examples += 1

    refused.examples = 0
    refused()
    assert refused.examples >= 1
    print(f"{name}: {refused.examples} wrong calls, each refused with an EmergenceError")
