r"""The Python API: one function per thing the engine computes, each returning a typed record.

=============================  ===========================================  =====================
function                       computes                                     record
=============================  ===========================================  =====================
:func:`phase_diagram`          global minimum of the copy-head reduced      :class:`~emergence.records.PhaseDiagram`
                               action on a grid of :math:`P`
:func:`rho_sweep`              the copy transition against the persistence  :class:`~emergence.records.RhoSweep`
                               :math:`\rho`, a corpus placed on it
:func:`scaling`                one scaling claim at high precision          :class:`~emergence.records.ScalingVerdict`
:func:`derive`                 a theory's derivation, step by step (SymPy)  :class:`~emergence.records.Derivation`
:func:`basis`                  leading-term corpus statistics               :class:`~emergence.records.Basis`
:func:`predict_weights`        leading-term weights after ``steps`` steps   :class:`~emergence.records.LeadingWeights`
:func:`validate_copy_head`     trained copy-task models vs the theory       :class:`~emergence.records.CopyHeadValidation`
:func:`validate_leading_terms` trained transformer vs its leading terms     :class:`~emergence.records.LeadingTermValidation`
:func:`checkpoints`            saved checkpoints vs the leading terms       :class:`~emergence.records.CheckpointComparison`
:func:`associate`              nearest tokens of query words                :class:`~emergence.records.Associations`
:func:`run_copy_experiment`    :func:`validate_copy_head` from one          :class:`~emergence.records.CopyHeadValidation`
                               :class:`CopyExperiment`
:func:`validate_posterior`     the sampled copy-task posterior vs the       :class:`~emergence.records.PosteriorValidation`
                               posterior theory, the saddle beside it
:func:`judge_posterior`        a saved posterior measurement judged again   :class:`~emergence.records.PosteriorValidation`
                               against the posterior theory (a trial)
:func:`posterior_study`        the sampled posterior's P*(L) beside the     :class:`~emergence.records.PosteriorStudy`
                               saddle's and the posterior theory's
=============================  ===========================================  =====================

The command line calls these functions and prints their records; ``import emergence`` makes
them available as ``emergence.phase_diagram`` and so on without importing anything heavy
until one is called.  Every function checks its arguments before any work
(:mod:`emergence.base.arguments`) and raises :class:`emergence.base.errors.EmergenceError` on
invalid input, with a one-line message; a bad argument is an
:class:`~emergence.base.errors.InvalidArgumentError` that names the parameter.  See ``docs/api.md``.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from emergence.base.errors import InvalidArgumentError
from emergence.validation.copy_task.copy_experiment import CopyExperiment

__all__ = ["phase_diagram", "rho_sweep", "scaling", "derive", "basis", "predict_weights", "validate_copy_head", "validate_leading_terms",
           "checkpoints", "associate", "validate_posterior", "judge_posterior", "posterior_study", "run_copy_experiment",
           "CopyExperiment"]
"""The public API: the functions of the table above, and the copy experiment's configuration and runner."""

DEFAULT_P_RANGE = (1.0, 1e8, 400)
"""The phase diagram's default grid: ``points`` log-spaced values of P in [P_min, P_max]."""


def _convention(convention, convention_class=None):
    """A convention from ``None`` (model T), its text form (``"a=0,c=0,d=1,e=0"``) or itself."""
    from emergence.theory.copy_head.conventions import Convention

    convention_class = convention_class or Convention
    if convention is None or isinstance(convention, str):
        return convention_class.parse(convention or "")
    if not isinstance(convention, convention_class):
        from emergence.base.arguments import shown

        raise InvalidArgumentError("convention", f"must be None, a text such as 'a=0,c=0' or a {convention_class.__name__}, "
                                                 f"got {shown(convention)}")
    return convention


ATTENTIONS = ("linear", "softmax")
"""The attention types of the copy-head theory."""


def _attention_sizes(attention, L, V, min_L: int = 3) -> tuple[str, int, int]:
    """``attention`` (linear or softmax) and the sizes ``L >= min_L``, ``V >= 2``, checked."""
    from emergence.base import arguments as check

    return check.choice("attention", attention, ATTENTIONS), check.integer("L", L, min_L), check.integer("V", V, 2)


def _executor(executor, workers, out, in_process: bool = True) -> None:
    """A sweep's ``executor`` (local, dask or dask:ADDRESS; ``None``, this process, where ``in_process``),
    ``workers`` and ``out`` folder, checked."""
    from emergence.base import arguments as check

    if executor is not None or not in_process:
        check.executor("executor", executor)
    check.optional(check.integer, "workers", workers, 1)
    check.optional(check.path, "out", out)


def phase_diagram(attention: str, L: int, V: int, P: Sequence[float] | None = None, convention=None,
                  tokens: str = "iid"):
    """The copy-head phase diagram at sizes ``L, V``: order parameters, loss and transitions versus ``P``.

    ``P``: the grid (default 400 log-spaced values in [1, 1e8]); ``convention``: a
    :class:`~emergence.theory.copy_head.conventions.Convention`, its text form or ``None`` (model T);
    ``tokens``: the token process, ``iid`` (default), ``markov:rho=R``, ``zipf:alpha=A`` or ``corpus:PATH``
    (a text file's measured lag joints, ``corpus:PATH#tokenizer=NAME`` for another tokenizer;
    :mod:`emergence.numerics.copy_head.token_process`; the record's ``details["tokens"]`` names it and
    ``details["token_statistics"]`` gives the lag range and, for a corpus, the file's provenance).
    """
    import numpy as np

    from emergence.numerics.copy_head.phase_diagram import check_grid
    from emergence.numerics.copy_head.phase_diagram import phase_diagram as minimise
    from emergence.numerics.copy_head.reduced_action import reduced_action
    from emergence.numerics.copy_head.token_process import token_process_action
    from emergence.records import PhaseDiagram
    from emergence.base import arguments as check

    attention, L, V = _attention_sizes(attention, L, V)
    convention = _convention(convention)
    if P is None:
        grid = check_grid(*DEFAULT_P_RANGE)
    else:
        grid = np.sort(check.distinct(check.sequence("P", P, check.positive, min_length=8), 2, "P"))
    process = _token_process(tokens)
    if process.kind == "iid":
        return PhaseDiagram.from_dict(minimise(reduced_action(attention, L, V, convention), grid).as_record(convention))
    diagram = minimise(token_process_action(attention, L, V, process, convention), grid)
    return PhaseDiagram.from_dict(diagram.as_record(convention) | {"tokens": process.label(),
                                                                  "token_statistics": process.statistics_record(L, V)})


