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
from emergence.validation.leading_terms.checkpoint_comparison import NO_FORWARD  # noqa: E402
from emergence.validation.leading_terms.checkpoints import attention_heads, position_reason  # noqa: E402

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
    assert all(str(p) in table for p in paths) and "layer 1  key_query     gram" in table and "heads passing" in table
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    assert main(argv + ["--json", "-"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [c["path"] for c in record["checkpoints"]] == [str(p) for p in paths]
    assert record["top_k"] == 60 and not any("Ġ" in t for t in record["tokens"])
    assert len(set(record["tokens"])) == len(record["tokens_raw"]) == 60 and "Ġthe" in record["tokens_raw"]
    targets = _literal_targets(record)
    for path, checkpoint in zip(paths, record["checkpoints"]):
        expected = _literal_cosines(transformers.AutoModelForCausalLM.from_pretrained(path), record["tokens_raw"],
                                    paths[0].parent / "tokenizer.json", targets)
        for layer, literal in zip(checkpoint["layers"], expected["layers"], strict=True):
            values = _weight_cosines(layer)
            literal_values = ([literal["value"], literal["value_output"], literal["key_query"]]
                              + [h["key_query"] for h in literal["heads"]])
            assert len(layer["heads"]) == HEADS
            assert np.max(np.abs(np.subtract(values, literal_values))) <= COSINE_ROUNDING, (path, layer["layer"])
        assert abs(checkpoint["direct"]["weight"]["value"] - expected["direct"]) <= COSINE_ROUNDING


def _weight_cosines(layer):
    """The weight metric's cosines of a layer: value, value-output, key-query summed and per head."""
    return ([layer[name]["weight"]["value"] for name in ("value", "value_output", "key_query")]
            + [h["key_query"]["weight"]["value"] for h in layer["heads"]])


COSINE_ROUNDING = 2.0**-44  # 256 rounding units of a cosine of order 1 (sums of K^2 = 3600 products); measured <= 4e-16


def _literal_targets(record):
    """B, Phi^T B^T, Phi^T B^T B and Q of the story corpus under the saved BPE, by the literal definitions of
    emergence.numerics.leading_terms.basis_reference (the T^3 softmax-Jacobian construction), top 60 + <unk>."""
    from emergence.numerics.corpus.documents import load_corpus
    from emergence.numerics.leading_terms.basis_reference import literal_basis_statistics

    corpus = load_corpus("synthetic", tokenizer_name=record["tokenizer"], vocab_size=record["top_k"],
                         context_length=record["T"], windows="all", oov="unk", seed=0)
    reference = literal_basis_statistics(corpus.sequences, corpus.vocabulary.size)
    keep = record["top_k"]
    value = reference["Phi"].T @ reference["B"].T
    cut = (slice(0, keep), slice(0, keep))
    return {"bigram": reference["B"][cut], "value": value[cut], "value_output": (value @ reference["B"])[cut],
            "key_query": reference["Q"][cut]}


def _literal_cosines(model, tokens_raw, tokenizer_path, targets):
    """The checkpoint's cosines as the docs define them, recomputed here with the product order
    ((E W_Q) W_K^T) E^T and the whole embedding converted before the rows are picked."""
    from emergence.numerics.corpus.subword import load_tokenizer_file

    backend = load_tokenizer_file(tokenizer_path).backend
    ids = [backend.token_to_id(token) for token in tokens_raw]
    as_numpy = lambda tensor: tensor.detach().double().numpy()  # noqa: E731
    embedding = as_numpy(model.get_input_embeddings().weight)[ids]
    final = model.transformer.ln_f if model.config.model_type == "gpt2" else model.gpt_neox.final_layer_norm
    unembedding = (as_numpy(model.get_output_embeddings().weight)[ids] * as_numpy(final.weight)).T
    blocks = model.transformer.h if model.config.model_type == "gpt2" else model.gpt_neox.layers
    layers = []
    for heads, block in zip(attention_heads(model), blocks):
        norm = block.ln_1 if model.config.model_type == "gpt2" else block.input_layernorm
        inputs = embedding * as_numpy(norm.weight)
        maps = [((inputs @ q) @ k.T) @ inputs.T for q, k in zip(heads.query, heads.key)]
        value = inputs @ sum(v @ o for v, o in zip(heads.value, heads.output)) @ unembedding
        layers.append({"value": _cosine(value, targets["value"]), "value_output": _cosine(value, targets["value_output"]),
                       "key_query": _cosine(sum(maps), targets["key_query"]),
                       "heads": [{"key_query": _cosine(m, targets["key_query"])} for m in maps]})
    return {"direct": _cosine(embedding @ unembedding, targets["bigram"]), "layers": layers}


def _cosine(a, b):
    return float(np.vdot(a, b) / np.sqrt(np.vdot(a, a) * np.vdot(b, b)))


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
    err = capsys.readouterr().err
    assert "no such folder" in err and "x'" in err
    (tmp_path / "x").mkdir()
    assert main(["checkpoints", str(tmp_path / "x"), "--corpus", "synthetic"]) == 2
    assert "not a saved model folder" in capsys.readouterr().err


def test_stats_file_reproduces_the_corpus_run_and_counts_k_as_basis_does(three_checkpoints, tmp_path, capsys):
    """basis --vocab 50 writes V = 51 (50 tokens plus <unk>); checkpoints --top-k 50 uses the same 50 tokens, and
    --stats with that file reproduces the corpus run's cosines to 1e-12 (both compute the same sums)."""
    family, paths = three_checkpoints
    tokenizer = paths[0].parent / "tokenizer.json"
    out = tmp_path / "basis.npz"
    assert main(["basis", "synthetic", "--tokenizer", str(tokenizer), "--vocab", "50", "--T", "32", "--out", str(out)]) == 0
    with np.load(out) as data:
        assert data["B"].shape == (51, 51) and str(data["vocab_raw"][-1]) == "<unk>"
        raw = [str(t) for t in data["vocab_raw"][:50]]
    capsys.readouterr()
    common = ["checkpoints", *map(str, paths), "--T", "32", "--json", "-"]
    assert main(common + ["--corpus", "synthetic", "--top-k", "50"]) == 0
    computed = json.loads(capsys.readouterr().out)
    assert main(common + ["--stats", str(out)]) == 0
    reused = json.loads(capsys.readouterr().out)
    assert computed["top_k"] == reused["top_k"] == 50 and computed["tokens_raw"] == reused["tokens_raw"] == raw
    for a, b in zip(computed["checkpoints"], reused["checkpoints"], strict=True):
        assert abs(a["direct"]["weight"]["value"] - b["direct"]["weight"]["value"]) <= 1e-12
        assert abs(a["direct"]["gram"]["value"] - b["direct"]["gram"]["value"]) <= 1e-12
        for la, lb in zip(a["layers"], b["layers"], strict=True):
            assert max(abs(x - y) for x, y in zip(_weight_cosines(la), _weight_cosines(lb), strict=True)) <= 1e-12
            assert abs(la["key_query"]["gram"]["value"] - lb["key_query"]["gram"]["value"]) <= 1e-12
            assert lb["hidden_bigram"]["gram"] == {"passes": False, "reason": NO_FORWARD}  # no corpus: fails, says why
    assert main(common + ["--stats", str(out), "--top-k", "50"]) == 0  # the file's own K is accepted
    assert json.loads(capsys.readouterr().out)["checkpoints"] == reused["checkpoints"]
    assert main(common + ["--stats", str(out), "--top-k", "20"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "--top-k 20" in error and "(50)" in error and "Traceback" not in error


def test_a_checkpoint_that_will_not_fit_is_refused_before_loading(three_checkpoints, capsys, monkeypatch):
    """The memory estimate comes from config.json and the weight files; over the budget the command ends in one
    line (exit 2) before any statistics are computed, and compare_checkpoints refuses before it loads a model."""
    from emergence.base.errors import InvalidSizeError
    from emergence.validation.leading_terms import checkpoints as module
    from emergence.validation.leading_terms.checkpoint_comparison import (
        CheckpointScorer,
        ComparisonSettings,
        compare_checkpoints,
    )

    family, paths = three_checkpoints
    weights = sum(f.stat().st_size for f in paths[0].iterdir() if f.suffix == ".safetensors")
    estimate = module.checkpoint_bytes(paths[0], 60)
    assert weights < estimate < weights + 8 * ((3 + LAYERS) * 60 * WIDTH + 8 * WIDTH**2 + 10 * 60**2) + 1
    monkeypatch.setenv("EMERGENCE_MEMORY_BUDGET", "100K")
    monkeypatch.setattr(module, "load_checkpoint", lambda path: pytest.fail("loaded despite the estimate"))
    assert main(["checkpoints", *map(str, paths), "--corpus", "synthetic", "--top-k", "60"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs an estimated" in err[0] and "budget of 100 KiB" in err[0]
    out = paths[0].parent / "refused.npz"
    assert main(["basis", "synthetic", "--tokenizer", str(paths[0].parent / "tokenizer.json"), "--vocab", "60",
                 "--T", "32", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["checkpoints", *map(str, paths), "--stats", str(out)]) == 2
    assert "needs an estimated" in capsys.readouterr().err
    scorer = CheckpointScorer(list(range(60)), {}, None, ComparisonSettings(), budget=estimate - 1)
    with pytest.raises(InvalidSizeError, match="checkpoint .*step0.* needs an estimated"):
        compare_checkpoints(paths, scorer, "inputs")


TRAINING_STEPS = 100
"""After 40 steps GPT-2's layer-0 hidden-state excess (0.119 against 3 x noise = 0.102) failed under another CPU's
kernels (MKL_ENABLE_INSTRUCTIONS=SSE4_2, ATEN_CPU_CAPABILITY=default: 0.096); after 100 it is 0.61 +- 0.024 under both."""


@pytest.fixture(scope="module", params=["gpt_neox", "gpt2"])
def text_models(request, bigram_text, tmp_path_factory):
    """A model trained 100 Adam steps on ``bigram_text`` (the TinyStories sample, or the generated stories where
    it is absent; batches of 64 windows of T + 1 BPE ids), and a unigram-only control trained the same way on
    windows of tokens drawn independently from the text's unigram frequencies (all it can learn is frequency),
    with the BPE and the text beside them."""
    import os

    from emergence.numerics.corpus.documents import corpus_documents as documents
    from emergence.numerics.corpus.token_ids import id_corpus

    os.environ["HF_HUB_OFFLINE"] = "1"
    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp(f"text_{request.param}")
    stories = documents(bigram_text)
    bpe = train_bpe(stories, vocab_size=300)
    bpe.save(folder / "tokenizer.json")
    windows = np.asarray(id_corpus(stories, bpe, 60, T, folder / "ids.int32").ids, dtype=np.int64)
    vocab = bpe.backend.get_vocab_size()
    frequency = np.bincount(windows.ravel(), minlength=vocab) / windows.size
    rng = np.random.default_rng(0)
    for name in ("trained", "unigram"):
        model = _model(request.param, vocab)
        optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
        for _ in range(TRAINING_STEPS):
            batch = windows[rng.choice(len(windows), 64, replace=False)]
            if name == "unigram":
                batch = rng.choice(vocab, size=batch.shape, p=frequency)
            batch = torch.as_tensor(batch)
            loss = model(batch, labels=batch).loss
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        model.save_pretrained(folder / name)
    return request.param, folder / "trained", folder / "unigram", bigram_text


SCORE_KEYS = {"value", "baselines", "strongest_baseline", "excess", "noise", "rank_above_k0",
              "top_component_removed", "passes", "reason"}


def _scores(checkpoint):
    """Every (where, name, metric, score) of a checkpoint's JSON."""
    yield from (("direct", "direct", metric, score) for metric, score in checkpoint["direct"].items())
    for layer in checkpoint["layers"]:
        for name in ("hidden_bigram", "hidden_value", "key_query", "value", "value_output"):
            yield from ((layer["layer"], name, metric, score) for metric, score in layer[name].items())
        for head in layer["heads"]:
            for name in ("key_query", "value", "value_output"):
                yield from (((layer["layer"], head["head"]), name, metric, score) for metric, score in head[name].items())


def test_gram_and_weight_metrics_with_baselines_fail_a_unigram_only_model(text_models, capsys):
    """emergence checkpoints ... --json - reports per layer and head the Gram metric and the weight metric, each
    with its baselines, variants, noise and excess; the unigram-only control passes nowhere; the trained
    model's layer-0 hidden-state excess is reported with its noise and passes (measured: GPT-2 0.26 +- 0.03,
    GPT-NeoX 0.66 +- 0.03, with the top component removed 0.22 +- 0.02 and 0.64 +- 0.02)."""
    family, trained, unigram, text = text_models
    assert main(["checkpoints", str(trained), str(unigram), "--corpus", str(text), "--top-k", "60", "--T", str(T),
                 "--json", "-"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["top_k"] == 60 and record["settings"]["forward_windows"] == 256
    trained_record, control = record["checkpoints"]
    for checkpoint in (trained_record, control):
        assert len(checkpoint["layers"]) == LAYERS and all(len(layer["heads"]) == HEADS for layer in checkpoint["layers"])
        scores = list(_scores(checkpoint))
        assert {(name, metric) for _, name, metric, _ in scores} == {
            (n, m) for n, ms in (("direct", "gw"), ("hidden_bigram", "g"), ("hidden_value", "g"), ("key_query", "gw"),
                                 ("value", "gw"), ("value_output", "w")) for m in [{"g": "gram", "w": "weight"}[c] for c in ms]}
        for where, name, metric, score in scores:
            assert set(score) == SCORE_KEYS, (where, name, metric)
            assert set(score["baselines"]) == {"frequency", "random_init"}
            assert all(np.isfinite(v) for v in (score["value"], score["excess"], score["noise"], *score["baselines"].values()))
        for layer in checkpoint["layers"]:  # Delta against the learned positions: GPT-2 only, NeoX says why not
            positional = layer["positional"]["weight"]
            if family == "gpt2":
                assert {"value", "excess", "noise"} <= set(positional) and set(positional["baselines"]) == {"random_init"}
            else:
                assert positional == {"passes": False, "reason": position_reason(_model(family, 40), T)}
    assert not any(score["passes"] for *_, score in _scores(control)), family
    assert not any(layer["positional"]["weight"]["passes"] for layer in control["layers"])
    layer0 = trained_record["layers"][0]["hidden_bigram"]["gram"]
    assert layer0["noise"] > 0 and layer0["passes"], layer0
    assert layer0["top_component_removed"]["excess"] > 3 * layer0["top_component_removed"]["noise"]


def test_corpus_tokenized_once_gives_the_windows_and_vocabulary_of_load_corpus(story_tokenizer):
    """id_corpus (one streamed encode, in batches of 7 documents, into a memory-mapped id file) equals
    load_corpus's vocabulary and windows; its ids are the tokenizer's encoding of each window."""
    from emergence.numerics.corpus.documents import load_corpus
    from emergence.numerics.corpus.token_ids import id_corpus

    folder, bpe = story_tokenizer
    path = folder / "ids_tokenizer.json"
    bpe.save(path)
    once = id_corpus(iter(corpus_documents("synthetic", seed=0)), bpe, 60, 16, folder / "ids.int32", batch_documents=7)
    reference = load_corpus("synthetic", tokenizer_name=str(path), vocab_size=60, context_length=16, oov="unk")
    assert once.vocabulary.tokens == reference.vocabulary.tokens
    assert np.array_equal(once.sequences, reference.sequences)
    first = bpe.backend.encode(corpus_documents("synthetic", seed=0)[0], add_special_tokens=False).ids[:17]
    assert once.ids[0].tolist() == first and isinstance(once.ids, np.memmap) and once.ids.dtype == np.int32
    assert [bpe.backend.id_to_token(i) for i in once.token_ids] == list(reference.vocabulary.tokens[:-1])


def test_a_rerun_over_the_same_folder_resumes_without_loading_a_checkpoint(three_checkpoints, tmp_path, capsys,
                                                                            monkeypatch):
    """--out DIR keeps each scored checkpoint; the same command again reads them back (nothing is loaded, no
    random model is built) and prints the same JSON; a changed input (T) scores them again."""
    from emergence.validation.leading_terms import checkpoints as module

    family, paths = three_checkpoints
    argv = ["checkpoints", *map(str, paths[:2]), "--corpus", "synthetic", "--top-k", "40", "--T", "16",
            "--out", str(tmp_path / "scores"), "--json", "-"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert len(list((tmp_path / "scores").glob("*.json"))) == 2
    monkeypatch.setattr(module, "load_checkpoint", lambda path: pytest.fail("loaded a finished checkpoint"))
    monkeypatch.setattr(module, "random_model", lambda path, seed: pytest.fail("built a random model again"))
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["checkpoints"] == first["checkpoints"]
    assert again["settings"]["inputs"] == first["settings"]["inputs"]
    with pytest.raises(BaseException, match="loaded a finished checkpoint|built a random model again"):
        main([*argv[:-6], "--T", "8", *argv[-4:]])


def test_the_id_file_keeps_the_windows_the_forward_pass_reads(three_checkpoints, tmp_path, capsys):
    """--ids FILE holds the corpus's windows of T + 1 tokenizer ids (int32), the same as encoding the corpus."""
    family, paths = three_checkpoints
    ids = tmp_path / "ids.int32"
    assert main(["checkpoints", str(paths[0]), "--corpus", "synthetic", "--top-k", "30", "--T", "16",
                 "--ids", str(ids), "--json", "-"]) == 0
    record = json.loads(capsys.readouterr().out)
    stored = np.fromfile(ids, dtype=np.int32).reshape(-1, 17)
    assert len(stored) == record["N"] == record["settings"]["windows_available"]
    backend = transformers.PreTrainedTokenizerFast(tokenizer_file=str(paths[0].parent / "tokenizer.json"))
    first = backend(corpus_documents("synthetic", seed=0)[0], add_special_tokens=False)["input_ids"][:17]
    assert stored[0].tolist() == first


def test_a_rank_cut_that_leaves_too_few_tokens_is_one_line(three_checkpoints, capsys):
    family, paths = three_checkpoints
    assert main(["checkpoints", str(paths[0]), "--corpus", "synthetic", "--top-k", "10", "--k0", "8"]) == 2
    assert "--k0 must leave at least 3 of the K=10 tokens" in capsys.readouterr().err
