r"""Leading-term matrices against real causal-LM checkpoints (GPT-NeoX/Pythia, GPT-2), in token space.

A checkpoint is a local Hugging Face folder (``save_pretrained``) loaded through
``transformers`` with no hub access; its tokenizer is the ``tokenizer.json`` beside it (in
the folder or its parent).  The corpus is tokenized with it and its K most frequent tokens
span the comparison space (the paper's Pythia analysis uses the top 5000): statistics are
computed with every other token mapped to ``<unk>``, whose row and column are then dropped.

Per layer l and head h, with E_K the input embeddings of the K tokens (K x d) scaled by the
gain \gamma of the layer's input LayerNorm (its centring and normalisation are left out,
an approximation), U_K the output embeddings of the K tokens (d x K) scaled by the final
LayerNorm's gain, and the head's W_Q^h, W_K^h, W_V^h (d x d_h), W_O^h (d_h x d):

- key-query of head h: \tilde E_K W_Q^h W_K^{h\top} \tilde E_K^\top (row: query token,
  column: key token), compared with \bar Q.  Rotary position embeddings (GPT-NeoX) rotate q
  and k by the position; this is the lag-0 bilinear form, where the rotations cancel;
- the layer's attention input/output map in token space,
  \tilde E_K \sum_h W_V^h W_O^h U_K, compared with the value feature
  \bar\Phi^\top\bar B^\top and with the composed leading term \bar\Phi^\top\bar B^\top\bar B
  (value times output, paper Eq. 12);
- the direct path \tilde E_K U_K, compared with \bar B (the output weight's leading term).

The maps are kept as their factors (:func:`token_space_maps`): the key-query map of a head as
(\tilde E_K W_Q^h, \tilde E_K W_K^h), whose product (\tilde E_K W_Q^h)(\tilde E_K W_K^h)^\top
(:func:`key_query_map`) costs 2 K d d_h + K^2 d_h multiply-adds, not
((\tilde E_K W_Q^h) W_K^{h\top}) \tilde E_K^\top, K d d_h + K d_h d + K^2 d: at Pythia-1.4B's
d = 2048, d_h = 128 and K = 5000 that is 3.8e9 against 5.4e10.

This module loads checkpoints and reads their maps, hidden states and positions; scoring them
(metrics, baselines, verdicts) and the one-at-a-time, resumable loop over a schedule are
:mod:`emergence.validation.leading_terms.checkpoint_comparison`.  A checkpoint's memory is
estimated from its ``config.json`` and weight files before loading (:func:`checkpoint_bytes`), so a
checkpoint that will not fit is refused in one line instead of being killed mid-run.  Fused QKV layouts
(GPT-2's ``c_attn`` as [q | k | v], GPT-NeoX's ``query_key_value`` as per-head
[q_h | k_h | v_h]) are read by :func:`attention_heads` and checked against each model's own
forward pass in the tests.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from emergence.base.errors import EmergenceError

FAMILIES: tuple[str, ...] = ("gpt2", "gpt_neox")


@dataclass(frozen=True)
class AttentionHeads:
    """One layer's heads: ``query``, ``key``, ``value`` (H, d, d_h), ``output`` (H, d_h, d), biases, LayerNorm gain (d,)."""

    query: np.ndarray
    key: np.ndarray
    value: np.ndarray
    output: np.ndarray
    query_bias: np.ndarray
    key_bias: np.ndarray
    value_bias: np.ndarray
    output_bias: np.ndarray
    gain: np.ndarray


def _numpy(tensor) -> np.ndarray:
    return tensor.detach().to(dtype=__import__("torch").float64).cpu().numpy()


