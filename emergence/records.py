r"""Typed result records of the Python API (:mod:`emergence.api`) and the command line.

Each record is a dataclass over the JSON-ready result of one layer call; its fields are the
quantities a researcher reads (the order parameters of a phase diagram, the ratios of a
scaling claim, ...), and keys a layer adds that a record does not name are kept in
``details`` (so a record never drops a number the layer computed).

- ``to_dict()``: the JSON-ready dictionary (what ``--json`` writes), keys in field order;
- ``to_json()``: that dictionary as JSON text;
- ``from_dict(data)``: the record back from such a dictionary (``results.json`` of the demo);
- ``save(path)`` / ``load(path)``: that JSON text written atomically / the record read back, its
  array fields (``array_fields``: the grids and curves, e.g. a phase diagram's ``P, c1, cG, loss``)
  NumPy arrays again;
- ``plot(ax=None)``: its figure, drawn by :mod:`emergence.report.figures` (the one place every
  figure of the engine is drawn), returned as a :class:`matplotlib.figure.Figure`.

>>> record = PhaseDiagram.from_dict({"attention": "linear", "L": 8, "V": 4, "convention": {},
...                                  "P": [1.0, 2.0], "c1": [0.0, 0.1], "cG": [0.0, 0.0],
...                                  "loss": [1.0, 0.9], "transitions": {"P1": 1.5}, "note": "kept"})
>>> record.L, record.details, record.P
(8, {'note': 'kept'}, array([1., 2.]))
>>> PhaseDiagram.from_dict(record.to_dict()) == record
True
>>> record.to_json().splitlines()[1]
'  "attention": "linear",'
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, ClassVar


def _json_ready(data: Any) -> Any:
    from emergence.base.io import to_json_text

    return json.loads(to_json_text(data))


def as_array(values: Any) -> Any:
    """``values`` (a list of numbers, or of equal-length lists of them) as a NumPy array, where the array
    writes the same JSON as the list (no ``None``, no mixing of ``1`` and ``1.0``); anything else unchanged.

    >>> as_array([1.0, 2.5]), as_array([8, 16]), as_array([1.0, None]), as_array([1, 2.5])
    (array([1. , 2.5]), array([ 8, 16]), [1.0, None], [1, 2.5])
    """
    import numpy as np

    if not isinstance(values, list) or not values:
        return values
    try:
        array = np.asarray(values)
    except (ValueError, OverflowError):  # ragged, or integers beyond int64
        return values
    if array.dtype.kind not in "biuf" or json.dumps(array.tolist()) != json.dumps(values):
        return values
    return array


def _same(a: Any, b: Any) -> bool:
    """Equal values, arrays compared element by element (NaN equal to NaN, as JSON keeps it)."""
    import numpy as np

    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype.kind == b.dtype.kind and _same_json(a.tolist(), b.tolist())
    if is_dataclass(a) and type(a) is type(b):  # e.g. the statistics of a Basis
        a, b = _field_values(a), _field_values(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(map(_same, a, b))
    return _same_json(a, b)


def _field_values(instance: Any) -> list:
    """A dataclass instance's field values, in field order."""
    return [getattr(instance, f.name) for f in fields(instance)]


def _same_json(a: Any, b: Any) -> bool:
    """Values that JSON writes alike (NaN as NaN, so a NaN equals a NaN)."""
    return bool(a == b) or json.dumps(a, default=repr) == json.dumps(b, default=repr)