RHO_SWEEP_DEFAULTS = {"rho": (0.0, 0.2, 0.4, 0.6, 0.8), "P": (5.0, 1e5, 300)}
""":func:`rho_sweep`'s default persistences and grid (``points`` log-spaced values of P in [P_min, P_max])."""


def rho_sweep(L: int, V: int, rho: Sequence[float] = RHO_SWEEP_DEFAULTS["rho"], P: Sequence[float] | None = None,
              tokens: str = "iid", adam: Sequence = (), attention: str = "softmax"):
    r"""The copy transition (saddle level, model T) against the persistence :math:`\rho` of ``markov:rho=R``.

    Per :math:`\rho`, softmax attention: the coexistence point P* and its metastable window where the jump is first
    order, the onset where it has ended; linear attention: the second-order point P1 and the copy crossover.
    ``tokens="corpus:PATH"`` adds the corpus's own transition (all its lag joints) at its effective persistence
    :math:`\rho_{\rm eff} = (\operatorname{tr}J_1 - \sum\pi^2)/(1 - \sum\pi^2)`; ``adam``: ``validate copy-head``
    records at the same ``attention, L, V`` (:class:`~emergence.records.CopyHeadValidation` or their dicts), judged
    again by the validation's own verdict (``agreement``), one point per transition that verdict compares (its
    measured bracket, its status and the record's verdict).  ``P``: the grid (default 300 log-spaced values in
    [5, 1e5]).
    """
    import numpy as np

    from emergence.base import arguments as check
    from emergence.numerics.copy_head.phase_diagram import check_grid
    from emergence.numerics.copy_head.rho_sweep import adam_point, measured_point, persistence_sweep
    from emergence.numerics.copy_head.sizes import MINIMUM_L, MINIMUM_V
    from emergence.records import RhoSweep
    from emergence.validation.copy_task.analysis import VERDICT_TRANSITIONS, record_agreement

    attention = check.choice("attention", attention, ATTENTIONS)
    L, V = check.integer("L", L, max(MINIMUM_L, 4)), check.integer("V", V, MINIMUM_V)
    rhos = tuple(sorted(set(check.sequence("rho", rho, lambda name, value: check.number(name, value, 0.0, 1.0, open_high=True)))))
    if P is None:
        grid = check_grid(*RHO_SWEEP_DEFAULTS["P"])
    else:
        grid = np.sort(check.distinct(check.sequence("P", P, check.positive, min_length=8), 2, "P"))
    process = _token_process(tokens)
    records = [_adam_record(record, attention, L, V) for record in check.sequence("adam", adam, lambda name, value: value, min_length=0)]
    verdicts = [record_agreement(record) for record in records]
    corpus = measured_point(attention, L, V, process, grid) if process.kind == "corpus" else None
    rho_eff = {process.label(): corpus["rho_eff"]} if corpus else {}
    adam_points = [adam_point(record, rho_eff, name, verdict) for record, verdict in zip(records, verdicts)
                   for name in VERDICT_TRANSITIONS.get(verdict["verdict_kind"], ())]
    return RhoSweep(attention=attention, L=L, V=V, theory=persistence_sweep(attention, L, V, rhos, grid), corpus=corpus,
                    adam=adam_points)


def _adam_record(record, attention: str, L: int, V: int) -> dict:
    """A ``validate copy-head`` record (or its dict) of ``attention`` at sizes ``L, V``, as a dict."""
    from emergence.records import CopyHeadValidation

    record = record.to_dict() if isinstance(record, CopyHeadValidation) else record
    if (not isinstance(record, dict) or "measured" not in record
            or (record.get("attention"), record.get("L"), record.get("V")) != (attention, L, V)):
        raise InvalidArgumentError("adam", f"each must be a validate copy-head record of {attention} attention at "
                                           f"L = {L}, V = {V}")
    return record


def _token_process(tokens):
    """The :class:`~emergence.numerics.copy_head.token_process.TokenProcess` named by ``tokens``
    (:class:`~emergence.base.errors.InvalidArgumentError` otherwise)."""
    from emergence.base.errors import EmergenceError, InvalidArgumentError
    from emergence.numerics.copy_head.token_process import TokenProcess

    try:
        return TokenProcess.parse(str(tokens))
    except EmergenceError as error:
        raise InvalidArgumentError("tokens", str(error)) from None


def scaling(claim: str, law: str | None = None, convention=None, dps: int = 50, fast: bool = False,
            executor: str | None = None, workers: int | None = None, out=None, progress: bool = False):
    """Check one of the paper's scaling claims on the reduced actions to ``dps`` digits.

    ``claim``: a name of :data:`emergence.numerics.copy_head.scaling_claims.CLAIMS`; ``law``: another law
    to test on the same data with the same criterion, an expression in ``L`` and ``V``
    (:mod:`emergence.theory.copy_head.laws`); ``fast``: the smaller sizes only.
    ``executor``: ``None`` measures the sizes one after the other in this process; ``local``,
    ``dask`` or ``dask:ADDRESS`` runs each size as a point of a resumable sweep
    (:mod:`emergence.validation.scaling_sweep`) on ``workers`` processes, stored in the folder
    ``out`` (default: a temporary folder), with a progress bar if ``progress``.
    """
    from emergence.numerics.copy_head.scaling import scaling_report
    from emergence.numerics.copy_head.scaling_certification import derived_reference
    from emergence.numerics.copy_head.scaling_claims import CLAIMS, Law
    from emergence.records import ScalingVerdict
    from emergence.base import arguments as check

    check.choice("claim", claim, tuple(CLAIMS))
    check.optional(check.text, "law", law)
    dps = check.integer("dps", dps, MIN_DPS, MAX_DPS)
    check.flag("fast", fast)
    check.flag("progress", progress)
    _executor(executor, workers, out)
    convention = _convention(convention)
    replaced = None
    if law is not None:
        from emergence.theory.copy_head.laws import law_function, law_ratio_limit, parse_law

        expression = parse_law(law)
        sweep = CLAIMS[claim].sweeps[0]
        fixed = {"V" if sweep.variable == "L" else "L": sweep.fixed}
        factor = law_ratio_limit(parse_law(CLAIMS[claim].law), expression, sweep.variable, fixed)
        replaced = Law(str(expression), law_function(expression), factor)
    options: dict[str, Any] = {}
    if executor is not None:
        from emergence.base.executors import sweep_executor
        from emergence.validation.scaling_sweep import executor_transitions
        from emergence.base.sweeps import sweep_folder

        options["transitions"] = executor_transitions(sweep_executor(executor, workers),
                                                       sweep_folder(out, "emergence-scaling-"), progress)
    report = scaling_report(claim, convention, dps=dps, fast=fast,
                            reference=derived_reference(claim, convention), law=replaced, **options)
    report["convention"] = convention.as_dict()
    return ScalingVerdict.from_dict(report)


