"""A query word read as a vocabulary token, or the true cause why it is none.

A vocabulary token stands for a word when its readable form, surrounding spaces ignored, is the
word or a single token of the word (or of `` word``) under the corpus tokenizer (``Happy`` ->
``happy`` under ``natural``; ``red`` -> ``Ġred`` under a byte-level BPE); the most frequent match
wins.  Otherwise the error names the cause: the word is a single token that never occurs in the
corpus, or one that occurs but is not among the K tokens kept (``--vocab``; its count and rank are
given), or it is no single token at all (its pieces are named).
"""

from __future__ import annotations

from emergence.base.errors import EmergenceError
from emergence.numerics.corpus.vocabulary import UNKNOWN_TOKEN


def query_token(corpus, word: str) -> str:
    """The vocabulary token ``word`` stands for in ``corpus`` (a token corpus, or a
    :class:`~emergence.numerics.corpus.documents.CorpusTooShortError`: anything with ``tokenizer`` and
    ``vocabulary``), or :class:`EmergenceError` giving the true cause."""
    tokenizer, text = corpus.tokenizer, word.strip()
    singles = list(dict.fromkeys(parts[0] for parts in map(tokenizer.split, (text, " " + text)) if len(parts) == 1))
    candidates = ({text} | {tokenizer.readable(token).strip() for token in singles}) - {""}
    for token in corpus.vocabulary.tokens:
        if token != UNKNOWN_TOKEN and tokenizer.readable(token).strip() in candidates:
            return token
    raise _missing_query_error(corpus, word, singles)


def _missing_query_error(corpus, word: str, singles: list[str]) -> EmergenceError:
    """Why ``word`` is no vocabulary token: outside the top K, never seen, or not a single token."""
    tokenizer, vocabulary = corpus.tokenizer, corpus.vocabulary
    seen = sorted((token for token in singles if vocabulary.counts.get(token, 0) > 0), key=vocabulary.counts.get,
                  reverse=True)
    if seen:
        token, count = seen[0], vocabulary.counts[seen[0]]
        rank = 1 + sum(other > count for other in vocabulary.counts.values())  # first rank its count can have
        return EmergenceError(f"query {word!r} is the {tokenizer.name} token {tokenizer.readable(token)!r}, seen "
                              f"{count} times (frequency rank {rank} or later): outside the K={vocabulary.kept} most "
                              "frequent tokens kept (--vocab)")
    if singles:
        return EmergenceError(f"query {word!r} is not in the corpus vocabulary (a single {tokenizer.name} token that "
                              "never occurs in the corpus)")
    pieces = ", ".join(repr(tokenizer.readable(token)) for token in tokenizer.split(word.strip()))
    return EmergenceError(f"query {word!r} is not a single {tokenizer.name} token (it splits into {pieces or 'nothing'})")