@dataclass(eq=False)
class Record:
    """Shared behaviour of the records: dictionary and JSON forms, reading back, the figure; and the fields
    every record ends with, declared once here (keyword-only, after a record's own fields):
    ``provenance`` and ``details``."""

    figure: ClassVar[str | None] = None
    """Name of the drawing function in :mod:`emergence.report.figures` (``None``: the record has no figure)."""

    array_fields: ClassVar[tuple[str, ...]] = ()
    """Fields held as NumPy arrays (lists given are turned into arrays, where that keeps their JSON)."""

    json_tail: ClassVar[tuple[str, ...]] = ("provenance",)
    """The fields written after the record's own ones, in this order (``details`` always last); a record
    whose result has no provenance of its own writes none (``()``)."""

    provenance: dict | None = field(default=None, kw_only=True)
    """How the result was made: configuration, versions, seed, time (:func:`emergence.base.io.provenance`)."""

    details: dict = field(default_factory=dict, kw_only=True)
    """Keys the layer returned that the record does not name (a record never drops a number)."""

    @classmethod
    def written_fields(cls) -> list[str]:
        """The fields :meth:`to_dict` writes, in order: the record's own, then :data:`json_tail`."""
        shared = {"provenance", "details", *cls.json_tail}
        return [f.name for f in fields(cls) if f.name not in shared] + list(cls.json_tail)

    def __post_init__(self) -> None:
        for name in self.array_fields:
            setattr(self, name, as_array(getattr(self, name)))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            _same(getattr(self, f.name), getattr(other, f.name)) for f in fields(self) if f.compare)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq is

    def save(self, path) -> Path:
        """Write :meth:`to_json` to ``path`` atomically (a reader never sees half a file); the path."""
        from emergence.base.io import atomic_path

        with atomic_path(path) as temporary:
            temporary.write_text(self.to_json(), encoding="utf-8")
        return Path(path)

    @classmethod
    def load(cls, path):
        """The record :meth:`save` wrote to ``path`` (arrays as NumPy arrays again);
        :class:`~emergence.base.errors.EmergenceError` when the file is corrupt or holds another record."""
        from emergence.base.errors import EmergenceError
        from emergence.base.io import read_json

        data = read_json(path)
        try:
            return cls.from_dict(data)
        except (TypeError, KeyError, AttributeError) as error:
            raise EmergenceError(f"{path} does not hold a {cls.__name__} ({error})") from None

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in self.written_fields()}
        return _json_ready({**data, **self.details})

    def to_json(self) -> str:
        from emergence.base.io import to_json_text

        return to_json_text(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        names = set(cls.written_fields())
        return cls(**{k: v for k, v in data.items() if k in names},
                   details={k: v for k, v in data.items() if k not in names})

    def plot(self, ax=None):
        """The record's figure (a new :class:`~matplotlib.figure.Figure`, or drawn into ``ax``)."""
        from emergence.report import figures
        from emergence.base.errors import EmergenceError

        if self.figure is None:
            raise EmergenceError(f"a {type(self).__name__} has no figure; print it or use to_dict()")
        return getattr(figures, self.figure)(self, ax=ax)


@dataclass(eq=False)
class PhaseDiagram(Record):
    r"""Global minimum of the copy-head reduced action on a grid of :math:`P`.

    ``c1, cG`` (linear) or ``cG = a_G`` (softmax) and the predicted per-position test loss at
    each ``P``; ``transitions``: ``P1``, ``crossover``, ``crossover_literal``, ``P_star``,
    ``spinodals``, ``critical_exponent`` (``None`` where not inside the grid).
    """

    figure: ClassVar[str] = "phase_diagram_figure"
    array_fields: ClassVar[tuple[str, ...]] = ("P", "c1", "cG", "loss")
    attention: str
    L: int
    V: int
    convention: dict
    P: list
    c1: list
    cG: list
    loss: list
    transitions: dict


@dataclass(eq=False)
class ScalingVerdict(Record):
    r"""One scaling claim on the reduced actions: transition / law along each sweep, local
    exponents :math:`d\ln P/d\ln x`, the sub-leading fit and the verdict ``holds``."""

    figure: ClassVar[str] = "scaling_ratios_figure"
    array_fields: ClassVar[tuple[str, ...]] = ("P_star",)
    claim: str
    law: str
    sizes: list
    P_star: list
    ratio: dict
    local_exponent: dict
    fit: dict
    holds: bool
    tolerance: float
    dps: int
    convention: dict | None = None

    def sweeps(self) -> list[dict[str, Any]]:
        """Per sweep: sizes, transitions, measured and the law's own local exponents, spread over
        the last three sizes, ratios, residual exponent, the fit and the derived-form comparison."""
        summary = []
        for variable, exponents in self.local_exponent.items():
            sizes = [s[variable] for s in self.sizes if s["sweep"] == variable]
            ratios = self.ratio[variable]
            law_exponents = [
                e - (math.log(ratios[k + 1]) - math.log(ratios[k])) / (math.log(sizes[k + 1]) - math.log(sizes[k]))
                for k, e in enumerate(exponents)
            ]
            tail = exponents[-3:]
            fit = self.fit[variable]
            reference = fit.get("reference") or {}
            summary.append({
                "variable": variable, "sizes": sizes,
                "transition": [p for p, s in zip(self.P_star, self.sizes) if s["sweep"] == variable],
                "local_exponent": exponents, "law_local_exponent": law_exponents,
                "exponent": exponents[-1], "spread": max(tail) - min(tail), "law_exponent": law_exponents[-1],
                "ratio": ratios, "residual_exponent": fit["residual_exponent"][-1], "fit": fit["coefficients"],
                "fit_form": fit["form"], "fit_residual": fit["residual"],
                "reference_form": reference.get("form"), "reference_sizes": reference.get("sizes"),
                "reference_ratio": reference.get("ratio"), "reference_consistent": reference.get("consistent"),
            })
        return summary


@dataclass(eq=False)
class Derivation(Record):
    """A theory's derivation: ``steps`` is the list of :class:`emergence.theory.derivation_steps.Step`
    (titles, SymPy equations); ``to_dict()`` is the JSON form of ``emergence derive --format json``."""

    json_tail: ClassVar[tuple[str, ...]] = ()  # its JSON is the derivation document (render_json)
    theory: str
    attention: str | None
    architecture: str | None
    steps: list
    note: str | None = None

    def to_json(self) -> str:
        from emergence.theory.derivation_steps import render_json

        return render_json(self.steps, theory=self.theory, attention=self.attention,
                           architecture=self.architecture, note=self.note)

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self.to_json())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Derivation:
        """The derivation ``data`` describes, derived again (SymPy objects cannot be read from JSON);
        :class:`~emergence.base.errors.EmergenceError` when this engine derives something else."""
        from emergence.base.errors import EmergenceError
        from emergence.theory.copy_head.steps import derivation_steps

        record = cls(theory=data["theory"], attention=data["attention"], architecture=data["architecture"],
                     steps=derivation_steps(data["attention"], data["architecture"]), note=data.get("note"))
        if record.to_dict() != data:
            raise EmergenceError(f"the stored {data['theory']} derivation differs from this engine's; derive it again")
        return record

    def text(self) -> str:
        """The derivation as plain text (``emergence derive ...``)."""
        from emergence.theory.derivation_steps import render_text

        return render_text(self.steps)

    def latex(self) -> str:
        """The derivation as LaTeX (``emergence derive ... --format latex``)."""
        from emergence.theory.derivation_steps import render_latex

        return render_latex(self.steps)