MIN_DPS, MAX_DPS = 15, 1000
"""The working precision :func:`scaling` accepts, in decimal digits (below 15 is less than a float's)."""


DERIVATION_NOTES = {
    "copy-head": ("Reconstruction inside the framework of Lavie et al., arXiv 2606.12058 (only the abstract is "
                  "available): these are the engine's own derivations, not the paper's equations."),
}
"""The theories :func:`derive` knows, with the note printed beside each derivation."""


def derive(theory: str, attention: str | None = None, architecture: str = "T"):
    """The derivation of ``theory`` (``"copy-head"``) for ``attention`` (default linear), step by step:
    each step's equations are SymPy objects (``record.steps[k].equations``)."""
    from emergence.records import Derivation
    from emergence.base import arguments as check
    from emergence.theory.copy_head.steps import ARCHITECTURES, derivation_steps

    check.choice("theory", theory, tuple(DERIVATION_NOTES))
    attention = check.optional(check.choice, "attention", attention, ATTENTIONS) or "linear"
    check.choice("architecture", architecture, ARCHITECTURES)
    return Derivation(theory=theory, attention=attention, architecture=architecture,
                      steps=derivation_steps(attention, architecture), note=DERIVATION_NOTES[theory])


def basis(corpus: str, *, tokenizer: str = "natural", vocab: int | None = None, T: int = 64,
          windows: str = "all", oov: str = "unk", seed: int = 0, backend: str = "numpy",
          separator: str = "auto", bpe_vocab: int | None = None, stream: bool = False,
          include_interchangeability: bool = True):
    r"""The leading-term corpus statistics :math:`\bar B, \bar B^\top\bar B, \bar\Phi, \bar G, \bar Q,
    \bar\Delta` of ``corpus`` (a UTF-8 file, or ``"synthetic"``: the built-in story corpus).

    ``tokenizer``: ``natural``, ``whitespace``, ``bpe`` (a byte-level BPE of ``bpe_vocab`` entries
    trained on the corpus) or the path of a saved ``tokenizer.json``; ``separator`` splits documents
    (``auto``: ``<|endoftext|>`` where the file has it, else blank lines); ``stream`` reads a file in
    blocks and accumulates the statistics chunk by chunk (NumPy), for corpora larger than memory.
    The record's ``tokens`` are readable strings; the loaded corpus is ``record.corpus``.
    """
    from pathlib import Path

    from emergence.numerics.backend import array_module, to_numpy
    from emergence.base.io import provenance
    from emergence.numerics.leading_terms.basis_statistics import PAPER_SYMBOLS, BasisStatistics, basis_statistics
    from emergence.records import Basis

    _check_corpus_options(corpus, tokenizer=tokenizer, vocab=vocab, T=T, windows=windows, oov=oov, seed=seed,
                          backend=backend, separator=separator, bpe_vocab=bpe_vocab, stream=stream,
                          include_interchangeability=include_interchangeability)
    xp = array_module(backend)
    if stream:
        from emergence.numerics.corpus.streaming import stream_corpus
        from emergence.numerics.leading_terms.streaming import streamed_basis_statistics

        loaded = stream_corpus(Path(corpus), tokenizer_name=tokenizer, vocab_size=vocab, context_length=T,
                               windows=windows, oov=oov, separator=separator, tokenizer_vocab=bpe_vocab)
        stats = streamed_basis_statistics(loaded.chunks, loaded.vocabulary.size,
                                          include_interchangeability=include_interchangeability)
    else:
        loaded = _load_corpus_options(corpus, tokenizer=tokenizer, vocab=vocab, T=T, windows=windows, oov=oov,
                                     seed=seed, separator=separator, bpe_vocab=bpe_vocab)
        stats = basis_statistics(loaded.sequences, loaded.vocabulary.size, xp=xp,
                                 include_interchangeability=include_interchangeability)
    if xp.__name__ != "numpy":
        arrays = {name: None if getattr(stats, name) is None else to_numpy(getattr(stats, name))
                  for name in PAPER_SYMBOLS.values()}
        stats = BasisStatistics(**arrays, num_sequences=stats.num_sequences, context_length=stats.context_length)
    config = {"corpus": str(corpus), "tokenizer": tokenizer, "vocab": vocab, "T": T, "windows": windows,
              "oov": oov, "separator": separator, "bpe_vocab": bpe_vocab, "stream": stream, "backend": backend}
    return Basis(statistics=stats, tokens=list(loaded.readable_tokens), T=loaded.context_length,
                       N=loaded.num_sequences, config=config,
                       provenance=provenance(config, seed if corpus == "synthetic" else None),
                       details={"documents_used": loaded.documents_used, "documents_total": loaded.documents_total},
                       corpus=loaded)


CORPUS_CHOICES = {"tokenizer": ("natural", "whitespace", "bpe"), "windows": ("first", "all"), "oov": ("drop", "unk"),
                  "backend": ("numpy", "cupy"), "separator": ("auto", "eot", "blank-line", "line")}
"""The named values of :func:`basis`' text options (``tokenizer`` may also be a ``tokenizer.json`` path)."""


def _corpus(corpus, named: tuple[str, ...] = ("synthetic",)) -> str:
    """``corpus``: one of the ``named`` built-in corpora or a file that exists, as text."""
    from emergence.base import arguments as check

    if isinstance(corpus, str) and corpus in named:
        return corpus
    return str(check.existing_file("corpus", corpus))


def _tokenizer(tokenizer) -> str:
    """``tokenizer``: natural, whitespace, bpe or a ``tokenizer.json`` that exists, as text."""
    from pathlib import Path

    from emergence.base.arguments import shown

    if isinstance(tokenizer, str) and tokenizer in CORPUS_CHOICES["tokenizer"]:
        return tokenizer
    if not isinstance(tokenizer, (str, os.PathLike)) or not Path(tokenizer).is_file():
        raise InvalidArgumentError("tokenizer", f"{shown(tokenizer)}: unknown tokenizer; choose natural, whitespace, "
                                                "bpe or the path of a tokenizer.json that exists")
    return str(tokenizer)


