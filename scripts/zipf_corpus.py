"""Write a large synthetic corpus for the large-vocabulary basis check (docs/leading_terms.md).

Stories of 400 pseudo-words drawn from a Zipf law over a fixed lexicon, separated by
``<|endoftext|>``; seeded, so the same arguments give the same file.

    python scripts/zipf_corpus.py OUT.txt [--megabytes 21] [--lexicon 120000] [--exponent 1.05] [--seed 0]
"""

import argparse

import numpy as np


def pseudo_words(count: int, rng: np.random.Generator) -> list[str]:
    """``count`` distinct lowercase pseudo-words of 2 to 9 letters."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words: dict[str, None] = {}
    while len(words) < count:
        length = int(rng.integers(2, 10))
        words.setdefault("".join(rng.choice(letters, size=length)), None)
    return list(words)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--megabytes", type=float, default=21.0)
    parser.add_argument("--lexicon", type=int, default=120_000)
    parser.add_argument("--exponent", type=float, default=1.05)
    parser.add_argument("--story-words", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    lexicon = np.array(pseudo_words(args.lexicon, rng))
    weights = 1.0 / np.arange(1, args.lexicon + 1) ** args.exponent
    weights /= weights.sum()
    target = int(args.megabytes * 1e6)
    written = 0
    with open(args.out, "w", encoding="utf-8") as handle:
        while written < target:
            story = " ".join(lexicon[rng.choice(args.lexicon, size=args.story_words, p=weights)]) + ".\n<|endoftext|>\n"
            handle.write(story)
            written += len(story)


if __name__ == "__main__":
    main()