@dataclass(eq=False)
class Basis(Record):
    r"""The leading-term corpus statistics of arXiv 2601.19208 with their corpus.

    ``statistics``: :class:`emergence.numerics.leading_terms.basis_statistics.BasisStatistics`
    (:math:`\bar B, \bar B^\top\bar B, \bar\Phi, \bar G, \bar Q, \bar\Delta` as NumPy arrays);
    ``tokens``: the vocabulary in index order, as readable strings; ``T``, ``N``: sequence length
    and windows; ``corpus``: the loaded corpus (windows, vocabulary, tokenizer), kept in memory only.
    """

    figure: ClassVar[str] = "basis_figure"
    statistics: Any
    tokens: list
    T: int
    N: int
    config: dict
    corpus: Any = field(default=None, repr=False, compare=False)

    def arrays(self) -> dict[str, Any]:
        """The statistics under the paper's symbols (B, Sigma, Phi, G, Q, Delta)."""
        from emergence.numerics.leading_terms.basis_statistics import PAPER_SYMBOLS

        return {symbol: getattr(self.statistics, name) for symbol, name in PAPER_SYMBOLS.items()
                if getattr(self.statistics, name) is not None}

    @classmethod
    def read_npz(cls, path) -> Basis:
        """The record of a ``.npz`` that ``emergence basis --out`` wrote (its statistics, vocabulary, ``T``, ``N``
        and provenance; no corpus); :class:`~emergence.base.errors.InvalidArgumentError` naming ``stats`` when
        the file is not one."""
        import zipfile

        import numpy as np

        from emergence.base.errors import InvalidArgumentError
        from emergence.numerics.leading_terms.basis_statistics import PAPER_SYMBOLS, BasisStatistics

        required = ("B", "Phi", "G", "Q", "Delta", "vocab", "T", "N")
        try:
            with np.load(path) as data:
                missing = [name for name in required if name not in data.files]
                if missing:
                    raise KeyError(f"no {', '.join(missing)}")
                arrays = {field_name: data[symbol] if symbol in data.files else None
                          for symbol, field_name in PAPER_SYMBOLS.items()}
                tokens, T, N = [str(token) for token in data["vocab"]], int(data["T"]), int(data["N"])
                stored = json.loads(str(data["provenance"])) if "provenance" in data.files else None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
            raise InvalidArgumentError("stats", f"{str(path)!r} is not a basis .npz "
                                                f"({str(error).splitlines()[0] if str(error) else type(error).__name__})") from None
        statistics = BasisStatistics(**arrays, num_sequences=N, context_length=T)
        config = (stored or {}).get("config", {"stats": str(path)})
        return cls(statistics=statistics, tokens=tokens, T=T, N=N, config=config, provenance=stored)

    def to_dict(self) -> dict[str, Any]:
        return _json_ready({**{k: v.tolist() for k, v in self.arrays().items()}, "vocab": self.tokens,
                            "T": self.T, "N": self.N, "config": self.config, "provenance": self.provenance,
                            **self.details})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Basis:
        """The record of :meth:`to_dict`'s dictionary, the statistics as float64 arrays (no corpus)."""
        import numpy as np

        from emergence.numerics.leading_terms.basis_statistics import PAPER_SYMBOLS, BasisStatistics

        known = {*PAPER_SYMBOLS, "vocab", "T", "N", "config", "provenance"}
        arrays = {name: None if data.get(symbol) is None else np.asarray(data[symbol], dtype=float)
                  for symbol, name in PAPER_SYMBOLS.items()}
        return cls(statistics=BasisStatistics(**arrays, num_sequences=data["N"], context_length=data["T"]),
                   tokens=data["vocab"], T=data["T"], N=data["N"], config=data["config"],
                   provenance=data.get("provenance"), details={k: v for k, v in data.items() if k not in known})


