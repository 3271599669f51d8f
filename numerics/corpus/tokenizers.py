r"""Tokenizers that turn a document into a list of string tokens.

``natural`` is the leading-term paper's: lowercase the text; every maximal run of letters
is one token; every other character (punctuation, digit, symbol) is its own token;
whitespace characters (space, newline, tab, carriage return) are dropped.
``whitespace`` splits on runs of whitespace and does nothing else.  ``bpe`` (a byte-level
BPE trained on the corpus) and a path to a saved ``tokenizer.json`` are the subword
tokenizers of :mod:`emergence.numerics.corpus.subword` (optional extra ``hf``).
:func:`corpus_tokenizer` resolves any of these names to an object with ``split(text)`` and
``readable(token)`` (the token as a reader should see it; the identity for word tokenizers).
:func:`display_tokens` makes those readable forms unique for a whole vocabulary.

>>> natural_tokens("Lily's 2 red balls!")
['lily', "'", 's', '2', 'red', 'balls', '!']
>>> whitespace_tokens("Lily's 2 red  balls!")
["Lily's", '2', 'red', 'balls!']
>>> corpus_tokenizer("natural", []).split("Red ball")
['red', 'ball']
>>> corpus_tokenizer("sentencepiece", [])
Traceback (most recent call last):
...
emergence.base.errors.EmergenceError: unknown tokenizer 'sentencepiece'; choose natural, whitespace, bpe or a path to a tokenizer.json
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Callable, Sequence

from emergence.base.errors import EmergenceError


def natural_tokens(text: str) -> list[str]:
    """Lowercased letter runs (``str.isalpha``) and single other characters; whitespace dropped."""
    tokens: list[str] = []
    for is_letter, run in groupby(text.lower(), key=str.isalpha):
        if is_letter:
            tokens.append("".join(run))
        else:
            tokens.extend(ch for ch in run if not ch.isspace())
    return tokens


def whitespace_tokens(text: str) -> list[str]:
    """The text split on runs of whitespace, case and punctuation kept."""
    return text.split()


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "natural": natural_tokens,
    "whitespace": whitespace_tokens,
}


@dataclass(frozen=True)
class WordTokenizer:
    """A tokenizer whose tokens are already readable text (``natural``, ``whitespace``)."""

    split: Callable[[str], list[str]]
    name: str

    def readable(self, token: str) -> str:
        return token


REPLACEMENT_CHARACTER = "\ufffd"


def display_tokens(tokenizer, tokens: Sequence[str]) -> tuple[str, ...]:
    """Each token's readable form, unique over ``tokens``: ``readable⟨raw⟩`` where the readable form
    does not identify the token (it occurs twice, or holds U+FFFD, as every byte fragment of a
    multi-byte character decodes to '\ufffd'), else the readable form alone.

    >>> display_tokens(WordTokenizer(str.split, "whitespace"), ["red", "ball"])
    ('red', 'ball')
    """
    readable = [tokenizer.readable(token) for token in tokens]
    repeated = Counter(readable)
    return tuple(text if repeated[text] == 1 and REPLACEMENT_CHARACTER not in text else f"{text}\u27e8{token}\u27e9"
                 for text, token in zip(readable, tokens))


def corpus_tokenizer(name: str, documents: Sequence[str], vocab_size: int | None = None):
    """The tokenizer ``name`` names; ``bpe`` is trained on ``documents`` with ``vocab_size`` entries.

    :class:`EmergenceError` for an unknown name (a path that is not a file counts as unknown
    unless it ends in ``.json``, which then reports the missing file).
    """
    if name in TOKENIZERS:
        return WordTokenizer(TOKENIZERS[name], name)
    if name == "bpe" or name.endswith(".json") or Path(name).is_file():
        from emergence.numerics.corpus import subword
        from emergence.numerics.corpus.vocabulary import DEFAULT_VOCABULARY_SIZE

        if name == "bpe":
            return subword.train_bpe(documents, vocab_size or DEFAULT_VOCABULARY_SIZE)
        return subword.load_tokenizer_file(name)
    raise EmergenceError(
        f"unknown tokenizer {name!r}; choose {', '.join(TOKENIZERS)}, bpe or a path to a tokenizer.json"
    )