def _split_heads(matrix: np.ndarray, heads: int) -> np.ndarray:
    """(d, H d_h) -> (H, d, d_h), heads contiguous along the columns."""
    d, width = matrix.shape
    return matrix.reshape(d, heads, width // heads).transpose(1, 0, 2)


def iter_attention_heads(model) -> Iterator[AttentionHeads]:
    """Per-layer, per-head projection matrices of a GPT-2 or GPT-NeoX causal LM (x W convention), in float64,
    one layer at a time (a layer's copies are 8 d^2 float64 numbers)."""
    family = model.config.model_type
    if family not in FAMILIES:
        raise EmergenceError(f"checkpoint family {family!r} is not supported; choose a {' or '.join(FAMILIES)} model")
    if family == "gpt2":
        heads = model.config.n_head
        for block in model.transformer.h:
            fused, bias = _numpy(block.attn.c_attn.weight), _numpy(block.attn.c_attn.bias)  # Conv1D: x @ W
            d = fused.shape[0]
            q, k, v = (fused[:, i * d : (i + 1) * d] for i in range(3))
            bq, bk, bv = (bias[i * d : (i + 1) * d] for i in range(3))
            projection = _numpy(block.attn.c_proj.weight)  # (d, d), x @ W
            yield AttentionHeads(
                _split_heads(q, heads), _split_heads(k, heads), _split_heads(v, heads),
                projection.reshape(heads, d // heads, d),
                bq.reshape(heads, -1), bk.reshape(heads, -1), bv.reshape(heads, -1),
                _numpy(block.attn.c_proj.bias), _numpy(block.ln_1.weight),
            )
    else:
        heads = model.config.num_attention_heads
        for block in model.gpt_neox.layers:
            fused = _numpy(block.attention.query_key_value.weight).T  # Linear: x @ W^T, (d, 3d)
            bias = _numpy(block.attention.query_key_value.bias)
            d = fused.shape[0]
            size = d // heads
            per_head = fused.reshape(d, heads, 3, size).transpose(2, 1, 0, 3)  # (3, H, d, d_h)
            bias_per_head = bias.reshape(heads, 3, size).transpose(1, 0, 2)
            projection = _numpy(block.attention.dense.weight).T
            yield AttentionHeads(
                per_head[0], per_head[1], per_head[2], projection.reshape(heads, size, d),
                bias_per_head[0], bias_per_head[1], bias_per_head[2],
                _numpy(block.attention.dense.bias), _numpy(block.input_layernorm.weight),
            )


def attention_heads(model) -> list[AttentionHeads]:
    """Every layer of :func:`iter_attention_heads` at once."""
    return list(iter_attention_heads(model))


def final_gain(model) -> np.ndarray:
    """Gain of the LayerNorm before the unembedding."""
    if model.config.model_type == "gpt2":
        return _numpy(model.transformer.ln_f.weight)
    return _numpy(model.gpt_neox.final_layer_norm.weight)


WEIGHT_FILE_SUFFIXES: tuple[str, ...] = (".safetensors", ".bin", ".pt")
WORKING_KxK_ARRAYS = 10
"""K x K float64 arrays alive at once while a map is scored: the formed map (weight metric), its
Gram, the map and its Gram with the top component removed, a permuted copy of the theory and the
products and masks inside the similarities."""
WORKING_LAYER_SQUARES = 8
"""d x d float64 numbers of one layer's copies (fused Q, K, V, the output projection and the
per-head reshapes of the slices)."""


def checkpoint_config(path: str | Path) -> dict:
    """The checkpoint's ``config.json`` (cheap: read before loading); :class:`EmergenceError` if missing or unreadable."""
    import json

    config_file = Path(path) / "config.json"
    if not config_file.is_file():
        raise EmergenceError(f"checkpoint {str(path)!r} is not a saved model folder (no config.json)")
    try:
        return json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise EmergenceError(f"cannot read {str(config_file)!r}: {error}") from None


def checkpoint_bytes(path: str | Path, keep: int) -> float:
    r"""Estimated peak bytes of loading and comparing one checkpoint over ``keep`` tokens, before loading it.

    The weights in their own dtype (the size of the weight files: they are loaded as stored) plus
    the float64 working set of :func:`token_space_maps` and the metrics: the K x d rows of the input and output
    embeddings and the gain-scaled inputs (3 K d), the mean hidden states of every layer (L K d), one layer's copies
    (:data:`WORKING_LAYER_SQUARES` d^2) and :data:`WORKING_KxK_ARRAYS` K x K arrays, at 8 bytes each.
    """
    config = checkpoint_config(path)
    width = int(config.get("hidden_size", config.get("n_embd", 0)))
    layers = int(config.get("num_hidden_layers", config.get("n_layer", 0)))
    weights = sum(f.stat().st_size for f in Path(path).iterdir() if f.suffix in WEIGHT_FILE_SUFFIXES)
    return weights + 8.0 * ((3 + layers) * keep * width + WORKING_LAYER_SQUARES * width**2 + WORKING_KxK_ARRAYS * keep**2)


def load_checkpoint(path: str | Path):
    """A local causal-LM checkpoint through ``transformers`` in its stored dtype, offline (HF_HUB_OFFLINE=1), in eval mode."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        import transformers
        from transformers import AutoModelForCausalLM
    except ImportError:
        raise EmergenceError("checkpoints need 'transformers'; install the optional extra: pip install 'emergence[hf]'") from None
    checkpoint_config(path)
    # transformers 5 calls the stored-dtype option dtype, 4.x torch_dtype
    stored_dtype = {"dtype" if int(transformers.__version__.split(".")[0]) >= 5 else "torch_dtype": "auto"}
    try:
        model = AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True, **stored_dtype)
    except Exception as error:  # transformers raises many types for unreadable folders
        raise EmergenceError(f"cannot load checkpoint {str(path)!r}: {str(error).splitlines()[0]}") from None
    return model.eval()


def find_tokenizer(checkpoints: Sequence[str | Path]) -> Path:
    """The ``tokenizer.json`` beside the first checkpoint (in it or in its parent folder)."""
    first = Path(checkpoints[0])
    for candidate in (first / "tokenizer.json", first.parent / "tokenizer.json"):
        if candidate.is_file():
            return candidate
    raise EmergenceError(f"no tokenizer.json in {str(first)!r} or its parent; save the corpus tokenizer beside the checkpoints")


def leading_term_targets(bigram: np.ndarray, context: np.ndarray, key_query: np.ndarray, keep: int,
                         positional: np.ndarray | None = None) -> dict[str, np.ndarray]:
    r"""The leading-term matrices restricted to the first ``keep`` tokens (``<unk>`` dropped): \bar B,
    \bar\Phi^\top\bar B^\top, \bar\Phi^\top\bar B^\top\bar B and \bar Q, from the V x V \bar B, \bar\Phi, \bar Q;
    and \Delta (T,) as ``positional`` when given."""
    value = (bigram @ context).T
    cut = (slice(0, keep), slice(0, keep))
    targets = {"bigram": bigram[cut], "value": value[cut], "value_output": (value @ bigram)[cut],
               "key_query": key_query[cut]}
    return targets if positional is None else {**targets, "positional": np.asarray(positional)}


def _rows(weight, ids: np.ndarray) -> np.ndarray:
    """Rows ``ids`` of a torch weight in float64 (the rows are picked before the conversion)."""
    import torch

    return _numpy(weight.detach()[torch.as_tensor(ids)])


def key_query_map(inputs: np.ndarray, query: np.ndarray, key: np.ndarray) -> np.ndarray:
    r"""(E W_Q)(E W_K)^\top for E (K, d), W_Q and W_K (d, d_h): row query token, column key token, (K, K).

    The same matrix as ((E W_Q) W_K^\top) E^\top in 2 K d d_h + K^2 d_h multiply-adds instead of
    K d d_h + K d_h d + K^2 d (the product through d_h, not d, is the K x K one)."""
    return (inputs @ query) @ (inputs @ key).T




def learned_positions(model, length: int | None) -> np.ndarray | None:
    """The first ``length`` learned position embeddings (GPT-2's ``wpe``), (T, d); ``None`` for rotary
    models (GPT-NeoX), without ``length`` or when the model has fewer positions."""
    if length is None or model.config.model_type != "gpt2" or length > model.config.n_positions:
        return None
    return _numpy(model.transformer.wpe.weight[:length])


def position_reason(model, length: int | None) -> str:
    """Why a model has no positional comparison (see :func:`learned_positions`)."""
    if model.config.model_type != "gpt2":
        return "rotary position embeddings (GPT-NeoX) have no learned positional weight to compare with Delta"
    if length is None:
        return "no Delta (the statistics file has none)"
    return f"T={length} exceeds the model's {model.config.n_positions} learned positions"


def token_space_maps(model, token_ids: Sequence[int], hidden: Sequence[np.ndarray] | None = None,
                     length: int | None = None) -> Iterator[tuple[tuple[int, ...], str, np.ndarray]]:
    r"""``(location, kind, matrix)`` of every token-space map of ``model``, one at a time.

    ``location``: ``()`` for the direct path, ``(l,)`` for layer l, ``(l, h)`` for head h of layer l.
    ``kind``: ``direct`` (\tilde E_K U_K), ``key_query`` ((E W_Q^h)(E W_K^h)^\top, and its sum over
    heads), ``value`` ((E W_V^h)(W_O^h U_K), and its sum over heads: the layer's attention
    input/output map), ``hidden`` (the layer's mean hidden states ``hidden[l]``, K x d, when given) and
    ``positional`` (the lag profile of (P W_Q^h)(P W_K^h)^\top over the first ``length`` learned positions
    P, gain-scaled, per head and summed: :func:`~emergence.numerics.leading_terms.positions.lag_profile`;
    GPT-2 only, see :func:`learned_positions`).  The maps come as
    :class:`~emergence.numerics.leading_terms.token_metrics.Factored` (K x d_h factors; the head sums
    K x d), never as K x K arrays."""
    from emergence.numerics.leading_terms.positions import lag_profile
    from emergence.numerics.leading_terms.token_metrics import Factored

    positions = learned_positions(model, length)
    ids = np.asarray(token_ids)
    embedding = _rows(model.get_input_embeddings().weight, ids)  # (K, d)
    unembedding = (_rows(model.get_output_embeddings().weight, ids) * final_gain(model)).T  # (d, K)
    yield (), "direct", Factored(embedding, unembedding.T)
    for number, heads in enumerate(iter_attention_heads(model)):
        inputs = embedding * heads.gain
        per_head = {"key_query": [], "value": []}
        for head in range(len(heads.query)):
            for kind, single in (("key_query", Factored(inputs @ heads.query[head], inputs @ heads.key[head])),
                                 ("value", Factored(inputs @ heads.value[head], (heads.output[head] @ unembedding).T))):
                yield (number, head), kind, single
                per_head[kind].append(single)
        for kind, parts in per_head.items():
            yield (number,), kind, Factored.concatenate(parts)
        del per_head
        if hidden is not None:
            yield (number,), "hidden", hidden[number]
        if positions is not None:
            scaled = positions * heads.gain
            profiles = [lag_profile(key_query_map(scaled, q, k)) for q, k in zip(heads.query, heads.key)]
            yield from (((number, head), "positional", profile) for head, profile in enumerate(profiles))
            yield (number,), "positional", np.sum(profiles, axis=0)


def mean_hidden_states(model, windows: np.ndarray, token_ids: Sequence[int], batch: int = 16) -> list[np.ndarray]:
    r"""Per layer l, the mean over the corpus positions of each of the K tokens of the output of block l
    (``hidden_states[l + 1]`` of ``transformers``; the last layer's is taken after the final LayerNorm,
    as ``transformers`` returns it), (K, d) float64; a token that never occurs has a zero row.

    ``windows``: (N, T + 1) tokenizer ids; the first T of each window are fed, in batches of ``batch``."""
    import torch

    ids = np.asarray(token_ids)
    inputs = np.asarray(windows)[:, :-1]
    lookup = np.full(int(max(inputs.max(), ids.max())) + 1, -1, dtype=np.int64)
    lookup[ids] = np.arange(len(ids))
    rows = torch.as_tensor(lookup[inputs])
    width = model.get_input_embeddings().weight.shape[1]
    sums = torch.zeros((model.config.num_hidden_layers, len(ids), width), dtype=torch.float64)
    with torch.no_grad():
        for start in range(0, len(inputs), batch):
            batch_ids = torch.as_tensor(np.asarray(inputs[start : start + batch], dtype=np.int64))
            states = model(batch_ids, output_hidden_states=True).hidden_states
            where = rows[start : start + batch].reshape(-1)
            kept = where >= 0
            for layer, state in enumerate(states[1:]):
                sums[layer].index_add_(0, where[kept], state.reshape(-1, width)[kept].to(torch.float64))
    counts = torch.bincount(rows[rows >= 0], minlength=len(ids)).clamp(min=1).to(torch.float64)
    return [(layer / counts[:, None]).numpy() for layer in sums]


def random_model(path: str | Path, seed: int = 0):
    """A randomly initialised model of the checkpoint's shape (its ``config.json``, the library's own
    initialisation, seeded), in eval mode: the random-init baseline."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(str(path), local_files_only=True)
    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(config).eval()
