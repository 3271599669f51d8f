r"""Train the model of Definition 3.1 with plain SGD and compare every weight with Theorem 4.1.

From zero init, with constant rate \eta, after s steps the theory predicts
W_O = a_s\bar B, V^{(l)} = b_s\bar\Phi^\top\bar B^\top, W^{(l)} = c_s\bar Q,
P^{(l)} = c_s\Delta (:mod:`emergence.numerics.leading_terms.leading_weights`).  This module trains the torch model
(:mod:`emergence.validation.leading_terms.model`) in float64 and records, per epoch, for every
component and layer the Frobenius cosine tr(A^\top B)/(\|A\|\|B\|) and the relative error
\|A - B\|/\|B\| against the prediction, whether s lies in the theorem's window, and the
training loss of the epoch (mean over its steps, each before its update).  Afterwards it
fits the slope of log(relative error) against log(s\eta) (the theory says the error is
O(s\eta) relative, i.e. slope 1; over the first few steps the error of W_O grows like
(s - 1)\eta, which steepens the fit, so the slope over the later half of the epochs is
reported too) and performs the paper's causal removal: each trained weight in turn is projected off its theory direction,
W \mapsto W - \langle W, D\rangle D/\|D\|^2, and the loss increase is reported.

Window edge: the theorem's window is s \le k/\eta (k = \eta\,s_{max}, e.g.
\min(5/(8\sqrt T), 1/(12L)) for L layers), i.e. s\eta \le k.  ``lr=None`` chooses
\eta = 2k/S for a run of S steps, so that the edge falls halfway through: the first half
of the run lies inside the window and the second outside, and the cosines and relative
errors are seen on both sides (:func:`emergence.report.figures.window_edge_figure`).  The result records s\eta per
epoch, the edge k and the loss at the last epoch inside the window, so whether the loss
moves visibly inside it is reported, not assumed.

Statistics are computed over the training windows themselves, so with the default full
batch (one gradient step per epoch, s = epoch) the prediction and the trained model see
the same data.  With ``batch_size`` smaller than N an epoch has several SGD steps and the
prediction is the full-data one (as in the paper, up to minibatch noise).

>>> result = run_leading_term_validation(LeadingTermRun(epochs=3, max_sequences=8, context_length=16))
>>> sorted(result["min_cosine"]), result["steps"]
(['P', 'V', 'W', 'W_O'], [1, 2, 3])
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import torch

from emergence.base.limits import check_memory
from emergence.numerics.magnitude import cosine, largest_magnitude
from emergence.numerics.leading_terms.basis_statistics import BasisStatistics, basis_statistics
from emergence.numerics.corpus.documents import TokenCorpus, load_corpus
from emergence.numerics.leading_terms.leading_weights import COMPONENTS, size_conditions, step_coefficients, step_limit
from emergence.numerics.corpus.markov import random_markov_chain, sample_markov_windows
from emergence.numerics.corpus.vocabulary import Vocabulary
from emergence.base.errors import DivergenceError, EmergenceError, InvalidSizeError
from emergence.validation.leading_terms.model import LeadingTermTransformer


@dataclass(frozen=True)
class LeadingTermRun:
    """Configuration of one validation run.

    ``corpus``: a UTF-8 file, ``synthetic`` (the story corpus of
    :mod:`emergence.numerics.corpus.stories`) or ``markov`` (a seeded random Markov chain with
    ``vocab_size`` states, default 64).  ``tokenizer``: ``natural``, ``whitespace``, ``bpe`` (a
    byte-level BPE of ``vocab_size`` entries trained on the corpus) or a ``tokenizer.json`` path.
    ``max_sequences``: at most this many of the corpus's windows are trained on, drawn at random
    (``seed``) when there are more (``None``: all); the result's ``corpus`` says how many there were.
    """

    corpus: str = "synthetic"
    layers: int = 2
    lr: float | None = 0.002
    epochs: int = 20
    vocab_size: int | None = None
    context_length: int = 64
    max_sequences: int | None = 64
    batch_size: int | None = None
    tokenizer: str = "natural"
    windows: str = "all"
    oov: str = "unk"
    seed: int = 0
    device: str = "cpu"


def frobenius_cosine(trained: torch.Tensor, predicted: torch.Tensor) -> float | None:
    """tr(A^T B)/(|A| |B|) of the flattened arrays, scale-free; ``None`` when either is zero."""
    return cosine(trained, predicted)


def relative_error(trained: torch.Tensor, predicted: torch.Tensor) -> float | None:
    """|A - B| / |B| (Frobenius, both divided by max|B| first); ``None`` when the prediction is zero."""
    scale = largest_magnitude(predicted.flatten(), 1)
    if scale == 0:
        return None
    return float(torch.linalg.vector_norm((trained - predicted) / scale) / torch.linalg.vector_norm(predicted / scale))


def project_off(weight: torch.Tensor, direction: torch.Tensor) -> torch.Tensor:
    """W - <W, D> D / |D|^2: the weight with its component along D removed (D normalised first)."""
    scale = largest_magnitude(direction.flatten(), 1)
    if scale == 0:
        return weight.clone()
    unit = direction / scale
    return weight - (weight.flatten() @ unit.flatten()) / (unit.flatten() @ unit.flatten()) * unit


MARKOV_SOURCE = "markov"
DEFAULT_MARKOV_VOCABULARY = 64


DEFAULT_MARKOV_SEQUENCES = 64


def _markov_windows(config: LeadingTermRun) -> TokenCorpus:
    """Windows of a seeded random Markov chain (Dirichlet(0.3) rows), tokens named m0, m1, ..."""
    size = config.vocab_size or DEFAULT_MARKOV_VOCABULARY
    count = config.max_sequences or DEFAULT_MARKOV_SEQUENCES
    chain = random_markov_chain(size, seed=config.seed)
    windows = sample_markov_windows(chain, count, config.context_length, seed=config.seed)
    vocabulary = Vocabulary(tuple(f"m{i}" for i in range(size)), "drop")
    return TokenCorpus(windows, vocabulary, config.context_length, count, count)


def _training_windows(config: LeadingTermRun) -> tuple[TokenCorpus, int]:
    """The training windows and how many windows the corpus had before ``max_sequences`` drew from them."""
    if config.corpus == MARKOV_SOURCE:
        corpus = _markov_windows(config)
        return corpus, corpus.num_sequences
    corpus = load_corpus(
        config.corpus,
        tokenizer_name=config.tokenizer,
        vocab_size=config.vocab_size,
        context_length=config.context_length,
        windows=config.windows,
        oov=config.oov,
        seed=config.seed,
    )
    available = corpus.num_sequences
    if config.max_sequences is not None and available > config.max_sequences:
        chosen = np.random.default_rng(config.seed).choice(available, config.max_sequences, replace=False)
        corpus = replace(corpus, sequences=corpus.sequences[np.sort(chosen)])
    return corpus, available


def _directions(stats: BasisStatistics, device: str) -> dict[str, torch.Tensor]:
    arrays = {
        "W_O": stats.bigram,
        "V": stats.value_feature,
        "W": stats.key_query,
        "P": stats.positional,
    }
    return {name: torch.as_tensor(np.asarray(a), dtype=torch.float64, device=device) for name, a in arrays.items()}


def _weights(model: LeadingTermTransformer) -> dict[str, list[torch.Tensor]]:
    return {
        "W_O": [model.output.detach()],
        "V": [layer.value.detach() for layer in model.layers],
        "W": [layer.key_query.detach() for layer in model.layers],
        "P": [layer.position.detach() for layer in model.layers],
    }


def _parameter(model: LeadingTermTransformer, component: str, layer: int) -> torch.nn.Parameter:
    if component == "W_O":
        return model.output
    attribute = {"V": "value", "W": "key_query", "P": "position"}[component]
    return getattr(model.layers[layer], attribute)


EXACT_RELATIVE_ERROR = 1e-10
"""Relative errors below this are float64 round-off of an exact identity (W_O after one
step) and are left out of the slope fit."""


def _fitted_slope(s_eta: list[float], errors: list[float | None]) -> float | None:
    """Least-squares slope of log(relative error) against log(s eta), over inexact points."""
    points = [
        (math.log(x), math.log(e))
        for x, e in zip(s_eta, errors)
        if e is not None and e > EXACT_RELATIVE_ERROR
    ]
    if len(points) < 2:
        return None
    x, y = np.array(points).T
    return float(np.polyfit(x, y, 1)[0])


def mean_over_layers(per_layer: list[list[float | None]]) -> list[float | None]:
    """Per epoch, the mean over layers (``None`` unless every layer has a value)."""
    means = []
    for values in zip(*per_layer):
        defined = [v for v in values if v is not None]
        means.append(float(np.mean(defined)) if len(defined) == len(values) else None)
    return means


def minimum_over(values: list[float | None], mask: list[bool] | None = None) -> float | None:
    """The smallest defined value where ``mask`` is true (``None`` where there is none)."""
    mask = mask or [True] * len(values)
    kept = [v for v, keep in zip(values, mask) if keep and v is not None]
    return min(kept) if kept else None


def causal_removal(model: LeadingTermTransformer, windows: torch.Tensor, directions) -> dict[str, Any]:
    """Loss with each trained weight in turn projected off its theory direction."""
    with torch.no_grad():
        result: dict[str, Any] = {"trained": float(model.loss(windows))}
        for component in COMPONENTS:
            count = 1 if component == "W_O" else len(model.layers)
            losses = []
            for layer in range(count):
                parameter = _parameter(model, component, layer)
                original = parameter.detach().clone()
                parameter.copy_(project_off(original, directions[component]))
                losses.append(float(model.loss(windows)))
                parameter.copy_(original)
            result[component] = losses
    return result


def edge_learning_rate(total_steps: int, context_length: int, layers: int) -> float:
    r"""\eta = 2k/S: the window s \le k/\eta then ends halfway through a run of S steps."""
    return 2.0 * step_limit(1.0, context_length, layers) / max(total_steps, 1)


def _loss_inside_window(losses: list[float], within: list[bool]) -> dict[str, Any]:
    """The loss of the first epoch and of the last epoch inside the window, and their difference."""
    inside = [loss for loss, keep in zip(losses, within) if keep]
    if not inside:
        return {"first": None, "last": None, "change": None}
    return {"first": inside[0], "last": inside[-1], "change": inside[-1] - inside[0]}


def _check_run(config: LeadingTermRun) -> None:
    """One-line errors for sizes, the learning rate and a missing GPU, before any work."""
    if config.epochs < 1 or config.layers < 1 or (config.max_sequences or 1) < 1:
        raise InvalidSizeError("epochs, layers and max_sequences must be at least 1")
    if config.lr is not None and not (config.lr > 0 and math.isfinite(config.lr)):
        raise InvalidSizeError(f"learning rate must be positive and finite, got {config.lr}")
    if config.device.startswith("cuda") and not torch.cuda.is_available():
        raise EmergenceError("device 'cuda' requested but torch sees no GPU; use --device cpu")


def _train_epoch(model, optimizer, windows: torch.Tensor, order: torch.Tensor, batch: int, epoch: int) -> list[float]:
    """One pass of SGD over ``windows`` in ``order``, ``batch`` windows a step; the batch losses.
    :class:`DivergenceError` when a loss or a parameter is not finite."""
    losses = []
    for start in range(0, len(windows), batch):
        optimizer.zero_grad()
        batch_loss = model.loss(windows[order[start : start + batch].to(windows.device)])
        batch_loss.backward()
        optimizer.step()
        losses.append(float(batch_loss.detach()))
    if not all(math.isfinite(v) for v in losses) or not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
        raise DivergenceError(f"training diverged at epoch {epoch + 1} (loss {float(np.mean(losses))}); lower --lr")
    return losses


def _compare_epoch(model, step: int, lr: float, directions: dict, cosine: dict, error: dict) -> None:
    """Append every layer's cosine and relative error against its leading term after ``step`` steps."""
    coefficients = step_coefficients(step, lr)
    for name, trained_layers in _weights(model).items():
        predicted = float(coefficients[name]) * directions[name]
        for layer, trained in enumerate(trained_layers):
            cosine[name][layer].append(frobenius_cosine(trained, predicted))
            error[name][layer].append(relative_error(trained, predicted))