@dataclass(eq=False)
class LeadingWeights(Record):
    r"""Every weight of an L-layer attention-only transformer after ``steps`` SGD steps
    (Theorem 4.1): ``weights`` (``W_O``, ``V_l``, ``W_l``, ``P_l``), the theorem's Frobenius error
    ``bounds``, its ``step_limit`` and whether the run is ``within_window``."""

    figure: ClassVar[str] = "leading_weights_figure"
    json_tail: ClassVar[tuple[str, ...]] = ()  # an analytic prediction: the command writes its own provenance
    weights: dict
    bounds: dict
    step_limit: float
    steps_within_limit: bool
    size_conditions: dict
    steps: int
    lr: float
    layers: int
    tokens: list

    def __post_init__(self) -> None:
        import numpy as np

        self.weights = {name: np.asarray(value) for name, value in self.weights.items()}

    @property
    def within_window(self) -> bool:
        return bool(self.steps_within_limit and all(self.size_conditions.values()))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LeadingWeights:
        """The record of :meth:`to_dict`'s dictionary (``within_window`` is computed, not stored)."""
        return super().from_dict({k: v for k, v in data.items() if k != "within_window"})

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in self.written_fields()}
        data["weights"] = {k: v.tolist() for k, v in self.weights.items()}
        return _json_ready({**data, "within_window": self.within_window, **self.details})


@dataclass(eq=False)
class CopyHeadValidation(Record):
    r"""Trained copy-task models against the copy-head theory at one size, one optimizer.

    ``measured``: order parameters and held-out loss per ``P`` (mean and std over seeds or
    draws) and the transitions read off the grid (``adam``: MAP from two starts, ``sgld``:
    posterior means); ``predicted``: the theory's phase diagram on a fine grid (``None`` with
    ``prediction_note`` where the solvers do not cover the convention); ``agreement``: the
    comparison of :mod:`emergence.validation.copy_task.analysis`.
    """

    figure: ClassVar[str] = "copy_task_figure"
    array_fields: ClassVar[tuple[str, ...]] = ("P",)
    attention: str
    L: int
    V: int
    P: list
    optimizer: str
    settings: dict
    predicted: dict | None
    measured: dict
    agreement: dict
    prediction_note: str | None = None
    results_folder: str | None = None


@dataclass(eq=False)
class RhoSweep(Record):
    r"""The copy transition against the persistence :math:`\rho` at one attention and size: the theory per
    :math:`\rho` (``theory``: type; softmax :math:`P^*` and spinodals, or the onset; linear :math:`P_1` and the
    copy crossover), a measured process placed at its effective persistence (``corpus``, or ``None``) and
    measured Adam brackets with their verdict (``adam``: one point per transition the verdict compares), from
    :mod:`emergence.numerics.copy_head.rho_sweep`.  A list of them draws one panel each."""

    figure: ClassVar[str] = "rho_sweep_figure"
    attention: str
    L: int
    V: int
    theory: list
    corpus: dict | None
    adam: list


