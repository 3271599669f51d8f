"""Tokenizers, vocabulary, document splitting, windows and the clear errors for bad corpora."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emergence.numerics.leading_terms.basis_statistics import basis_statistics, require_dense_memory
from emergence.numerics.corpus.documents import build_corpus, read_documents, split_documents, token_windows
from emergence.numerics.corpus.tokenizers import natural_tokens, whitespace_tokens
from emergence.numerics.corpus.vocabulary import UNKNOWN_TOKEN, build_vocabulary
from emergence.base.errors import EmergenceError, InvalidSizeError
from emergence.validation.strategies import text_corpora


def test_natural_tokenizer_examples():
    assert natural_tokens("Once upon a time, Lily's cat-dog ran 42 m!\n") == [
        "once", "upon", "a", "time", ",", "lily", "'", "s", "cat", "-", "dog", "ran", "4", "2", "m", "!",
    ]
    assert natural_tokens("Élan  naïve") == ["élan", "naïve"]
    assert natural_tokens("snake_case") == ["snake", "_", "case"]


@given(st.text(max_size=200))
def test_natural_tokens_partition_the_non_whitespace_characters(text):
    tokens = natural_tokens(text)
    assert "".join(tokens) == "".join(ch for ch in text.lower() if not ch.isspace())
    assert all(token and not any(ch.isspace() for ch in token) for token in tokens)
    assert all(len(token) == 1 or token.isalpha() for token in tokens)


@given(st.text(max_size=200))
def test_whitespace_tokens_keep_everything_but_whitespace(text):
    tokens = whitespace_tokens(text)
    assert " ".join(tokens) == " ".join(text.split())
    assert all(token and not any(ch.isspace() for ch in token) for token in tokens)


def test_vocabulary_ranks_by_count_then_first_occurrence():
    documents = [["b", "a", "c", "c"], ["a", "d", "b"]]
    assert build_vocabulary(documents, 3).tokens == ("b", "a", "c")
    assert build_vocabulary(documents, 3, oov="unk").tokens == ("b", "a", "c", UNKNOWN_TOKEN)  # K real tokens + <unk>
    assert build_vocabulary(documents, None).tokens == ("b", "a", "c", "d")


@given(st.lists(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=10), min_size=1, max_size=6))
def test_vocabulary_order_is_the_reference_codes_counter_most_common(documents):
    from collections import Counter

    distinct = len({t for d in documents for t in d})
    if distinct < 2:
        return
    reference = Counter(token for document in documents for token in document).most_common(distinct)
    assert build_vocabulary(documents, distinct).tokens == tuple(token for token, _ in reference)


@pytest.mark.parametrize("size", [0, 1, 5])
def test_vocabulary_size_out_of_range(size):
    with pytest.raises(InvalidSizeError, match="out of range"):
        build_vocabulary([["a", "b", "c"]], size)


def test_split_documents_end_of_text_takes_precedence_over_blank_lines():
    text = "one\ntwo\n\nthree\n \t\nfour<|endoftext|>five\n\n\n"
    assert split_documents(text) == ["one\ntwo\n\nthree\n \t\nfour", "five"]
    assert split_documents(text, "eot") == split_documents(text)
    assert split_documents(text, "blank-line") == ["one\ntwo", "three", "four<|endoftext|>five"]
    assert split_documents(text, "line") == ["one", "two", "three", "four<|endoftext|>five"]
    assert split_documents("one\ntwo\n\nthree") == ["one\ntwo", "three"]
    with pytest.raises(EmergenceError, match="unknown document separator"):
        split_documents(text, "paragraph")


def test_two_stories_with_inner_blank_lines_give_two_first_windows(tmp_path, capsys):
    from emergence.cli import main

    story = "Once upon a time there was a cat.\n\nThe cat sat on a mat and was happy.\n\nThe end of the story."
    path = tmp_path / "stories.txt"
    path.write_text(story + "\n<|endoftext|>\n" + story.replace("cat", "dog") + "\n", encoding="utf-8")
    out = tmp_path / "b.npz"
    assert main(["basis", str(path), "--T", "8", "--windows", "first", "--out", str(out)]) == 0
    assert "N=2 windows (2 of 2 documents)" in capsys.readouterr().out
    assert main(["basis", str(path), "--T", "8", "--windows", "first", "--separator", "blank-line",
                 "--out", str(out)]) == 0
    assert "N=4 windows (4 of 5 documents)" in capsys.readouterr().out


def test_read_documents_errors(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n\n", encoding="utf-8")
    with pytest.raises(EmergenceError, match="empty"):
        read_documents(empty)
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"abc\xff\xfe")
    with pytest.raises(EmergenceError, match="not UTF-8 .* offset 3"):
        read_documents(binary)
    with pytest.raises(EmergenceError, match="does not exist"):
        read_documents(tmp_path / "missing.txt")


def test_windows_first_and_all():
    encoded = list(range(10))
    assert token_windows(encoded, 3, "first") == [[0, 1, 2, 3]]
    assert token_windows(encoded, 3, "all") == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert token_windows(encoded, 10, "first") == []


def test_drop_policy_discards_documents_with_unknown_tokens():
    documents = ["a b a b a b", "a b c a b a", "b a b a b a"]
    corpus = build_corpus(documents, tokenizer_name="whitespace", vocab_size=2, context_length=4,
                          windows="first", oov="drop")
    assert corpus.num_sequences == 2 and corpus.documents_used == 2
    with_unknown = build_corpus(documents, tokenizer_name="whitespace", vocab_size=2, context_length=4,
                                windows="first", oov="unk")
    assert with_unknown.vocabulary.tokens == ("a", "b", UNKNOWN_TOKEN)  # K = 2 real tokens + <unk>
    assert with_unknown.num_sequences == 3
    assert with_unknown.sequences[1].tolist() == [0, 1, 2, 0, 1]


def test_bad_sizes_and_empty_results():
    with pytest.raises(InvalidSizeError, match="sequence length"):
        build_corpus(["a b"], context_length=0, vocab_size=2)
    with pytest.raises(EmergenceError, match="nothing left after filtering"):
        build_corpus(["a b a b"], context_length=50, vocab_size=2)
    with pytest.raises(EmergenceError, match="window mode"):
        build_corpus(["a b a b"], windows="some", vocab_size=2)


def test_dense_memory_is_checked_before_allocating():
    with pytest.raises(InvalidSizeError, match="V=3000 needs about"):
        require_dense_memory(3000, limit_bytes=10**6)
    with pytest.raises(InvalidSizeError, match="smaller --vocab"):
        basis_statistics(np.zeros((1, 3), dtype=int), 10**6)


@settings(max_examples=40)
@given(text_corpora(), st.integers(1, 6), st.sampled_from(["natural", "whitespace"]),
       st.sampled_from(["first", "all"]), st.sampled_from(["drop", "unk"]))
def test_any_text_gives_valid_windows_or_a_clear_error(text, length, name, windows, oov):
    try:
        corpus = build_corpus(split_documents(text), tokenizer_name=name, vocab_size=None,
                              context_length=length, windows=windows, oov=oov)
    except EmergenceError:
        return
    assert corpus.sequences.shape[1] == length + 1
    assert 0 <= corpus.sequences.min() and corpus.sequences.max() < corpus.vocabulary.size


@pytest.mark.parametrize("separator", ["auto", "blank-line"])
def test_streamed_corpus_file_gives_the_in_memory_windows_and_statistics(tmp_path, separator, capsys):
    from emergence.cli import main
    from emergence.numerics.corpus.documents import load_corpus
    from emergence.numerics.corpus.streaming import stream_corpus

    text = "".join(f"Story {i}: the cat sat on the mat.\n\nThe dog ran é{i % 3}.\n<|endoftext|>\n" for i in range(40))
    path = tmp_path / "c.txt"
    path.write_text(text, encoding="utf-8")
    options = dict(vocab_size=12, context_length=5, windows="all", oov="unk", separator=separator)
    in_memory = load_corpus(path, **options)
    streamed = stream_corpus(path, block_bytes=3, chunk_windows=5, **options)  # blocks split characters and markers
    assert streamed.vocabulary == in_memory.vocabulary
    assert (streamed.documents_used, streamed.documents_total) == (in_memory.documents_used, in_memory.documents_total)
    assert np.array_equal(np.concatenate(list(streamed.chunks())), in_memory.sequences)
    outputs = {}
    for flag in ([], ["--stream"]):
        out = tmp_path / f"b{len(flag)}.npz"
        assert main(["basis", str(path), "--vocab", "12", "--T", "5", "--separator", separator, *flag, "--out", str(out)]) == 0
        assert "tokens/s" in capsys.readouterr().out
        outputs[len(flag)] = dict(np.load(out))
    for name in ("B", "Sigma", "Phi", "G", "Q", "Delta"):
        assert np.allclose(outputs[0][name], outputs[1][name], rtol=0, atol=1e-15), name