def _summaries(cosine: dict, error: dict, s_eta: list[float], within: list[bool]) -> dict[str, Any]:
    """Minimum cosines (all epochs, inside the window) and fitted error slopes (all epochs, later half)."""
    per_component_error = {name: mean_over_layers(error[name]) for name in COMPONENTS}
    half = len(s_eta) // 2
    return {
        "min_cosine": {name: min((v for layer in cosine[name] for v in layer if v is not None), default=None)
                       for name in COMPONENTS},
        "min_cosine_within_window": {
            name: minimum_over([minimum_over(list(values)) for values in zip(*cosine[name])], within)
            for name in COMPONENTS},
        "relative_error_slope": {name: _fitted_slope(s_eta, per_component_error[name]) for name in COMPONENTS},
        "relative_error_slope_late": {name: _fitted_slope(s_eta[half:], per_component_error[name][half:])
                                      for name in COMPONENTS},
    }


TRAINING_FLOATS_PER_ENTRY = 6
"""Numbers held per layer and entry of batch x T x (V + T) while training (peak RSS: 15 MiB a layer at
V = 83, T = 64, 64 windows, i.e. 3.1 such numbers, measured between 2 and 32 layers on 2026-12-05)."""


def training_bytes(V: int, T: int, batch: int, layers: int) -> float:
    """Peak bytes of training: per layer the activations and their gradients (:data:`TRAINING_FLOATS_PER_ENTRY`
    numbers per batch x T x (V + T) entry) and three copies of its V x V, V x V and T x T weights, plus torch itself."""
    from emergence.base.limits import RUNTIME_BYTES

    per_layer = TRAINING_FLOATS_PER_ENTRY * batch * T * (V + T) + 3 * (2 * V * V + T * T)
    return RUNTIME_BYTES + 8.0 * layers * per_layer


