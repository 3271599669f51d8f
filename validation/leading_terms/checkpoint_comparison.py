r"""A schedule of checkpoints scored against the leading terms: the Gram metric and the weight metric
of every token-space map, each with its baselines, variants, noise level, excess and verdict
(:mod:`emergence.numerics.leading_terms.token_metrics`).

What is compared with what (rows: the corpus's K most frequent tokens, rank order):

===================  ===========================================  =============================  ==============
name                 model matrix                                 theory matrix                  metrics
===================  ===========================================  =============================  ==============
``direct``           \tilde E_K U_K                               \bar B                         gram, weight
``key_query``        (E W_Q^h)(E W_K^h)^\top, per head and summed  \bar Q                         gram, weight
``value``            (E W_V^h)(W_O^h U_K), per head and summed     \bar\Phi^\top\bar B^\top       gram, weight
``value_output``     the same map                                 \bar\Phi^\top\bar B^\top\bar B  weight
``hidden_bigram``    layer l's mean hidden state per token (K x d) \bar B                         gram
``hidden_value``     the same                                     \bar\Phi^\top\bar B^\top       gram
===================  ===========================================  =============================  ==============

The head sum has the Gram of the head average (both metrics are blind to scale).  The tokens'
frequencies are the target frequencies :math:`q_k = \sum_j \bar B_{jk} + 1/V` (exact: the columns
of :math:`\bar B` sum to :math:`q_k - 1/V`), so a ``basis`` file gives them as the corpus does.
The random-init baseline is a model built from each checkpoint's ``config.json`` with the library's
initialisation (seeded), scored once per distinct configuration and released before the
checkpoints are loaded; the hidden states of every model come from one forward pass over the same
windows of the corpus (at most ``forward_windows``, drawn with the seed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from emergence.numerics.leading_terms.positions import PositionReference
from emergence.numerics.leading_terms.token_metrics import METRICS, Reference, default_k0

COMPARISONS: dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]] = {
    "direct": (("direct", "bigram", METRICS),),
    "key_query": (("key_query", "key_query", METRICS),),
    "value": (("value", "value", METRICS), ("value_output", "value_output", ("weight",))),
    "hidden": (("hidden_bigram", "bigram", ("gram",)), ("hidden_value", "value", ("gram",))),
    "positional": (("positional", "positional", ("weight",)),),
}
"""Per kind of map (:func:`~emergence.validation.leading_terms.checkpoints.token_space_maps`): the
reported name, the theory matrix of :func:`~emergence.validation.leading_terms.checkpoints.leading_term_targets`
and the metrics."""
NO_FORWARD = "no corpus windows for the forward pass (give --corpus)"


@dataclass(frozen=True)
class ComparisonSettings:
    """How each map is scored: ``permutations`` of the noise level, the rank cut ``k0`` (None: 50, at most
    K/2), the ``seed`` of permutations, window draw and random model, the ``forward_windows`` of the
    hidden states (None: all)."""

    permutations: int = 8
    k0: int | None = None
    seed: int = 0
    forward_windows: int | None = 256


def target_frequencies(bigram: np.ndarray, keep: int) -> np.ndarray:
    r""":math:`q_k = \sum_j \bar B_{jk} + 1/V` of the first ``keep`` tokens (V = the size of ``bigram``)."""
    return (bigram.sum(axis=0) + 1.0 / len(bigram))[:keep]


def build_references(targets: dict[str, np.ndarray], frequency: np.ndarray, settings: ComparisonSettings
                     ) -> dict[tuple[str, str], Reference]:
    """A :class:`Reference` per (theory matrix, metric) that :data:`COMPARISONS` uses."""
    from emergence.base.errors import InvalidArgumentError

    keep = len(frequency)
    k0 = default_k0(keep) if settings.k0 is None else settings.k0
    if not 0 <= k0 <= keep - 3:
        raise InvalidArgumentError("k0", f"must leave at least 3 of the K={keep} tokens above the rank cut, got {k0}")
    needed = {(target, metric) for rows in COMPARISONS.values() for _, target, metrics in rows for metric in metrics}
    references: dict = {(target, metric): Reference.build(metric, targets[target], frequency, k0, settings.permutations,
                                                          settings.seed)
                        for target, metric in sorted(needed) if target != "positional"}
    if "positional" in targets:
        references["positional", "weight"] = PositionReference.build(targets["positional"], settings.permutations,
                                                                     settings.seed)
    return references


def forward_windows(windows: np.ndarray | None, settings: ComparisonSettings) -> np.ndarray | None:
    """At most ``settings.forward_windows`` of the (N, T + 1) id windows, drawn with the seed, in corpus order."""
    if windows is None or settings.forward_windows is None or len(windows) <= settings.forward_windows:
        return windows
    chosen = np.random.default_rng(settings.seed).choice(len(windows), settings.forward_windows, replace=False)
    return np.asarray(windows)[np.sort(chosen)]


def _maps(model, token_ids, windows, references):
    from emergence.validation.leading_terms.checkpoints import mean_hidden_states, token_space_maps

    hidden = None if windows is None else mean_hidden_states(model, windows, token_ids)
    positional = references.get(("positional", "weight"))
    return token_space_maps(model, token_ids, hidden, None if positional is None else len(positional.delta))


def random_values(path: str | Path, token_ids, references, windows, seed: int) -> dict:
    """Every map of a random model of ``path``'s shape against the theory, per variant:
    ``{location: {name: {metric: {variant: value}}}}``."""
    import gc

    from emergence.validation.leading_terms.checkpoints import random_model

    model = random_model(path, seed)
    values: dict = {}
    for location, kind, matrix in _maps(model, token_ids, windows, references):
        values.setdefault(location, {}).update(
            {name: {metric: references[target, metric].values(matrix) for metric in metrics}
             for name, target, metrics in COMPARISONS[kind]})
    del model
    gc.collect()
    return values


def _place(record: dict, location: tuple[int, ...]) -> dict:
    """The entry of ``record`` (a checkpoint's result) that ``location`` names, made on first use."""
    if not location:
        return record
    while len(record["layers"]) <= location[0]:
        record["layers"].append({"layer": len(record["layers"]), "heads": []})
    layer = record["layers"][location[0]]
    if len(location) == 1:
        return layer
    while len(layer["heads"]) <= location[1]:
        layer["heads"].append({"head": len(layer["heads"])})
    return layer["heads"][location[1]]


def score_model(model, token_ids, references, random: dict | None, windows) -> dict:
    """``{"direct": ..., "layers": [{"layer", <name>: {metric: score}, "heads": [...]}]}`` of one model;
    without ``windows`` the hidden-state comparisons fail with the reason."""
    record: dict = {"layers": []}
    for location, kind, matrix in _maps(model, token_ids, windows, references):
        baseline = None if random is None else random[location]
        _place(record, location).update(
            {name: {metric: references[target, metric].score(matrix, None if baseline is None else baseline[name][metric])
                    for metric in metrics} for name, target, metrics in COMPARISONS[kind]})
    for kind, reason in (("hidden", NO_FORWARD), ("positional", _position_reason(model, references))):
        for layer in record["layers"]:
            for name, _, metrics in COMPARISONS[kind]:
                layer.setdefault(name, {metric: {"passes": False, "reason": reason} for metric in metrics})
    return record


def _position_reason(model, references) -> str:
    from emergence.validation.leading_terms.checkpoints import position_reason

    positional = references.get(("positional", "weight"))
    return position_reason(model, None if positional is None else len(positional.delta))


class CheckpointScorer:
    """``work(config)`` of a resumable sweep (:func:`~emergence.base.sweeps.run_sweep`): scores the checkpoint
    ``config["path"]``.  Holds the token ids, references and windows, and the random-init baseline of each
    distinct ``config.json`` once computed (in one process: an in-process sweep computes it once per
    configuration; each worker of a process pool or Dask computes its own)."""

    def __init__(self, token_ids: Sequence[int], references: dict, windows: np.ndarray | None,
                 settings: ComparisonSettings, budget: float | None = None):
        self.token_ids, self.references, self.windows = list(token_ids), references, windows
        self.settings, self.budget = settings, budget
        self.baselines: dict[str, dict] = {}

    def __call__(self, point: dict) -> dict:
        """Estimate (refused by :func:`~emergence.base.limits.check_memory` over the budget), the random
        baseline of the shape when new, load, score, release."""
        import gc
        import json

        from emergence.base.errors import EmergenceError
        from emergence.base.limits import check_memory
        from emergence.validation.leading_terms import checkpoints as loading

        path = point["path"]
        config = loading.checkpoint_config(path)
        rows = int(config.get("vocab_size", 0))
        if max(self.token_ids) >= rows:
            raise EmergenceError(f"checkpoint {str(path)!r} has {rows} embedding rows, fewer than the tokenizer's ids")
        check_memory(loading.checkpoint_bytes(path, len(self.token_ids)), f"checkpoint {str(path)!r}",
                     "compare fewer tokens (--top-k) or free memory", self.budget)
        shape = json.dumps({k: v for k, v in config.items() if k not in ("torch_dtype", "dtype")}, sort_keys=True)
        if shape not in self.baselines:
            self.baselines[shape] = random_values(path, self.token_ids, self.references, self.windows, self.settings.seed)
        model = loading.load_checkpoint(path)
        result = {"path": str(path), **score_model(model, self.token_ids, self.references, self.baselines[shape],
                                                   self.windows)}
        del model
        gc.collect()
        return result


def checkpoint_points(paths: Sequence[str | Path], inputs_digest: str) -> list[dict]:
    """One sweep configuration per checkpoint: its path, the size and modification time of each of its files
    (a checkpoint saved again is scored again) and ``inputs_digest`` (:func:`inputs_digest`)."""
    return [{"path": str(path), "inputs": inputs_digest,
             "files": {f.name: [f.stat().st_size, f.stat().st_mtime_ns] for f in sorted(Path(path).iterdir()) if f.is_file()}}
            for path in paths]


def inputs_digest(token_ids: Sequence[int], targets: dict[str, np.ndarray], windows: np.ndarray | None,
                  settings: ComparisonSettings) -> str:
    """SHA-256 (16 hex digits) of everything a checkpoint's scores depend on besides the checkpoint: the token
    ids, the theory matrices, the forward windows and the settings."""
    import hashlib

    digest = hashlib.sha256(np.asarray(token_ids, dtype=np.int64).tobytes())
    for name in sorted(targets):
        digest.update(name.encode() + np.ascontiguousarray(targets[name], dtype=np.float64).tobytes())
    digest.update(b"" if windows is None else np.ascontiguousarray(windows, dtype=np.int64).tobytes())
    digest.update(repr(sorted(settings.__dict__.items())).encode())
    return digest.hexdigest()[:16]


def compare_checkpoints(paths: Sequence[str | Path], scorer: CheckpointScorer, digest: str, out: str | None = None,
                        executor=None, progress: bool = False) -> list[dict]:
    """Every checkpoint's scores, in order, through :func:`~emergence.base.sweeps.run_sweep`: each finished
    checkpoint is written to ``out`` (default: a temporary folder) and a rerun over the same folder scores
    only the checkpoints without a file.  ``executor``: default in-process, one checkpoint at a time."""
    from emergence.base.sweeps import InProcessExecutor, run_sweep, sweep_folder

    return run_sweep(scorer, checkpoint_points(paths, digest), sweep_folder(out, "checkpoints-"),
                     executor=executor or InProcessExecutor(), progress=progress, description="checkpoints")


@dataclass(frozen=True)
class StatisticsSource:
    r"""The theory side of a comparison: \bar B, \bar\Phi, \bar Q over the K tokens plus ``<unk>``, \Delta (T,),
    the tokens (tokenizer spelling), T, N and the corpus's (N, T + 1) id windows (``None`` from a file alone)."""

    bigram: np.ndarray
    context: np.ndarray
    key_query: np.ndarray
    positional: np.ndarray
    tokens: tuple[str, ...]
    T: int
    N: int
    windows: np.ndarray | None


def _id_corpus(corpus: str, tokenizer, top_k: int, T: int, separator: str, seed: int, ids_path: str | None):
    """The corpus tokenized once into the id file ``ids_path`` (default: a temporary one); a file is read in blocks."""
    from emergence.base.sweeps import sweep_folder
    from emergence.numerics.corpus.documents import corpus_documents
    from emergence.numerics.corpus.streaming import iter_documents, resolve_file_separator
    from emergence.numerics.corpus.token_ids import id_corpus

    if corpus == "synthetic":
        documents = corpus_documents(corpus, seed=seed, separator=separator)
    else:
        documents = iter_documents(Path(corpus), resolve_file_separator(Path(corpus), separator))
    target = ids_path or str(Path(sweep_folder(None, "checkpoint-ids-")) / "ids.int32")
    return id_corpus(documents, tokenizer, top_k, T, target)


def corpus_source(corpus: str, tokenizer, top_k: int, T: int, separator: str, seed: int,
                  ids_path: str | None = None) -> StatisticsSource:
    """The statistics of ``corpus`` tokenized once (:func:`~emergence.numerics.corpus.token_ids.id_corpus`),
    accumulated over chunks of the id file (:func:`~emergence.numerics.leading_terms.streaming.streamed_basis_statistics`)."""
    from emergence.numerics.leading_terms.streaming import streamed_basis_statistics

    loaded = _id_corpus(corpus, tokenizer, top_k, T, separator, seed, ids_path)
    stats = streamed_basis_statistics(loaded.chunks, loaded.vocabulary.size, include_interchangeability=False)
    return StatisticsSource(stats.bigram, stats.context, stats.key_query, stats.positional, loaded.vocabulary.tokens,
                            loaded.context_length, loaded.num_sequences, loaded.ids)


def file_source(path: Path, checkpoints: Sequence[str | Path], top_k: int | None = None) -> StatisticsSource:
    """The statistics of a ``basis`` .npz, after checking that its arrays, the targets and the largest checkpoint
    fit (the file's size bounds the arrays read; K is read first); :class:`EmergenceError` when it is not one, or
    when ``top_k`` is given and is not the file's K (``None``: the file's K)."""
    from emergence.base.errors import EmergenceError, InvalidArgumentError
    from emergence.base.limits import check_memory
    from emergence.validation.leading_terms.checkpoints import checkpoint_bytes

    try:
        with np.load(path) as data:
            keep = len(data["vocab_raw"]) - 1
            if top_k is not None and top_k != keep:
                raise EmergenceError(f"--top-k {top_k} is not the K of the --stats file ({keep}); leave --top-k out "
                                     f"or compute the file with basis --vocab {top_k}")
            check_memory(path.stat().st_size + REFERENCE_KxK_ARRAYS * 8 * keep**2
                         + max(checkpoint_bytes(p, keep) for p in checkpoints),
                         "checkpoints", "compute the statistics with a smaller basis --vocab")
            arrays = {name: data[name] for name in ("B", "Phi", "Q", "Delta", "vocab_raw", "T", "N")}
    except (OSError, ValueError, KeyError) as error:
        raise InvalidArgumentError("stats", f"{str(path)!r} is not a basis .npz with B, Phi, Q, Delta, vocab_raw, T, N "
                                   f"({str(error).splitlines()[0] if str(error) else type(error).__name__})") from None
    return StatisticsSource(arrays["B"], arrays["Phi"], arrays["Q"], arrays["Delta"], tuple(map(str, arrays["vocab_raw"])),
                            int(arrays["T"]), int(arrays["N"]), None)


REFERENCE_KxK_ARRAYS = 18
r"""K x K float64 arrays a run holds besides the checkpoint's: \bar B, \bar\Phi, \bar Q, the four
theory matrices, and for the seven (theory matrix, metric) pairs of :data:`COMPARISONS` the
representations (a Gram and a deflated Gram for each of the three gram pairs, a deflated matrix for
each of the four weight pairs), one spare."""


def statistics_source(paths: Sequence[str | Path], corpus: str | None, stats: Path | None, top_k: int | None, T: int,
                      separator: str, seed: int, tokenizer, ids_path: str | None = None) -> StatisticsSource:
    """The statistics of ``stats`` (a basis file) or of ``corpus``, after the memory check; with both, the
    file's statistics and the corpus's windows for the forward pass (tokenized at the file's K).  ``top_k``: the
    corpus's K; with ``stats``, ``None`` or the file's K (another K is refused before the arrays are read)."""
    from emergence.base.limits import check_memory
    from emergence.numerics.leading_terms.basis_statistics import dense_statistics_bytes
    from emergence.validation.leading_terms.checkpoints import checkpoint_bytes

    if stats is not None:
        source = file_source(stats, paths, top_k)
        if corpus is None:
            return source
        windows = _id_corpus(corpus, tokenizer, len(source.tokens) - 1, source.T, separator, seed, ids_path).ids
        return StatisticsSource(**{**source.__dict__, "windows": windows})
    largest = max(checkpoint_bytes(path, top_k) for path in paths)  # also checks every folder first
    check_memory(dense_statistics_bytes(top_k + 1) + REFERENCE_KxK_ARRAYS * 8 * top_k**2 + largest, "checkpoints",
                 "compare fewer tokens (--top-k)")
    return corpus_source(corpus, tokenizer, top_k, T, separator, seed, ids_path)


def tokenizer_ids(tokens: Sequence[str], tokenizer, path: Path) -> list[int]:
    """The ids of the statistics' ``tokens`` in ``tokenizer``; :class:`EmergenceError` naming the first it lacks."""
    from emergence.base.errors import EmergenceError

    ids = [tokenizer.backend.token_to_id(token) for token in tokens]
    if None in ids:
        raise EmergenceError(f"token {tokens[ids.index(None)]!r} of the statistics is not in {str(path)!r}; compute "
                             "them with that tokenizer (basis --tokenizer PATH)")
    return ids
