"""Corpus options shared by the ``basis``, ``associate`` and ``predict-weights`` commands."""

from __future__ import annotations

from pathlib import Path


def add_corpus_arguments(parser) -> None:
    """CORPUS (a UTF-8 file or ``synthetic``) and the tokenizer, vocabulary and window options."""
    from emergence.commands._checks import integer, seed

    parser.add_argument("corpus", help="UTF-8 text file (documents split on blank lines or <|endoftext|>), or 'synthetic'")
    parser.add_argument("--tokenizer", default="natural", choices=("natural", "whitespace"),
                        help="natural: lowercase letter runs + single other characters (default); whitespace: split on whitespace")
    parser.add_argument("--vocab", type=integer(2, what="vocabulary size K"), default=None, metavar="K",
                        help="keep the K most frequent tokens (default: all, at most 500)")
    parser.add_argument("--T", type=integer(1, what="sequence length T"), default=64, dest="context_length", metavar="N",
                        help="sequence length T; windows have T+1 tokens (default 64)")
    parser.add_argument("--windows", default="all", choices=("first", "all"),
                        help="first T+1 tokens of each document, or all non-overlapping windows (default)")
    parser.add_argument("--oov", default="unk", choices=("drop", "unk"),
                        help="drop documents with out-of-vocabulary tokens, or map them to <unk> (default)")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the synthetic corpus (default 0)")
    parser.add_argument("--backend", default="numpy", choices=("numpy", "cupy"),
                        help="array backend for the statistics (default numpy)")


def corpus_config(args) -> dict:
    """The corpus options as a provenance dictionary."""
    return {
        "corpus": str(args.corpus),
        "tokenizer": args.tokenizer,
        "vocab": args.vocab,
        "T": args.context_length,
        "windows": args.windows,
        "oov": args.oov,
        "backend": args.backend,
    }


def corpus_and_statistics(args, include_interchangeability: bool = True):
    """Load the corpus the options describe and compute its basis statistics (NumPy arrays)."""
    from emergence.numerics.backend import array_module, to_numpy
    from emergence.numerics.leading_terms.basis_statistics import BasisStatistics, basis_statistics
    from emergence.numerics.corpus.documents import load_corpus

    xp = array_module(args.backend)
    corpus = load_corpus(
        args.corpus if args.corpus == "synthetic" else Path(args.corpus),
        tokenizer_name=args.tokenizer,
        vocab_size=args.vocab,
        context_length=args.context_length,
        windows=args.windows,
        oov=args.oov,
        seed=args.seed,
    )
    stats = basis_statistics(
        corpus.sequences, corpus.vocabulary.size, xp=xp, include_interchangeability=include_interchangeability
    )
    if xp.__name__ != "numpy":
        stats = BasisStatistics(
            **{
                name: to_numpy(getattr(stats, name)) if getattr(stats, name) is not None else None
                for name in ("bigram", "interchangeability", "context", "composed", "key_query", "positional")
            },
            num_sequences=stats.num_sequences,
            context_length=stats.context_length,
        )
    return corpus, stats