def _check_corpus_options(corpus, **options) -> None:
    """:func:`basis`' arguments (:class:`~emergence.base.errors.InvalidArgumentError` naming the first bad one)."""
    from emergence.base import arguments as check

    unknown = sorted(set(options) - set(BASIS_OPTIONS))
    if unknown:
        raise InvalidArgumentError(unknown[0], f"is not an option of basis; options: {', '.join(BASIS_OPTIONS)}")
    _corpus(corpus)
    _tokenizer(options.get("tokenizer", "natural"))
    for name in ("windows", "oov", "backend", "separator"):
        check.choice(name, options.get(name, BASIS_OPTIONS[name]), CORPUS_CHOICES[name])
    check.optional(check.integer, "vocab", options.get("vocab"), 2)
    check.integer("T", options.get("T", 64), 1)
    check.seed("seed", options.get("seed", 0))
    bpe_vocab = check.optional(check.integer, "bpe_vocab", options.get("bpe_vocab"), 2)
    if bpe_vocab is not None and options.get("tokenizer") != "bpe":
        raise InvalidArgumentError("bpe_vocab", "sets the size of the BPE that {tokenizer} bpe trains; "
                                                "add {tokenizer} bpe", mentions=("tokenizer",))
    stream = check.flag("stream", options.get("stream", False))
    check.flag("include_interchangeability", options.get("include_interchangeability", True))
    if stream and (corpus == "synthetic" or options.get("backend", "numpy") != "numpy"):
        raise InvalidArgumentError("stream", "reads a corpus file with the numpy backend")


BASIS_OPTIONS = {"tokenizer": "natural", "vocab": None, "T": 64, "windows": "all", "oov": "unk", "seed": 0,
                 "backend": "numpy", "separator": "auto", "bpe_vocab": None, "stream": False,
                 "include_interchangeability": True}
""":func:`basis`' keyword arguments and their defaults."""


def _load_corpus_options(corpus: str, *, tokenizer: str = "natural", vocab: int | None = None, T: int = 64,
                        windows: str = "all", oov: str = "unk", seed: int = 0, separator: str = "auto",
                        bpe_vocab: int | None = None):
    """The token windows of ``corpus`` under the options of :func:`basis` (no statistics)."""
    from pathlib import Path

    from emergence.numerics.corpus.documents import load_corpus

    return load_corpus(corpus if corpus == "synthetic" else Path(corpus), tokenizer_name=tokenizer,
                       vocab_size=vocab, context_length=T, windows=windows, oov=oov, seed=seed,
                       separator=separator, tokenizer_vocab=bpe_vocab)


def predict_weights(stats, steps: int, lr: float, layers: int):
    """Every weight of a ``layers``-layer attention-only transformer after ``steps`` SGD steps at rate
    ``lr`` (Theorem 4.1 of arXiv 2601.19208), from the statistics of :func:`basis`: its record, or the
    path of the ``.npz`` that ``emergence basis --out`` writes (:meth:`~emergence.records.Basis.read_npz`)."""
    from emergence.numerics.leading_terms.leading_weights import (
        error_bounds,
        predicted_weights,
        size_conditions,
        step_limit,
        within_step_window,
    )
    from emergence.records import Basis, LeadingWeights

    import numpy as np

    from emergence.base import arguments as check
    from emergence.base.errors import DivergenceError

    steps, lr, layers = check.integer("steps", steps, 0), check.positive("lr", lr), check.integer("layers", layers, 1)
    if not isinstance(stats, Basis):
        if not isinstance(stats, (str, os.PathLike)):
            raise InvalidArgumentError("stats", f"must be a Basis record or the path of a basis .npz, "
                                                f"got {check.shown(stats)}")
        stats = Basis.read_npz(check.existing_file("stats", stats))
    V, T = len(stats.tokens), stats.T
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, in one line
        weights = predicted_weights(stats.statistics, steps, lr, layers)
    overflowed = [name for name, value in weights.items() if not np.all(np.isfinite(value))]
    if overflowed:
        raise DivergenceError(f"the predicted {', '.join(overflowed)} overflow (not finite) at s={steps}, "
                              f"eta={lr:g}; use a smaller learning rate or fewer steps")
    return LeadingWeights(
        weights=weights,
        bounds={name: float(value) for name, value in error_bounds(steps, lr, T, layers).items()},
        step_limit=float(step_limit(lr, T, layers)), steps_within_limit=within_step_window(steps, lr, T, layers),
        size_conditions=size_conditions(V, T, layers), steps=steps, lr=lr, layers=layers, tokens=stats.tokens,
    )


def validate_copy_head(attention: str, L: int, V: int, P: Sequence[int], **options):
    """Train (``optimizer="adam"``) or sample (``"sgld"``) copy-task models on every ``P`` and compare
    them with the theory; ``options`` are the fields of :class:`~emergence.validation.copy_task.copy_experiment.CopyExperiment`."""
    from dataclasses import fields

    known = [f.name for f in fields(CopyExperiment)][4:]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InvalidArgumentError(unknown[0], f"is not an option of validate_copy_head; options: {', '.join(known)}")
    return run_copy_experiment(CopyExperiment(attention, L, V, P, **options).checked())


def run_copy_experiment(config: CopyExperiment):
    """Train (Adam) or sample (SGLD) every point of ``config``; a :class:`~emergence.records.CopyHeadValidation`
    (:func:`~emergence.validation.copy_task.copy_experiment.run_copy_sweep`)."""
    from emergence.records import CopyHeadValidation
    from emergence.validation.copy_task.copy_experiment import run_copy_sweep

    return CopyHeadValidation(**run_copy_sweep(config))


def validate_leading_terms(corpus: str = "synthetic", progress=None, **options):
    """Train the attention-only transformer of Definition 3.1 with SGD from zero and compare every weight
    with its leading term; ``options`` are the fields of
    :class:`emergence.validation.leading_terms.experiment.LeadingTermRun` (``device`` default: CPU)."""
    from emergence.base.io import provenance
    from emergence.records import LeadingTermValidation
    from emergence.validation.leading_terms.experiment import LeadingTermRun, run_leading_term_validation
    from emergence.base.runtime import resolve_device

    _check_leading_term_options(corpus, progress, options)
    options["device"] = resolve_device(options.get("device", "cpu"))
    result = run_leading_term_validation(LeadingTermRun(corpus=corpus, **options), progress=progress)
    result["provenance"] = provenance(result["config"], options.get("seed", 0))
    return LeadingTermValidation.from_dict(result)


LEADING_TERM_CORPORA = ("synthetic", "markov")
"""The built-in corpora of :func:`validate_leading_terms` (besides a file)."""


