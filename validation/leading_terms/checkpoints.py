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

Every comparison is the Frobenius cosine tr(A^\top B)/(\|A\|\|B\|).  Fused QKV layouts
(GPT-2's ``c_attn`` as [q | k | v], GPT-NeoX's ``query_key_value`` as per-head
[q_h | k_h | v_h]) are read by :func:`attention_heads` and checked against each model's own
forward pass in the tests.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

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


def attention_heads(model) -> list[AttentionHeads]:
    """Per-layer, per-head projection matrices of a GPT-2 or GPT-NeoX causal LM (x W convention)."""
    family = model.config.model_type
    layers = []
    if family == "gpt2":
        heads = model.config.n_head
        for block in model.transformer.h:
            fused, bias = _numpy(block.attn.c_attn.weight), _numpy(block.attn.c_attn.bias)  # Conv1D: x @ W
            d = fused.shape[0]
            q, k, v = (fused[:, i * d : (i + 1) * d] for i in range(3))
            bq, bk, bv = (bias[i * d : (i + 1) * d] for i in range(3))
            projection = _numpy(block.attn.c_proj.weight)  # (d, d), x @ W
            layers.append(AttentionHeads(
                _split_heads(q, heads), _split_heads(k, heads), _split_heads(v, heads),
                projection.reshape(heads, d // heads, d),
                bq.reshape(heads, -1), bk.reshape(heads, -1), bv.reshape(heads, -1),
                _numpy(block.attn.c_proj.bias), _numpy(block.ln_1.weight),
            ))
    elif family == "gpt_neox":
        heads = model.config.num_attention_heads
        for block in model.gpt_neox.layers:
            fused = _numpy(block.attention.query_key_value.weight).T  # Linear: x @ W^T, (d, 3d)
            bias = _numpy(block.attention.query_key_value.bias)
            d = fused.shape[0]
            size = d // heads
            per_head = fused.reshape(d, heads, 3, size).transpose(2, 1, 0, 3)  # (3, H, d, d_h)
            bias_per_head = bias.reshape(heads, 3, size).transpose(1, 0, 2)
            projection = _numpy(block.attention.dense.weight).T
            layers.append(AttentionHeads(
                per_head[0], per_head[1], per_head[2], projection.reshape(heads, size, d),
                bias_per_head[0], bias_per_head[1], bias_per_head[2],
                _numpy(block.attention.dense.bias), _numpy(block.input_layernorm.weight),
            ))
    else:
        raise EmergenceError(f"checkpoint family {family!r} is not supported; choose a {' or '.join(FAMILIES)} model")
    return layers


def final_gain(model) -> np.ndarray:
    """Gain of the LayerNorm before the unembedding."""
    if model.config.model_type == "gpt2":
        return _numpy(model.transformer.ln_f.weight)
    return _numpy(model.gpt_neox.final_layer_norm.weight)


def frobenius_cosine(a: np.ndarray, b: np.ndarray) -> float:
    r"""tr(A^\top B) / (\|A\|_F \|B\|_F); 0 when either is zero."""
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.sum(a * b) / norm) if norm > 0 else 0.0


def load_checkpoint(path: str | Path):
    """A local causal-LM checkpoint through ``transformers``, offline (HF_HUB_OFFLINE=1), in eval mode."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        from transformers import AutoModelForCausalLM
    except ImportError:
        raise EmergenceError("checkpoints need 'transformers'; install the optional extra: pip install 'emergence[hf]'") from None
    path = Path(path)
    if not (path / "config.json").is_file():
        raise EmergenceError(f"checkpoint {str(path)!r} is not a saved model folder (no config.json)")
    try:
        model = AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True)
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


def leading_term_targets(stats, keep: int) -> dict[str, np.ndarray]:
    """The leading-term matrices restricted to the first ``keep`` tokens (``<unk>`` dropped)."""
    bigram, value = stats.bigram, stats.value_feature
    cut = (slice(0, keep), slice(0, keep))
    return {"bigram": bigram[cut], "value": value[cut], "value_output": (value @ bigram)[cut],
            "key_query": stats.key_query[cut]}


def compare_checkpoint(model, token_ids: Sequence[int], targets: dict[str, np.ndarray]) -> dict:
    """Frobenius cosines of one checkpoint's token-space matrices with the leading-term ``targets``."""
    ids = np.asarray(token_ids)
    embedding = _numpy(model.get_input_embeddings().weight)[ids]  # (K, d)
    unembedding = (_numpy(model.get_output_embeddings().weight)[ids] * final_gain(model)).T  # (d, K)
    layers = []
    for number, heads in enumerate(attention_heads(model)):
        inputs = embedding * heads.gain
        key_query = [inputs @ q @ k.T @ inputs.T for q, k in zip(heads.query, heads.key)]
        value_output = inputs @ np.einsum("hdi,hie->de", heads.value, heads.output) @ unembedding
        layers.append({
            "layer": number,
            "value": frobenius_cosine(value_output, targets["value"]),
            "value_output": frobenius_cosine(value_output, targets["value_output"]),
            "key_query": frobenius_cosine(sum(key_query), targets["key_query"]),
            "heads": [{"head": h, "key_query": frobenius_cosine(m, targets["key_query"])} for h, m in enumerate(key_query)],
        })
    return {"direct": frobenius_cosine(embedding @ unembedding, targets["bigram"]), "layers": layers}
