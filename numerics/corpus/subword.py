r"""Byte-level BPE tokenizers through Hugging Face ``tokenizers`` (optional extra ``hf``).

``--tokenizer bpe`` trains a byte-level BPE on the corpus itself (GPT-2's scheme: text is
read as UTF-8 bytes, each byte shown as one printable character, e.g. a space as ``Ġ``;
merges are learnt greedily by pair frequency until the vocabulary has ``vocab_size``
entries; ``<|endoftext|>`` is a special token).  ``--tokenizer PATH`` loads a saved
``tokenizer.json`` (for example a local GPT-2 or Pythia one).  Both run offline.

Tokens are kept in the tokenizer's own spelling (``Ġred``), which is unique; every output
shows the :meth:`SubwordTokenizer.readable` form instead, the token's bytes decoded back to
text (``" red"``).

For example (tests/test_associations.py runs this; it needs the extra, so it is no doctest)::

    bpe = train_bpe(["the red ball", "the red car"] * 20, vocab_size=270)
    bpe.split("the red car")                                # ['the', 'Ġred', 'Ġcar']
    [bpe.readable(t) for t in bpe.split("the red car")]     # ['the', ' red', ' car']
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from emergence.base.errors import EmergenceError

END_OF_TEXT = "<|endoftext|>"
MIN_BPE_VOCABULARY = 260
HF_EXTRA_HINT = "install the optional extra: pip install 'emergence[hf]'"


def _tokenizers_library():
    try:
        import tokenizers
    except ImportError:
        raise EmergenceError(f"BPE tokenizers need the Hugging Face 'tokenizers' package; {HF_EXTRA_HINT}") from None
    return tokenizers


@dataclass(frozen=True)
class SubwordTokenizer:
    """A Hugging Face ``tokenizers.Tokenizer`` seen as text -> token strings, and back to text."""

    backend: Any
    name: str

    def split(self, text: str) -> list[str]:
        """The tokenizer's token strings of ``text`` (no special tokens added)."""
        return self.backend.encode(text, add_special_tokens=False).tokens

    def readable(self, token: str) -> str:
        """``token`` decoded back to text (byte-level ``Ġ`` becomes a space, etc.)."""
        decoder = self.backend.decoder
        return decoder.decode([token]) if decoder is not None else token

    def save(self, path: str | Path) -> None:
        """Write ``tokenizer.json`` to ``path``."""
        self.backend.save(str(path))


def train_bpe(documents: Iterable[str], vocab_size: int) -> SubwordTokenizer:
    """A byte-level BPE of (at least :data:`MIN_BPE_VOCABULARY`) ``vocab_size`` entries trained on ``documents``.

    ``documents`` may be a stream (a generator): the trainer reads it once.
    """
    tokenizers = _tokenizers_library()
    from tokenizers import decoders, models, pre_tokenizers, trainers

    backend = tokenizers.Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=max(int(vocab_size), MIN_BPE_VOCABULARY),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[END_OF_TEXT],
        show_progress=False,
    )
    backend.train_from_iterator(documents, trainer=trainer)
    return SubwordTokenizer(backend, "bpe")


def load_tokenizer_file(path: str | Path) -> SubwordTokenizer:
    """The tokenizer saved in ``path`` (a ``tokenizer.json``, or a folder holding one)."""
    tokenizers = _tokenizers_library()
    path = Path(path)
    if path.is_dir():
        path = path / "tokenizer.json"
    if not path.is_file():
        raise EmergenceError(f"tokenizer file {str(path)!r} does not exist")
    try:
        backend = tokenizers.Tokenizer.from_file(str(path))
    except Exception as error:  # the Rust library raises its own exception types
        raise EmergenceError(f"cannot read tokenizer {str(path)!r}: {error}") from None
    return SubwordTokenizer(backend, str(path))