def _check_leading_term_options(corpus, progress, options: dict[str, Any]) -> None:
    """:func:`validate_leading_terms`' arguments, before torch is imported."""
    from emergence.base import arguments as check

    known = ("layers", "lr", "epochs", "vocab_size", "context_length", "max_sequences", "batch_size", "tokenizer",
             "windows", "oov", "seed", "device")
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InvalidArgumentError(unknown[0], f"is not an option of validate_leading_terms; options: {', '.join(known)}")
    _corpus(corpus, LEADING_TERM_CORPORA)
    if progress is not None and not callable(progress):
        raise InvalidArgumentError("progress", f"must be None or a function (epoch, epochs, loss), got {progress!r}")
    check.integer("layers", options.get("layers", 2), 1)
    check.optional(check.positive, "lr", options.get("lr"))
    check.integer("epochs", options.get("epochs", 20), 1)
    for name in ("vocab_size", "max_sequences", "batch_size"):
        check.optional(check.integer, name, options.get(name), 2 if name == "vocab_size" else 1)
    check.integer("context_length", options.get("context_length", 64), 1)
    _tokenizer(options.get("tokenizer", "natural"))
    check.choice("windows", options.get("windows", "all"), CORPUS_CHOICES["windows"])
    check.choice("oov", options.get("oov", "unk"), CORPUS_CHOICES["oov"])
    check.seed("seed", options.get("seed", 0))
    check.optional(check.choice, "device", options.get("device", "cpu"), ("cpu", "cuda"))


def associate(corpus: str, queries: str | Sequence[str], *, top: int = 10, normalize: str = "none",
              min_count: int | None = None, **corpus_options):
    r"""The ``top`` nearest tokens of each query word under \bar B, \Sigma_{\bar B} (``normalize``: ``none``,
    ``cosine`` or ``pmi``, listing only tokens seen ``min_count`` times as targets, default 10) and \bar\Phi
    of ``corpus`` (:mod:`emergence.numerics.leading_terms.associations`); ``queries``: one word (a string)
    or a sequence of words; ``corpus_options`` are :func:`basis`'s.  A query that is no vocabulary token
    gets ``{"error": cause}``; all of them: an error."""
    from emergence.base.errors import EmergenceError
    from emergence.base.io import provenance
    from emergence.numerics.corpus.queries import query_token
    from emergence.numerics.leading_terms.associations import DEFAULT_MIN_COUNT, input_frequency, top_association_scores
    from emergence.records import Associations
    from emergence.base import arguments as check

    queries = check.words("queries", queries)
    top = check.integer("top", top, 1)
    check.choice("normalize", normalize, ("none", "cosine", "pmi"))
    min_count = DEFAULT_MIN_COUNT if min_count is None else check.integer("min_count", min_count, 1)
    _check_corpus_options(corpus, **corpus_options)
    record = basis(corpus, **corpus_options)
    loaded, stats = record.corpus, record.statistics
    readable = dict(zip(loaded.vocabulary.tokens, loaded.readable_tokens))
    frequency = input_frequency(loaded.inputs, loaded.vocabulary.size)
    result: dict[str, dict] = {}
    for word in queries:
        try:
            token = query_token(loaded, word)
        except EmergenceError as error:
            result[word] = {"error": str(error)}
            continue
        scores = top_association_scores(stats, loaded.vocabulary.tokens, token, top, normalize, frequency, min_count)
        result[word] = {"token": readable[token], **{kind: [readable[t] for t, _ in pairs] for kind, pairs in scores.items()},
                        "scores": {kind: [score for _, score in pairs] for kind, pairs in scores.items()}}
    if all("error" in entry for entry in result.values()):
        raise EmergenceError("; ".join(entry["error"] for entry in result.values()))
    config = {**record.config, "query": list(queries), "top": top, "normalize": normalize, "min_count": min_count}
    return Associations(queries=result, V=loaded.vocabulary.size, T=loaded.context_length, N=loaded.num_sequences,
                        normalize=normalize, min_count=min_count, config=config,
                        provenance=provenance(config, corpus_options.get("seed", 0) if corpus == "synthetic" else None))


def _check_checkpoint_options(paths, options: dict[str, Any]) -> None:
    """:func:`checkpoints`' arguments, before anything is read (``options``: its keyword arguments)."""
    from emergence.base import arguments as check

    check.sequence("paths", paths, check.existing_folder)
    if options["corpus"] is None and options["stats"] is None:
        raise InvalidArgumentError("corpus", "(statistics and hidden states) or {stats} (a basis .npz) must be "
                                             "given, or both", mentions=("stats",))
    if options["corpus"] is not None:
        _corpus(options["corpus"])
    check.optional(check.existing_file, "stats", options["stats"])
    check.optional(check.integer, "top_k", options["top_k"], 2)
    check.integer("T", options["T"], 1)
    check.choice("separator", options["separator"], CORPUS_CHOICES["separator"])
    check.seed("seed", options["seed"])
    check.optional(check.existing_file, "tokenizer", options["tokenizer"])
    check.integer("permutations", options["permutations"], 2)
    check.optional(check.integer, "k0", options["k0"], 0)
    check.optional(check.integer, "forward_windows", options["forward_windows"], 1)
    _executor(options["executor"], options["workers"], options["out"])
    check.flag("progress", options["progress"])
    check.optional(check.path, "ids", options["ids"])