@dataclass(eq=False)
class LeadingTermValidation(Record):
    r"""A trained attention-only transformer compared, per epoch and layer, with its leading
    terms: Frobenius ``cosine`` and ``relative_error`` per component (``W_O``, ``V``, ``W``,
    ``P``), the theorem's ``step_limit`` and ``within_window`` per epoch, and the losses."""

    figure: ClassVar[str] = "leading_cosines_figure"
    array_fields: ClassVar[tuple[str, ...]] = ("steps", "loss", "within_window")
    config: dict
    corpus: dict
    steps: list
    loss: list
    step_limit: float
    within_window: list
    cosine: dict
    min_cosine: dict
    min_cosine_within_window: dict


@dataclass(eq=False)
class CheckpointComparison(Record):
    r"""A schedule of checkpoints against the leading terms, in the space of the corpus's ``top_k`` tokens:
    per checkpoint (``checkpoints``, in order), layer and head, the ``gram`` and ``weight`` metric of each
    map with its baselines, variants, noise, excess and verdict
    (:mod:`emergence.validation.leading_terms.checkpoint_comparison`)."""

    figure: ClassVar[str] = "checkpoint_figure"
    top_k: int
    T: int
    N: int
    tokenizer: str
    tokens: list
    tokens_raw: list
    settings: dict
    checkpoints: list


@dataclass(eq=False)
class Associations(Record):
    r"""Nearest tokens of each query under the bigram, interchangeability and context statistics:
    ``queries`` maps each query word to ``{token, bigram, interchangeability, context, scores}`` (readable
    tokens), or to ``{error}`` when it is no vocabulary token; ``V``, ``T``, ``N`` of the corpus."""

    queries: dict
    V: int
    T: int
    N: int
    normalize: str
    min_count: int
    config: dict


@dataclass(eq=False)
class PosteriorStudy(Record):
    r"""The sampled posterior's :math:`P^*(L)` over several context lengths (softmax, umbrella + MBAR), beside
    the saddle's and the posterior theory's (:func:`emergence.api.posterior_study`).

    ``rows``: per L the P grid, which points converged, ``sampled`` (:math:`P^*` and its error, or ``None`` with
    a ``reason``), ``saddle``, ``theory``, their ratios and :math:`P^*/(L\ln^2 L)` of each; ``summary``: the
    spread of the sampled :math:`P^*/(L\ln^2 L)` and the sampled/saddle ratio by L.  A measurement: no verdict.
    """

    rows: list
    summary: dict
    V: int
    results_folder: str | None = None

    def plot(self, ax=None):
        r""":math:`P^*(L)` sampled, posterior theory and saddle, and each over :math:`L\ln^2 L`."""
        from emergence.report import figures

        return figures.posterior_study_figure(self.to_dict(), ax=ax)


@dataclass(eq=False)
class PosteriorValidation(Record):
    r"""The copy-task posterior sampled and compared with the posterior theory, the saddle (MAP) beside it
    (:func:`emergence.api.validate_posterior`).

    ``method``: ``umbrella`` (softmax: free-energy profiles :math:`F(a_G)` per ``P``, the measured :math:`P^*`
    where :math:`\Delta F = 0`), ``hmc`` (linear: posterior means of :math:`c_1, c_G`, ``P1`` and the
    crossover) or ``replica-exchange``; ``measured``, ``predicted`` (the posterior theory), ``saddle``,
    ``agreement`` (``passes`` and why); ``cost``: seconds and FLOPs per batched gradient against one core's
    measured float64 matmul rate (``None`` for replica exchange, whose JSON has no ``cost``).
    """

    json_tail: ClassVar[tuple[str, ...]] = ("provenance", "cost")
    predicted: dict | None
    saddle: dict | None
    measured: dict
    agreement: dict
    method: str
    results_folder: str | None = None
    cost: dict | None = None

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        if self.cost is None:
            del data["cost"]
        return data

    def plot(self, ax=None):
        r"""The free-energy profiles and :math:`\Delta F` (umbrella), or the posterior means against ``P``."""
        from emergence.report import figures

        draw = figures.free_energy_figure if self.method == "umbrella" else figures.posterior_figure
        return draw(self.to_dict(), ax=ax)
