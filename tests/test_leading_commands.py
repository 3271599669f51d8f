"""The basis, associate, predict-weights and validate leading-terms commands, and their errors."""

import json

import numpy as np
import pytest

from emergence.cli import main
from emergence.numerics.leading_terms.basis_statistics import basis_statistics
from emergence.numerics.corpus.stories import PLANTED_ASSOCIATIONS



def _one_error_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("emergence: error: ")
    return err[0]


@pytest.fixture(scope="module")
def small_text(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "text.txt"
    path.write_text("the cat sat on the mat . the dog sat on the log .\n\n" * 3 + "a cat and a dog .\n", encoding="utf-8")
    return path


def test_basis_writes_the_named_arrays(small_text, tmp_path, capsys):
    out = tmp_path / "basis.npz"
    assert main(["basis", str(small_text), "--T", "4", "--windows", "all", "--oov", "unk", "--out", str(out)]) == 0
    with np.load(out) as data:
        assert {"B", "Sigma", "Phi", "G", "Q", "Delta", "vocab", "T", "N", "provenance"} <= set(data.files)
        assert int(data["T"]) == 4 and data["Delta"].shape == (4,)
        V = len(data["vocab"])
        assert data["B"].shape == data["Q"].shape == (V, V)
        assert np.allclose(data["Sigma"], data["B"].T @ data["B"])
        assert np.allclose(data["G"], data["Sigma"] @ data["Phi"])
        assert json.loads(str(data["provenance"]))["config"]["T"] == 4
        assert data["vocab"][0] == "the"


def test_associate_json_recovers_planted_associations(capsys):
    assert main(["associate", "synthetic", "--query", "red", "fish", "Happy", "--top", "3", "--json", "-"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["red"]["bigram"]) == set(PLANTED_ASSOCIATIONS["bigram"]["red"])
    assert result["fish"]["context"][0] == "pond"
    assert result["Happy"]["token"] == "happy"
    assert set(result["Happy"]["interchangeability"]) <= set(PLANTED_ASSOCIATIONS["interchangeable"]["feelings"])


def test_associate_on_tinystories_gives_the_papers_kind_of_neighbours(tinystories, capsys):
    argv = ["associate", str(tinystories), "--query", "red", "fish", "happy", "--vocab", "2000", "--T", "16",
            "--top", "10", "--json", "-"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert "balloon" in result["red"]["bigram"][:3]
    assert {"sad", "excited"} <= set(result["happy"]["interchangeability"])
    assert "catch" in result["fish"]["context"]
    assert main(argv[:-2]) == 0
    table = capsys.readouterr().out
    assert "interchangeability" in table and "balloon" in table


def test_predict_weights_scales_the_statistics(tmp_path, capsys):
    basis, prediction = tmp_path / "b.npz", tmp_path / "p.npz"
    common = ["synthetic", "--T", "64", "--seed", "2"]
    assert main(["basis", *common, "--out", str(basis)]) == 0
    assert main(["predict-weights", *common, "--steps", "4", "--lr", "0.01", "--layers", "2", "--out", str(prediction)]) == 0
    assert "OUTSIDE the theorem's window (not V_at_least_500)" in capsys.readouterr().out
    with np.load(basis) as b, np.load(prediction) as p:
        assert np.allclose(p["W_O"], 4 * 0.01 * b["B"], rtol=1e-13, atol=0)
        value = (b["B"] @ b["Phi"]).T
        assert p["V_l"].shape == (2,) + value.shape and np.allclose(p["V_l"][1], 6 * 1e-4 * value)
        c4 = 4 * 3 * 2 * 11 / 24 * 1e-8
        assert np.allclose(p["W_l"][0], c4 * b["Q"]) and np.allclose(p["P_l"][1], c4 * b["Delta"])
        assert float(p["bound_W_O"]) == pytest.approx(3 * 16 * 1e-4)
        assert float(p["step_limit"]) == pytest.approx(min(5 / (8 * 8), 1 / 24) / 0.01)
        assert not bool(p["within_window"])


def test_validate_leading_terms_json_and_plot(tmp_path, capsys):
    plot = tmp_path / "cosines.png"
    assert main(["validate", "leading-terms", "--epochs", "3", "--max-sequences", "8", "--T", "16",
                 "--layers", "1", "--device", "cpu", "--json", "-", "--plot", str(plot)]) == 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    result = json.loads(capsys.readouterr().out)
    assert set(result["cosine"]) == {"W_O", "V", "W", "P"}
    assert len(result["within_window"]) == 3 and len(result["cosine"]["V"][0]) == 3
    assert set(result["causal_removal"]) == {"trained", "W_O", "V", "W", "P"}
    assert result["provenance"]["seed"] == 0


def test_associate_json_file_has_provenance_beside_it(tmp_path, capsys):
    out = tmp_path / "assoc.json"
    assert main(["associate", "synthetic", "--query", "bear", "--top", "2", "--json", str(out)]) == 0
    assert set(json.loads(out.read_text())) == {"bear"}
    record = json.loads((tmp_path / "assoc.json.provenance.json").read_text())
    assert record["config"]["query"] == ["bear"] and record["seed"] == 0


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="checks the error on machines without a GPU")
def test_cuda_request_without_gpu_is_a_clear_error(capsys):
    assert main(["validate", "leading-terms", "--device", "cuda", "--epochs", "1"]) == 2
    assert "no GPU" in _one_error_line(capsys)


def test_validate_without_experiment_names_the_experiments(capsys):
    assert main(["validate"]) == 2
    assert "leading-terms, copy-head" in _one_error_line(capsys)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["basis", "{empty}", "--out", "{out}"], "is empty"),
        (["basis", "{binary}", "--out", "{out}"], "not UTF-8"),
        (["basis", "{missing}", "--out", "{out}"], "does not exist"),
        (["basis", "synthetic", "--vocab", "1", "--out", "{out}"], "out of range"),
        (["basis", "synthetic", "--vocab", "100000", "--out", "{out}"], "out of range"),
        (["basis", "synthetic", "--T", "0", "--out", "{out}"], "sequence length"),
        (["basis", "synthetic", "--T", "5000", "--out", "{out}"], "nothing left after filtering"),
        (["associate", "synthetic", "--query", "dragon"], "never occurs in the corpus"),
        (["basis", "synthetic", "--bpe-vocab", "1000", "--out", "{out}"], "add --tokenizer bpe"),
        (["basis", "synthetic", "--stream", "--out", "{out}"], "--stream reads a corpus file"),
        (["basis", "synthetic", "--tokenizer", "sentencepiece", "--out", "{out}"], "unknown tokenizer"),
        (["associate", "synthetic", "--query", "red fish"], "not a single"),
        (["predict-weights", "synthetic", "--steps", "-1", "--lr", "0.1", "--layers", "1", "--out", "{out}"], "steps"),
        (["predict-weights", "synthetic", "--steps", "1", "--lr", "0", "--layers", "1", "--out", "{out}"], "learning rate"),
        (["validate", "leading-terms", "--lr", "-1"], "learning rate"),
        (["validate", "leading-terms", "--lr", "1e70", "--epochs", "3", "--max-sequences", "4", "--T", "8"], "diverged"),
    ],
)
def test_bad_input_ends_in_one_line_and_exit_2(argv, message, tmp_path, capsys):
    (tmp_path / "empty.txt").write_text("\n\n", encoding="utf-8")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00abc")
    paths = {"empty": tmp_path / "empty.txt", "binary": tmp_path / "binary.txt",
             "missing": tmp_path / "missing.txt", "out": tmp_path / "out.npz"}
    assert main([part.format(**paths) for part in argv]) == 2
    assert message in _one_error_line(capsys)
    assert not (tmp_path / "out.npz").exists()