def run_leading_term_validation(config: LeadingTermRun, progress=None) -> dict[str, Any]:
    """Train, compare per epoch, fit slopes, remove directions; a JSON-ready dictionary.

    ``progress(epoch, epochs, loss)`` is called after every epoch when given.
    """
    _check_run(config)
    corpus, available = _training_windows(config)
    V, T, N = corpus.vocabulary.size, corpus.context_length, corpus.num_sequences
    check_memory(training_bytes(V, T, config.batch_size or N, config.layers),
                 f"validate leading-terms with {config.layers} layers at V={V}, T={T} on batches of "
                 f"{config.batch_size or N} windows", "use fewer --layers, a smaller --batch-size or --max-sequences")
    if config.lr is None:
        batches = -(-N // (config.batch_size or N))
        config = replace(config, lr=edge_learning_rate(config.epochs * batches, T, config.layers))
    stats = basis_statistics(corpus.sequences, V, include_interchangeability=False)
    directions = _directions(stats, config.device)

    torch.manual_seed(config.seed)
    model = LeadingTermTransformer(V, T, config.layers).to(device=config.device, dtype=torch.float64)
    windows = torch.as_tensor(corpus.sequences, device=config.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    batch = config.batch_size or N
    shuffler = torch.Generator().manual_seed(config.seed)
    limit = step_limit(config.lr, T, config.layers)

    steps: list[int] = []
    losses: list[float] = []
    cosine = {name: [[] for _ in range(1 if name == "W_O" else config.layers)] for name in COMPONENTS}
    error = {name: [[] for _ in range(1 if name == "W_O" else config.layers)] for name in COMPONENTS}
    for epoch in range(config.epochs):
        order = torch.randperm(N, generator=shuffler) if batch < N else torch.arange(N)
        batch_losses = _train_epoch(model, optimizer, windows, order, batch, epoch)
        steps.append((steps[-1] if steps else 0) + len(batch_losses))
        losses.append(float(np.mean(batch_losses)))
        _compare_epoch(model, steps[-1], config.lr, directions, cosine, error)
        if progress is not None:
            progress(epoch + 1, config.epochs, losses[-1])

    within = [s <= limit for s in steps]
    s_eta = [s * config.lr for s in steps]
    return {
        "config": asdict(config),
        "corpus": {"V": V, "T": T, "N": N, "windows_available": available, "truncated": N < available,
                   "documents_used": corpus.documents_used},
        "steps": steps,
        "loss": losses,
        "final_loss": float(model.loss(windows).detach()),
        "initial_loss": math.log(V),
        "step_limit": limit,
        "within_window": within,
        "s_eta": s_eta,
        "window_edge_s_eta": limit * config.lr,
        "loss_inside_window": _loss_inside_window(losses, within),
        "size_conditions": size_conditions(V, T, config.layers),
        "cosine": cosine,
        "relative_error": error,
        **_summaries(cosine, error, s_eta, within),
        "causal_removal": causal_removal(model, windows, directions),
    }
