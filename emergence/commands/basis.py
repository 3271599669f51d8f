"""Compute the leading-term corpus statistics of a text corpus and write them to an .npz file.

Arrays: B (bigram, V x V), Sigma (interchangeability B^T B), Phi (context), G (Sigma Phi),
Q (key-query), Delta (positional, length T), vocab (tokens in index order), T, N (number
of windows), and provenance (JSON text: configuration, versions, seed).
"""

from __future__ import annotations

from pathlib import Path

from emergence.commands._corpus_arguments import add_corpus_arguments, corpus_and_statistics

NAME = "basis"
HELP = "corpus statistics B, Sigma, Phi, G, Q, Delta of the leading-term theory (.npz)"


def add_arguments(parser):
    add_corpus_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help="output .npz file")


def run(args) -> int:
    import numpy as np

    from emergence.numerics.io import to_json_text, write_npz_atomic

    basis = corpus_and_statistics(args)
    write_npz_atomic(
        args.out,
        **basis.arrays(),
        vocab=np.array(basis.tokens, dtype=str),
        T=np.int64(basis.T),
        N=np.int64(basis.N),
        provenance=np.array(to_json_text(basis.provenance)),
    )
    print(
        f"wrote B, Sigma, Phi, G, Q, Delta for V={len(basis.tokens)}, T={basis.T}, N={basis.N} windows "
        f"({basis.details['documents_used']} of {basis.details['documents_total']} documents) to {args.out}"
    )
    return 0
