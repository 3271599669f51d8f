"""Compute the leading-term corpus statistics of a text corpus and write them to an .npz file.

Arrays: B (bigram, V x V), Sigma (interchangeability B^T B), Phi (context), G (Sigma Phi),
Q (key-query), Delta (positional, length T), vocab (tokens in index order), T, N (number
of windows), and provenance (JSON text: configuration, versions, seed).
"""

from __future__ import annotations


from emergence.commands._corpus_arguments import add_corpus_arguments, corpus_and_statistics, corpus_config

NAME = "basis"
HELP = "corpus statistics B, Sigma, Phi, G, Q, Delta of the leading-term theory (.npz)"


def add_arguments(parser):
    from emergence.commands._checks import NPZ_FORMATS, output_file

    add_corpus_arguments(parser)
    parser.add_argument("--out", required=True, type=output_file(*NPZ_FORMATS), help="output .npz file")


def run(args) -> int:
    import numpy as np

    from emergence.numerics.io import provenance, to_json_text, write_npz_atomic

    corpus, stats = corpus_and_statistics(args)
    record = provenance(corpus_config(args), args.seed if args.corpus == "synthetic" else None)
    write_npz_atomic(
        args.out,
        B=stats.bigram,
        Sigma=stats.interchangeability,
        Phi=stats.context,
        G=stats.composed,
        Q=stats.key_query,
        Delta=stats.positional,
        vocab=np.array(corpus.vocabulary.tokens, dtype=str),
        T=np.int64(corpus.context_length),
        N=np.int64(corpus.num_sequences),
        provenance=np.array(to_json_text(record)),
    )
    print(
        f"wrote B, Sigma, Phi, G, Q, Delta for V={corpus.vocabulary.size}, T={corpus.context_length}, "
        f"N={corpus.num_sequences} windows ({corpus.documents_used} of {corpus.documents_total} documents) to {args.out}"
    )
    return 0