def checkpoints(paths: Sequence[str], *, corpus: str | None = None, stats: str | None = None,
                top_k: int | None = None, T: int = 64, separator: str = "auto", seed: int = 0,
                tokenizer: str | None = None, permutations: int = 8, k0: int | None = None,
                forward_windows: int | None = 256, out: str | None = None, executor: str | None = None,
                workers: int | None = None, progress: bool = False, ids: str | None = None):
    r"""Score local GPT-2 / GPT-NeoX checkpoints (``save_pretrained`` folders, in schedule order) against the
    leading terms: per checkpoint, layer and head the Gram metric and the weight metric of each token-space
    map, with the frequency and random-init baselines, the rank > ``k0`` and top-component-removed variants,
    the noise level over ``permutations`` token relabelings, the excess and the verdict, and \Delta against
    GPT-2's learned positions (:mod:`emergence.validation.leading_terms.checkpoint_comparison`).

    The statistics come from ``corpus`` (tokenized once with ``tokenizer``, default the ``tokenizer.json``
    beside the checkpoints; ``top_k`` real tokens plus ``<unk>``, default 500) or from a ``basis`` .npz
    (``stats``, computed with the same tokenizer); the hidden states need ``corpus``.  Memory is estimated
    before the statistics and before each checkpoint is loaded (over the budget: :class:`InvalidSizeError`).
    ``out``: a folder where each scored checkpoint is written as it finishes, so that a rerun resumes;
    ``executor``: ``None`` (in this process, one checkpoint at a time), ``local`` or ``dask[:ADDRESS]`` with
    ``workers`` (:func:`~emergence.base.executors.sweep_executor`).  ``ids``: the file that keeps the corpus's
    token-id windows (int32, memory-mapped; default a temporary file): the corpus is read in blocks and
    tokenized once into it, and the statistics and the forward passes read it."""
    _check_checkpoint_options(paths, locals())  # first: locals() are exactly the arguments here
    from pathlib import Path

    from emergence.base.executors import sweep_executor
    from emergence.base.io import provenance
    from emergence.numerics.corpus.subword import load_tokenizer_file
    from emergence.numerics.corpus.tokenizers import display_tokens
    from emergence.records import CheckpointComparison
    from emergence.validation.leading_terms import checkpoint_comparison as comparison
    from emergence.validation.leading_terms.checkpoints import checkpoint_config, find_tokenizer, leading_term_targets

    tokenizer_path = Path(tokenizer) if tokenizer is not None else find_tokenizer(paths)
    for path in paths:
        checkpoint_config(path)  # every folder is a saved model, before anything is read
    loaded_tokenizer = load_tokenizer_file(tokenizer_path)
    settings = comparison.ComparisonSettings(permutations, k0, seed, forward_windows)
    source = comparison.statistics_source(paths, corpus, None if stats is None else Path(stats),
                                          top_k if stats is not None else top_k or DEFAULT_CHECKPOINT_TOP_K,
                                          T, separator, seed, loaded_tokenizer, ids)
    keep = len(source.tokens) - 1
    token_ids = comparison.tokenizer_ids(source.tokens[:keep], loaded_tokenizer, tokenizer_path)
    targets = leading_term_targets(source.bigram, source.context, source.key_query, keep, source.positional)
    windows = comparison.forward_windows(source.windows, settings)
    digest = comparison.inputs_digest(token_ids, targets, windows, settings)
    references = comparison.build_references(targets, comparison.target_frequencies(source.bigram, keep), settings)
    del targets
    scored = comparison.compare_checkpoints(
        paths, comparison.CheckpointScorer(token_ids, references, windows, settings), digest, out,
        None if executor is None else sweep_executor(executor, workers), progress)
    config = {"checkpoints": [str(p) for p in paths], "corpus": corpus, "stats": None if stats is None else str(stats),
              "top_k": keep, "T": source.T, "separator": separator, "tokenizer": str(tokenizer_path)}
    return CheckpointComparison(
        top_k=keep, T=source.T, N=source.N, tokenizer=str(tokenizer_path),
        tokens=list(display_tokens(loaded_tokenizer, source.tokens[:keep])), tokens_raw=list(source.tokens[:keep]),
        settings={"permutations": permutations, "k0": references["bigram", "weight"].k0, "seed": seed,
                  "forward_windows": None if windows is None else len(windows),
                  "windows_available": None if source.windows is None else len(source.windows), "inputs": digest},
        checkpoints=scored, provenance=provenance(config, seed if corpus == "synthetic" else None))


DEFAULT_CHECKPOINT_TOP_K = 500
"""``checkpoints``' K when neither ``top_k`` nor a statistics file gives one."""


def validate_posterior(attention: str, L: int, V: int, P: Sequence[int] | None = None, *, method: str | None = None,
                       convention=None, seed: int = 0, out: str | None = None, executor: str = "local",
                       workers: int | None = None, theory_draws: int | None = None, progress: bool = True,
                       trial: str | None = None, **settings):
    r"""Sample the copy-task posterior and compare it with the posterior theory, the saddle (MAP) beside it.

    ``method``: ``"umbrella"`` (softmax default: free-energy profiles along :math:`a_G`, P* where
    :math:`\Delta F = 0`), ``"hmc"`` (linear default: unbiased posterior means of :math:`c_1, c_G`)
    or ``"replica-exchange"``, run by
    :func:`~emergence.validation.copy_task.posterior_methods.run_posterior_validation`.  ``P`` defaults
    to six points from P*/2.5 to 2P* of the posterior theory (umbrella) or 8 to 1024, doubling
    (:data:`~emergence.validation.copy_task.posterior_methods.LINEAR_GRID`).  ``settings``: the sampler's fields
    (:data:`~emergence.validation.copy_task.free_energy.FREE_ENERGY_DEFAULTS` or, for replica
    exchange, :data:`~emergence.validation.copy_task.config.POSTERIOR_DEFAULTS`).  Returns a
    :class:`~emergence.records.PosteriorValidation`: ``predicted``, ``saddle``, ``measured``, ``agreement``,
    ``cost`` (umbrella and HMC: :func:`_gradient_cost`) and ``provenance``; its JSON is what
    ``emergence validate posterior --json`` writes.  ``trial``: the posterior theory's trial, umbrella only
    (:data:`~emergence.validation.copy_task.posterior_free_energy.VERDICT_TRIALS`: ``"block"`` or ``"gauge"``; ``None``,
    the default: :data:`~emergence.numerics.copy_head.posterior.DEFAULT_TRIAL`, the block trial);
    :func:`judge_posterior` judges a saved measurement with another one.
    """
    from emergence.base.executors import sweep_executor
    from emergence.base.io import provenance
    from emergence.base.sweeps import sweep_folder
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.posterior_memory import check_posterior_memory
    from emergence.validation.copy_task.posterior_methods import run_posterior_validation

    attention, L, V = _attention_sizes(attention, L, V, min_L=2)
    method = _check_posterior_options(attention, P, method, seed, executor, workers, out, theory_draws, progress, settings)
    trial = _check_trial(trial, method)
    convention = _convention(convention, CopyTaskConvention).with_attention(attention)
    check_posterior_memory(attention, method, L, V, P, settings, theory_draws, workers, convention.architecture)
    out = sweep_folder(out, "emergence-posterior-")
    pool = sweep_executor(executor, workers)
    report = run_posterior_validation(attention, L, V, P, method, convention, settings, out=out, executor=pool,
                                      seed=seed, theory_draws=theory_draws, progress=progress,
                                      **({"trial": trial} if method == "umbrella" else {}))
    report["method"] = method
    report["results_folder"] = out
    config = {"attention": attention, "L": int(L), "V": int(V), "P_grid": [int(p) for p in report["measured"]["P"]],
              "method": method, "convention": convention.as_dict(), "settings": settings,
              **({"trial": trial} if method == "umbrella" else {})}
    report["provenance"] = provenance(config, seed)
    if method != "replica-exchange":
        report["cost"] = _gradient_cost(report["measured"])
    from emergence.records import PosteriorValidation

    return PosteriorValidation.from_dict(report)


