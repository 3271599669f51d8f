r"""Tokenizers that turn a document into a list of string tokens.

``natural`` is the leading-term paper's: lowercase the text; every maximal run of letters
is one token; every other character (punctuation, digit, symbol) is its own token;
whitespace characters (space, newline, tab, carriage return) are dropped.
``whitespace`` splits on runs of whitespace and does nothing else.

>>> natural_tokens("Lily's 2 red balls!")
['lily', "'", 's', '2', 'red', 'balls', '!']
>>> whitespace_tokens("Lily's 2 red  balls!")
["Lily's", '2', 'red', 'balls!']
>>> tokenizer("bpe")
Traceback (most recent call last):
...
emergence.theory.errors.EmergenceError: unknown tokenizer 'bpe'; choose natural or whitespace
"""

from __future__ import annotations

from itertools import groupby
from typing import Callable

from emergence.theory.errors import EmergenceError


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


def tokenizer(name: str) -> Callable[[str], list[str]]:
    """The tokenizer called ``name``; :class:`EmergenceError` for an unknown name."""
    try:
        return TOKENIZERS[name]
    except KeyError:
        raise EmergenceError(
            f"unknown tokenizer {name!r}; choose {' or '.join(TOKENIZERS)}"
        ) from None
