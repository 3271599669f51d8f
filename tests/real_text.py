"""Real English text for the tests that need it, looked up in one place.

A test never names a path to a corpus.  It asks for a fixture of ``tests/conftest.py``:

* ``tinystories`` or ``novels``: the real text, or a skip that says where to put it;
* ``bigram_text``: the TinyStories sample where present, otherwise a text generated here with the
  structure the test needs (the engine's seeded story corpus: words that follow words, so a
  unigram-only model must still fail against it).

Where the text is looked up, first hit wins:

1. the folder named by the environment variable ``EMERGENCE_CORPORA``;
2. ``../shared/corpora`` beside the repository (the development machines' layout).

What the files are, and where an equivalent comes from:

* ``tinystories_sample.txt``: the first 254 stories of the TinyStories training split (Eldan and Li,
  arXiv 2305.07759; the corpus of the leading-term paper), stories separated by blank lines;
* ``novels_excerpts.txt``: excerpts of public-domain 19th-century novels (The Wonderful Wizard of Oz
  and others, from Project Gutenberg), concatenated.

Tests marked ``real_text`` (every test that uses one of these fixtures; ``.ci/run`` runs them once
more from a clone with no corpus folder anywhere) must pass or skip there, never error.
"""

from __future__ import annotations

import os
from pathlib import Path

CORPORA_VARIABLE = "EMERGENCE_CORPORA"
TINYSTORIES = "tinystories_sample.txt"
NOVELS = "novels_excerpts.txt"
REPOSITORY = Path(__file__).resolve().parents[1]
GENERATED_STORIES = 254
"""As many generated stories as the TinyStories sample holds, so the fallback has about its size."""


def corpus_folders() -> list[Path]:
    """The folders searched for real text, in order (the environment variable first, when set)."""
    folders = [Path(os.environ[CORPORA_VARIABLE])] if os.environ.get(CORPORA_VARIABLE) else []
    return folders + [REPOSITORY.parent / "shared" / "corpora"]


def real_text(name: str) -> Path | None:
    """The first readable file ``name`` in :func:`corpus_folders`, or None where there is none."""
    for folder in corpus_folders():
        path = folder / name
        if path.is_file() and os.access(path, os.R_OK):
            return path
    return None


def missing_reason(name: str) -> str:
    """Why a test that needs ``name`` skips, and how to give it the text."""
    searched = ", ".join(str(folder) for folder in corpus_folders())
    return (f"real English text {name} not found (searched {searched}); set {CORPORA_VARIABLE} to a folder "
            f"holding it (see tests/real_text.py for what it is and where to get it)")


def generated_stories(folder: Path) -> Path:
    """The engine's seeded story corpus (seed 0), written as a text file of blank-line-separated stories."""
    from emergence.numerics.corpus.stories import story_corpus

    path = folder / "generated_stories.txt"
    path.write_text(story_corpus(GENERATED_STORIES, seed=0), encoding="utf-8")
    return path
