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
theory.errors.EmergenceError: unknown tokenizer 'bpe'; choose natural or whitespace
"""

from __future__ import annotations

import re
from typing import Callable

from theory.errors import EmergenceError

_LETTER_RUN_OR_OTHER = re.compile(r"[^\W\d_]+|\S", re.UNICODE)
"""A maximal run of letters (word characters that are neither digits nor '_'), or any one
non-whitespace character."""


def natural_tokens(text: str) -> list[str]:
    """Lowercased letter runs and single non-letter characters; whitespace is dropped."""
    return _LETTER_RUN_OR_OTHER.findall(text.lower())


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