def judge_posterior(records: str | Sequence[str], *, trial: str | None = None, theory_draws: int | None = None,
                    importance_draws: int = 0, progress: bool = True):
    r"""Saved softmax umbrella validations (the JSON of :func:`validate_posterior`) judged again against the
    posterior theory with ``trial``, without resampling
    (:func:`~emergence.validation.copy_task.posterior_rejudge.judge_measurement`).

    ``records``: one path, or several of one setting (L, V, convention, divide, seed), merged point by point (a later
    file's point replaces an earlier one's at the same P).  ``trial``: ``"block"`` or ``"gauge"``
    (:data:`~emergence.validation.copy_task.posterior_free_energy.VERDICT_TRIALS`; ``None``, the default:
    :data:`~emergence.numerics.copy_head.posterior.DEFAULT_TRIAL`); ``theory_draws``: the theory's
    Monte Carlo rows (default 4000 per profile and 20000 for P*, the validation's); ``importance_draws``: draws per
    mode of the importance-weighted diagnosis (0, the default, skips it; the verdict does not read it).  Returns a
    :class:`~emergence.records.PosteriorValidation` whose ``measured`` is the records' (``reused`` keeps their
    provenance) and whose ``predicted`` and ``agreement`` are new.
    """
    from emergence.base import arguments as check
    from emergence.base.io import provenance, read_json
    from emergence.records import PosteriorValidation
    from emergence.validation.copy_task.posterior_rejudge import judge_measurement

    paths = check.sequence("records", [records] if isinstance(records, (str, os.PathLike)) else records,
                           check.existing_file)
    trial = _check_trial(trial, "umbrella")
    check.optional(check.integer, "theory_draws", theory_draws, 100)
    check.integer("importance_draws", importance_draws, 0)
    check.flag("progress", progress)
    loaded = [read_json(path) for path in paths]
    report = judge_measurement(loaded, trial, theory_draws, importance_draws, progress=progress)
    setting = report.pop("setting")
    report.update(method="umbrella", results_folder=None)
    config = {"attention": "softmax", "method": "umbrella", "records": [str(path) for path in paths], "trial": trial,
              "theory_draws": theory_draws,
              "importance_draws": importance_draws, "L": setting["L"], "V": setting["V"],
              "P_grid": report["measured"]["P"], "convention": setting["convention"], "divide": setting["divide"]}
    report["provenance"] = provenance(config, setting["seed"])
    return PosteriorValidation.from_dict(report)


def _verdict_trials() -> tuple[str, ...]:
    from emergence.validation.copy_task.posterior_free_energy import VERDICT_TRIALS

    return tuple(VERDICT_TRIALS)


def _check_trial(trial, method: str) -> str:
    """The posterior theory's ``trial``, ``None`` read as the default
    (:data:`~emergence.numerics.copy_head.posterior.DEFAULT_TRIAL`): one of the verdict's trials; another than the
    default only for umbrella."""
    from emergence.base import arguments as check
    from emergence.numerics.copy_head.posterior import DEFAULT_TRIAL

    trial = DEFAULT_TRIAL if trial is None else trial
    check.choice("trial", trial, _verdict_trials())
    if trial != DEFAULT_TRIAL and method != "umbrella":
        raise InvalidArgumentError("trial", f"{trial} is a trial of the softmax posterior theory (umbrella), not of {method}")
    return trial


def posterior_study(sizes: Sequence[int], V: int, *, convention=None, seed: int = 0, out: str | None = None,
                    executor: str = "local", workers: int | None = None, theory_draws: int | None = None,
                    progress: bool = True, extensions: int = 2, per_size: dict[int, dict[str, Any]] | None = None,
                    **settings):
    r"""The sampled posterior's :math:`P^*(L)` for softmax attention at each L of ``sizes``, beside the saddle's and
    the posterior theory's, and :math:`P^*/(L\ln^2 L)` of each
    (:func:`~emergence.validation.copy_task.posterior_study.run_posterior_study`).

    Each L runs :func:`validate_posterior`'s umbrella validation on its default grid, extended (at most
    ``extensions`` times, two points each) until converged points bracket :math:`\Delta F = 0`; every point is
    stored under ``out/L{L}`` and a rerun resumes.  ``settings``: the umbrella sampler's fields.  ``per_size``:
    ``{L: {field: value, ..., "P": [P1, P2, ...]}}``, sampler fields that replace those of ``settings`` at that L
    (e.g. ``{16: {"centres": [0.05, 0.1, ..., 0.75], "kappa": 800.0, "max_windows": 24}}``: stiff, close windows
    on the barrier) and optionally its starting grid ``"P"`` in place of the default one; each L of it must be one
    of ``sizes``.  The provenance's ``config`` records it as ``per_size`` (keys as text).  Returns a
    :class:`~emergence.records.PosteriorStudy` (a measurement, with no verdict).
    """
    from emergence.base import arguments as check
    from emergence.base.executors import sweep_executor
    from emergence.base.io import provenance
    from emergence.base.sweeps import sweep_folder
    from emergence.numerics.copy_head.sizes import MINIMUM_L
    from emergence.records import PosteriorStudy
    from emergence.validation.copy_task.config import CopyTaskConvention
    from emergence.validation.copy_task.posterior_memory import check_posterior_memory
    from emergence.validation.copy_task.posterior_study import run_posterior_study, size_settings

    sizes = sorted(set(check.sequence("sizes", sizes, lambda name, value: check.integer(name, value, MINIMUM_L))))
    V = check.integer("V", V, 2)
    check.integer("extensions", extensions, 0)
    _check_posterior_options("softmax", None, "umbrella", seed, executor, workers, out, theory_draws, progress, settings)
    per_size = _check_per_size(per_size, sizes, settings)
    convention = _convention(convention, CopyTaskConvention).with_attention("softmax")
    for L in sizes:
        chosen, grid = size_settings(L, settings, per_size)
        check_posterior_memory("softmax", "umbrella", L, V, grid, chosen, theory_draws, workers, convention.architecture)
    out = sweep_folder(out, "emergence-posterior-study-")
    study = run_posterior_study(sizes, V, convention, settings, out=out, executor=sweep_executor(executor, workers),
                                seed=seed, theory_draws=theory_draws, progress=progress, extensions=extensions,
                                per_size=per_size)
    config = {"sizes": sizes, "V": V, "method": "umbrella", "extensions": extensions,
              "convention": convention.as_dict(), "settings": settings,
              "per_size": {str(L): own for L, own in per_size.items()}}
    return PosteriorStudy(study["rows"], study["summary"], V, out, provenance=provenance(config, seed))