def test_too_large_vocabulary_is_refused_before_allocating(monkeypatch, tmp_path, capsys):
    import emergence.numerics.leading_terms.basis_statistics as module

    monkeypatch.setattr(module, "available_memory_bytes", lambda: 1000)
    assert main(["basis", "synthetic", "--out", str(tmp_path / "b.npz")]) == 2
    assert "smaller --vocab" in _one_error_line(capsys)


def test_statistics_in_the_file_match_a_direct_computation(tmp_path):
    from emergence.numerics.corpus.documents import load_corpus

    out = tmp_path / "b.npz"
    assert main(["basis", "synthetic", "--T", "32", "--seed", "5", "--out", str(out)]) == 0
    corpus = load_corpus("synthetic", context_length=32, seed=5)
    stats = basis_statistics(corpus.sequences, corpus.vocabulary.size)
    with np.load(out) as data:
        # exact by design: the command and this call run one code path on the same windows (one process)
        assert np.array_equal(data["Q"], stats.key_query) and int(data["N"]) == corpus.num_sequences


def test_validate_auto_learning_rate_puts_the_window_edge_halfway_and_plots_it(tmp_path, capsys):
    from emergence.validation.leading_terms.experiment import edge_learning_rate

    plot = tmp_path / "edge.png"
    assert main(["validate", "leading-terms", "--lr", "auto", "--epochs", "8", "--max-sequences", "8", "--T", "16",
                 "--layers", "1", "--device", "cpu", "--json", "-", "--edge-plot", str(plot)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["config"]["lr"] == pytest.approx(edge_learning_rate(8, 16, 1))
    assert result["within_window"] == [True] * 4 + [False] * 4
    assert result["window_edge_s_eta"] == pytest.approx(4 * result["config"]["lr"])
    assert result["loss_inside_window"]["change"] < 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_validate_leading_terms_trains_on_a_bpe_corpus_and_states_truncation(tinystories, capsys):
    """The paper's BPE variant runs (a byte-level BPE of 2000 entries; 1657 occur, plus <unk>); the cosines
    inside the window are >= 0.99; the window count drawn from the corpus is stated, and 'all' takes every one."""
    pytest.importorskip("tokenizers")
    argv = ["validate", "leading-terms", "--corpus", str(tinystories), "--tokenizer", "bpe", "--vocab", "2000",
            "--T", "16", "--epochs", "4", "--layers", "1"]
    assert main(argv + ["--max-sequences", "12", "--json", "-"]) == 0
    result = json.loads(capsys.readouterr().out)
    corpus = result["corpus"]
    assert corpus["V"] > 1000 and corpus["N"] == 12 and corpus["truncated"] and corpus["windows_available"] > 12
    assert all(result["within_window"])
    assert all(result["min_cosine_within_window"][name] >= 0.99 for name in ("W_O", "V", "W"))
    assert main(argv[:-4] + ["--epochs", "1", "--layers", "1", "--max-sequences", "12"]) == 0
    assert f"N=12 windows drawn at random from {corpus['windows_available']} (--max-sequences 12" in capsys.readouterr().out
    assert main(["validate", "leading-terms", "--T", "16", "--vocab", "20", "--epochs", "1", "--max-sequences", "all",
                 "--json", "-"]) == 0
    every = json.loads(capsys.readouterr().out)["corpus"]
    assert every["N"] == every["windows_available"] and not every["truncated"]
