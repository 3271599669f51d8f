"""emergence checkpoints: tiny GPT-NeoX and GPT-2 models built locally, trained a few steps, saved, compared.

No hub access (HF_HUB_OFFLINE=1); skipped only where the optional extra 'hf' is not installed.
"""

import json

import numpy as np
import pytest

pytest.importorskip("tokenizers")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from emergence.cli import main  # noqa: E402
from emergence.numerics.corpus.documents import corpus_documents  # noqa: E402
from emergence.numerics.corpus.subword import train_bpe  # noqa: E402
from emergence.validation.leading_terms.checkpoints import attention_heads  # noqa: E402

WIDTH, LAYERS, HEADS, T = 32, 2, 2, 32


def _config(family, vocab, rotary=0.25):
    if family == "gpt2":
        return transformers.GPT2Config(vocab_size=vocab, n_embd=WIDTH, n_layer=LAYERS, n_head=HEADS, n_positions=T + 1,
                                       bos_token_id=0, eos_token_id=0, resid_pdrop=0, embd_pdrop=0, attn_pdrop=0)
    return transformers.GPTNeoXConfig(
        vocab_size=vocab, hidden_size=WIDTH, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        intermediate_size=2 * WIDTH, max_position_embeddings=T + 1, bos_token_id=0, eos_token_id=0,
        rope_parameters={"rope_theta": 10000.0, "partial_rotary_factor": rotary, "rope_type": "default"})


def _model(family, vocab, rotary=0.25):
    torch.manual_seed(0)
    config = _config(family, vocab, rotary)
    model_class = transformers.GPT2LMHeadModel if family == "gpt2" else transformers.GPTNeoXForCausalLM
    return model_class(config)


@pytest.fixture(scope="module")
def story_tokenizer(tmp_path_factory):
    import os

    os.environ["HF_HUB_OFFLINE"] = "1"
    folder = tmp_path_factory.mktemp("runs")
    return folder, train_bpe(corpus_documents("synthetic", seed=0), vocab_size=300)


@pytest.fixture(scope="module", params=["gpt_neox", "gpt2"])
def three_checkpoints(request, story_tokenizer):
    folder, bpe = story_tokenizer
    torch.set_num_threads(1)
    documents = corpus_documents("synthetic", seed=0)
    ids = [bpe.backend.encode(d).ids for d in documents[:64]]
    windows = torch.tensor([row[: T + 1] for row in ids if len(row) > T][:32])
    model = _model(request.param, bpe.backend.get_vocab_size())
    (folder / request.param).mkdir()
    bpe.save(folder / request.param / "tokenizer.json")  # the corpus tokenizer beside the checkpoints
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    paths = []
    for name, steps in (("step0", 0), ("step1", 1), ("step20", 19)):
        for _ in range(steps):
            loss = model(windows, labels=windows).loss
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        path = folder / request.param / name
        model.save_pretrained(path)
        paths.append(path)
    return request.param, paths


def test_checkpoints_prints_and_stores_cosines_per_layer_and_head(three_checkpoints, tmp_path, capsys):
    family, paths = three_checkpoints
    argv = ["checkpoints", *map(str, paths), "--corpus", "synthetic", "--top-k", "60", "--T", "32"]
    assert main(argv + ["--plot", str(tmp_path / "c.png")]) == 0
    table = capsys.readouterr().out
    assert all(str(p) in table for p in paths) and "layer 1: key-query" in table
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    assert main(argv + ["--json", "-"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [c["path"] for c in record["checkpoints"]] == [str(p) for p in paths]
    assert record["top_k"] == 60 and not any("Ġ" in t for t in record["tokens"])
    for checkpoint in record["checkpoints"]:
        assert len(checkpoint["layers"]) == LAYERS
        for layer in checkpoint["layers"]:
            assert len(layer["heads"]) == HEADS
            values = [layer["value"], layer["value_output"], layer["key_query"]] + [h["key_query"] for h in layer["heads"]]
            assert all(-1 <= v <= 1 for v in values)
    # training moves the maps: the cosines of the first and last checkpoint differ
    first, last = record["checkpoints"][0], record["checkpoints"][-1]
    assert first["layers"][0]["value"] != last["layers"][0]["value"]


@pytest.mark.parametrize("family", ["gpt_neox", "gpt2"])
def test_fused_qkv_layout_reproduces_the_models_own_attention(family):
    """Attention recomputed from attention_heads' matrices equals the module's output (rotary off for NeoX)."""
    torch.manual_seed(1)
    model = _model(family, 40, rotary=0.0).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))  # nonzero biases
    captured = {}
    block = model.transformer.h[1] if family == "gpt2" else model.gpt_neox.layers[1]
    attention = block.attn if family == "gpt2" else block.attention

    def hook(module, args, kwargs, output):
        captured["input"] = (args[0] if args else kwargs["hidden_states"]).detach().double().numpy()[0]
        captured["output"] = output[0].detach().double().numpy()[0]

    attention.register_forward_hook(hook, with_kwargs=True)
    with torch.no_grad():
        model(torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6]]))
    heads = attention_heads(model)[1]
    x = captured["input"]
    length = x.shape[0]
    mask = np.tril(np.ones((length, length), dtype=bool))
    total = np.zeros_like(x)
    for h in range(HEADS):
        q = x @ heads.query[h] + heads.query_bias[h]
        k = x @ heads.key[h] + heads.key_bias[h]
        v = x @ heads.value[h] + heads.value_bias[h]
        scores = np.where(mask, q @ k.T / np.sqrt(q.shape[1]), -np.inf)
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)
        total += weights @ v @ heads.output[h]
    assert np.allclose(total + heads.output_bias, captured["output"], atol=1e-5)
    # (reading GPT-NeoX's fused weight with GPT-2's [q | k | v] layout fails this test: checked by hand)


def test_missing_tokenizer_and_bad_folder_are_one_line_errors(tmp_path, capsys):
    assert main(["checkpoints", str(tmp_path), "--corpus", "synthetic"]) == 2
    assert "no tokenizer.json" in capsys.readouterr().err
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    assert main(["checkpoints", str(tmp_path / "x"), "--corpus", "synthetic"]) == 2
    assert "not a saved model folder" in capsys.readouterr().err