def _check_per_size(per_size, sizes: Sequence[int], settings: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """:func:`posterior_study`'s ``per_size``: ``None`` or a mapping from sizes of the study to dictionaries of
    umbrella sampler fields (checked over ``settings`` as :func:`_check_sampler_settings` does) and an optional grid
    ``"P"`` (at least two distinct integers >= 1).  Returns it with integer keys and plain lists; a refusal names
    ``per_size`` and the size."""
    from emergence.base import arguments as check
    from emergence.validation.copy_task.posterior_study import GRID_KEY

    if per_size is None:
        return {}
    if not isinstance(per_size, dict):
        raise InvalidArgumentError("per_size", f"must be a dictionary {{L: {{setting: value}}}}, got {check.shown(per_size)}")
    checked = {}
    for L, own in per_size.items():
        if not isinstance(own, dict) or check.integer("per_size", L) not in sizes:
            raise InvalidArgumentError("per_size", f"must map sizes of the study ({list(sizes)}) to dictionaries of "
                                                   f"settings, got {check.shown(L)}: {check.shown(own)}")
        own = dict(own)
        try:
            if GRID_KEY in own:
                own[GRID_KEY] = sorted(check.distinct(check.sequence(
                    GRID_KEY, own[GRID_KEY], lambda name, value: check.integer(name, value, 1), min_length=2), 2, GRID_KEY))
            _check_sampler_settings({**settings, **{key: value for key, value in own.items() if key != GRID_KEY}},
                                    "umbrella")
        except InvalidArgumentError as error:
            raise InvalidArgumentError("per_size", f"at L = {int(L)}: {error}") from None
        checked[int(L)] = {key: list(value) if isinstance(value, (tuple, list)) else value for key, value in own.items()}
    return checked


def _gradient_cost(measured: dict[str, Any]) -> dict[str, Any]:
    """Seconds and FLOPs per batched gradient at each P, and their fraction of one core's measured float64
    matmul rate (:func:`~emergence.base.runtime.torch_single_thread_flops`)."""
    from emergence.base.runtime import torch_single_thread_flops

    limit = torch_single_thread_flops()
    rates = [f / s for f, s in zip(measured["flops_per_gradient"], measured["seconds_per_gradient"])]
    return {"seconds_per_gradient": measured["seconds_per_gradient"], "flops_per_gradient": measured["flops_per_gradient"],
            "limit": "float64 matmul, one torch thread (each point runs one)", "limit_flop_per_second": limit,
            "fraction_of_limit": [rate / limit for rate in rates]}


def _check_posterior_options(attention: str, P, method, seed, executor, workers, out, theory_draws, progress,
                             settings: dict[str, Any]) -> str:
    """:func:`validate_posterior`'s arguments besides the sizes; the method
    (:func:`~emergence.validation.copy_task.posterior_methods.posterior_method`: default by ``attention``)."""
    from emergence.base import arguments as check
    from emergence.validation.copy_task.posterior_methods import posterior_method

    method = posterior_method(attention, method)
    if P is not None:
        check.distinct(check.sequence("P", P, lambda name, value: check.integer(name, value, 1), min_length=2), 2, "P")
    check.seed("seed", seed)
    _executor(executor, workers, out, in_process=False)
    check.optional(check.integer, "theory_draws", theory_draws, 1)
    check.flag("progress", progress)
    _check_sampler_settings(settings, method)
    return method


SAMPLER_RANGES = {"centres": (0.0, 1.0, True), "divide": (0.0, 1.0, True), "copy_threshold": (0.0, 1.0, True),
                  "step_fraction": (0.0, 1.0, False), "coldest": (0.0, 1.0, False), "hottest": (1.0, None, False),
                  "min_overlap": (0.0, 1.0, True)}
"""Sampler settings with bounds besides "positive" (low, high, whether the end is left out; for ``hottest``, 1
itself is allowed, for ``min_overlap`` 0, no placement):
window centres and the basin divide inside (0, 1), the replica-exchange ladder from ``coldest`` <= 1 to
``hottest`` >= 1 (the target T = 1 is on it)."""


def _check_sampler_settings(settings: dict[str, Any], method: str) -> None:
    """Each sampler setting a known field of ``method``'s defaults, of its default's kind: counts >= 1
    (``warmup``, ``burn_in``, ``exchange_every``, ``first_draws`` >= 0), positive numbers (within :data:`SAMPLER_RANGES`;
    ``kappa`` also one per window centre), at least two distinct window centres, a tempering of the ladder (``likelihood``; ``full`` only with ``coldest`` = 1)."""
    from emergence.base import arguments as check
    from emergence.validation.copy_task.config import FREE_ENERGY_DEFAULTS, POSTERIOR_DEFAULTS

    defaults = POSTERIOR_DEFAULTS if method == "replica-exchange" else FREE_ENERGY_DEFAULTS
    unknown = sorted(set(settings) - set(defaults))
    if unknown:
        raise InvalidArgumentError(unknown[0], f"is not a setting of the {method} sampler; known: {sorted(defaults)}")

    def within(name: str, value) -> float:
        low, high, open_high = SAMPLER_RANGES.get(name, (0.0, None, False))
        return check.number(name, value, low, high, open_low=name not in ("hottest", "min_overlap"),
                            open_high=open_high)

    for name, value in settings.items():
        default = defaults[name]
        if name == "tempering":
            check.choice(name, value, ("likelihood", "full"))
        elif name == "kappa" and isinstance(value, (list, tuple)):  # one stiffness per window
            stiffness = check.sequence(name, value, within)
            windows = len(settings.get("centres", defaults["centres"]))
            if len(stiffness) != windows:
                raise InvalidArgumentError(name, f"must be one number, or one per window ({windows} centres), got "
                                                 f"{len(stiffness)} values")
        elif isinstance(default, int):
            check.integer(name, value, 0 if name in ("warmup", "burn_in", "exchange_every", "first_draws") else 1)
        elif isinstance(default, float):
            within(name, value)
        else:
            check.distinct(check.sequence(name, value, within, min_length=2), 2, name)
    if settings.get("tempering") == "full" and settings.get("coldest", defaults.get("coldest")) != 1:
        raise InvalidArgumentError("tempering", "full needs {coldest} 1 (rungs below T = 1 only with likelihood "
                                                "tempering)", mentions=("coldest",))
