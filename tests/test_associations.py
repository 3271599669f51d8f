"""associate: scores, per-query errors, no padding, the query in its own list, PMI normalisation, BPE tokens."""

import json
from pathlib import Path

import numpy as np
import pytest

from emergence.cli import main
from emergence.numerics.leading_terms.associations import (
    input_frequency,
    interchangeability_row,
    joint_bigram,
    positive_pmi,
    top_association_scores,
)
from emergence.numerics.leading_terms.basis_statistics import basis_statistics

CORPORA = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpora"
NOVELS = CORPORA / "novels_excerpts.txt"
TINYSTORIES = CORPORA / "tinystories_sample.txt"
PUNCTUATION = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~“”‘’—–…")


def _sequences(seed=0, vocab=7, n=5, length=13):
    rng = np.random.default_rng(seed)
    return rng.integers(0, vocab, size=(n, length)), vocab


def test_joint_bigram_and_pmi_match_brute_force_counts():
    sequences, V = _sequences()
    stats = basis_statistics(sequences, V)
    x, y = sequences[:, :-1].ravel(), sequences[:, 1:].ravel()
    counts = np.zeros((V, V))
    np.add.at(counts, (x, y), 1.0)
    joint = counts / x.size
    frequency = input_frequency(sequences[:, :-1], V)
    assert np.allclose(joint_bigram(stats.bigram, frequency), joint, atol=1e-15)
    expected = np.zeros((V, V))
    for j in range(V):
        for k in range(V):
            if counts[j, k]:
                expected[j, k] = max(0.0, np.log(joint[j, k] / (joint[j].sum() * joint[:, k].sum())))
    assert np.allclose(positive_pmi(stats.bigram, frequency, x.size), expected, atol=1e-12)
    cosine = expected.T @ expected / np.outer(np.linalg.norm(expected, axis=0), np.linalg.norm(expected, axis=0))
    assert np.allclose(interchangeability_row(stats, 2, "pmi", frequency), cosine[2], atol=1e-12)
    assert np.allclose(interchangeability_row(stats, 2, "none"), (stats.bigram.T @ stats.bigram)[2], atol=1e-15)


def test_only_tokens_seen_in_the_relation_are_listed():
    # token 3 only ever follows token 0; token 5 never appears as a target
    sequences = np.array([[0, 3, 1, 2, 1, 2, 4], [5, 1, 2, 1, 0, 3, 1]])
    stats = basis_statistics(sequences, 6)
    tokens = tuple("abcdef")
    scores = top_association_scores(stats, tokens, "a", 6)
    assert [t for t, _ in scores["bigram"]] == ["d"]
    assert all(score > 0 for _, score in scores["bigram"] + scores["context"])
    assert "f" not in {t for t, _ in scores["interchangeability"]}
    normalised = top_association_scores(stats, tokens, "b", 6, "cosine")
    assert normalised["interchangeability"][0] == ("b", pytest.approx(1.0))


def test_unknown_query_is_reported_and_the_others_print(capsys):
    assert main(["associate", "synthetic", "--query", "dragon", "red", "--top", "3", "--json", "-"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert "not in the vocabulary" in result["dragon"]["error"]
    assert len(result["red"]["bigram"]) == len(result["red"]["scores"]["bigram"]) == 3
    assert result["red"]["scores"]["bigram"] == sorted(result["red"]["scores"]["bigram"], reverse=True)
    assert result["red"]["interchangeability"][0] == "red" or "red" in result["red"]["interchangeability"]
    assert main(["associate", "synthetic", "--query", "dragon", "red", "--top", "3"]) == 0
    table = capsys.readouterr().out
    assert "dragon: query 'dragon' is not in the vocabulary" in table and "red" in table and "(" in table


@pytest.mark.skipif(not NOVELS.exists(), reason="shared corpora not present beside the repository")
def test_pmi_keeps_punctuation_out_of_interchangeability_on_novels(capsys):
    argv = ["associate", str(NOVELS), "--query", "he", "she", "said", "--top", "5", "--json", "-"]
    assert main(argv) == 0
    raw = json.loads(capsys.readouterr().out)
    assert main(argv + ["--normalize", "pmi"]) == 0
    pmi = json.loads(capsys.readouterr().out)
    # the raw Gram matrix is dominated by punctuation; PMI is not
    assert PUNCTUATION & set(raw["he"]["interchangeability"])
    for query in ("he", "she", "said"):
        assert not PUNCTUATION & set(pmi[query]["interchangeability"]), pmi[query]
        assert pmi[query]["interchangeability"][0] == query
    assert "she" in pmi["he"]["interchangeability"] and "he" in pmi["she"]["interchangeability"]


def test_bpe_splits_and_reads_back_byte_level_tokens():
    pytest.importorskip("tokenizers")
    from emergence.numerics.corpus.subword import train_bpe

    bpe = train_bpe(["the red ball", "the red car"] * 20, vocab_size=270)
    assert bpe.split("the red car") == ["the", "Ġred", "Ġcar"]
    assert [bpe.readable(t) for t in bpe.split("the red car")] == ["the", " red", " car"]


@pytest.mark.skipif(not TINYSTORIES.exists(), reason="shared corpora not present beside the repository")
def test_bpe_basis_and_associate_show_readable_tokens(tmp_path, capsys, monkeypatch):
    pytest.importorskip("tokenizers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "x.npz"
    common = [str(TINYSTORIES), "--tokenizer", "bpe", "--vocab", "2000", "--T", "64"]
    assert main(["basis", *common, "--save-tokenizer", str(tmp_path / "tokenizer.json"), "--out", str(out)]) == 0
    from emergence.numerics.corpus.subword import load_tokenizer_file

    assert load_tokenizer_file(tmp_path).split(" the red ball") == ["Ġthe", "Ġred", "Ġball"]
    with np.load(out) as data:
        assert " the" in set(data["vocab"]) and "Ġthe" in set(data["vocab_raw"])
        assert not any("Ġ" in token for token in data["vocab"])
    capsys.readouterr()
    assert main(["associate", *common, "--query", "happy", "red", "--normalize", "pmi", "--json", "-"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["happy"]["token"] == " happy"
    assert " sad" in result["happy"]["interchangeability"]
    assert not any("Ġ" in t for kind in ("bigram", "interchangeability", "context") for t in result["red"][kind])
