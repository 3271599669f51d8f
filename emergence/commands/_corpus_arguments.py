"""Corpus options shared by the ``basis``, ``associate`` and ``predict-weights`` commands."""

from __future__ import annotations

from pathlib import Path


def add_corpus_arguments(parser) -> None:
    """CORPUS (a UTF-8 file or ``synthetic``) and the tokenizer, vocabulary and window options."""
    parser.add_argument("corpus", help="UTF-8 text file (documents cut by --separator), or 'synthetic'")
    parser.add_argument("--separator", default="auto", choices=("auto", "eot", "blank-line", "line"),
                        help="document separator: <|endoftext|> if it occurs in the file, else blank lines (auto, "
                             "default); eot; blank-line; line")
    parser.add_argument("--tokenizer", default="natural", metavar="NAME|PATH",
                        help="natural: lowercase letter runs + single other characters (default); whitespace: split "
                             "on whitespace; bpe: byte-level BPE trained on the corpus with --vocab entries; or a "
                             "saved tokenizer.json (bpe and PATH need the extra 'hf')")
    parser.add_argument("--vocab", type=int, default=None, metavar="K",
                        help="keep the K most frequent tokens (default: all, at most 500); the statistics are K x K, "
                             "other tokens become <unk> under --oov unk (the top-K restriction)")
    parser.add_argument("--bpe-vocab", type=int, default=None, dest="bpe_vocab", metavar="N",
                        help="vocabulary size of the BPE that --tokenizer bpe trains (default: K); e.g. 50000 with --vocab 5000")
    parser.add_argument("--T", type=int, default=64, dest="context_length", metavar="N",
                        help="sequence length T; windows have T+1 tokens (default 64)")
    parser.add_argument("--windows", default="all", choices=("first", "all"),
                        help="first T+1 tokens of each document, or all non-overlapping windows (default)")
    parser.add_argument("--oov", default="unk", choices=("drop", "unk"),
                        help="drop documents with out-of-vocabulary tokens, or map them to <unk> (default)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic corpus (default 0)")
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
        "separator": args.separator,
        "bpe_vocab": args.bpe_vocab,
        "stream": getattr(args, "stream", False),
        "backend": args.backend,
    }


def corpus_and_statistics(args, include_interchangeability: bool = True):
    """Load the corpus the options describe and compute its basis statistics (NumPy arrays)."""
    from emergence.numerics.backend import array_module, to_numpy
    from emergence.numerics.leading_terms.basis_statistics import BasisStatistics, basis_statistics
    from emergence.numerics.corpus.documents import load_corpus

    from emergence.theory.errors import EmergenceError, InvalidSizeError

    if args.bpe_vocab is not None and args.tokenizer != "bpe":
        raise EmergenceError("--bpe-vocab sets the size of the BPE that --tokenizer bpe trains; add --tokenizer bpe")
    if args.bpe_vocab is not None and args.bpe_vocab < 2:
        raise InvalidSizeError(f"--bpe-vocab must be at least 2, got {args.bpe_vocab}")
    xp = array_module(args.backend)
    if getattr(args, "stream", False):
        return _streamed_corpus_and_statistics(args, include_interchangeability)
    corpus = load_corpus(
        args.corpus if args.corpus == "synthetic" else Path(args.corpus),
        tokenizer_name=args.tokenizer,
        vocab_size=args.vocab,
        context_length=args.context_length,
        windows=args.windows,
        oov=args.oov,
        seed=args.seed,
        separator=args.separator,
        tokenizer_vocab=args.bpe_vocab,
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


def _streamed_corpus_and_statistics(args, include_interchangeability: bool):
    """The file read in blocks and its statistics accumulated chunk by chunk (NumPy), for corpora larger than memory."""
    from emergence.numerics.corpus.streaming import stream_corpus
    from emergence.numerics.leading_terms.streaming import streamed_basis_statistics
    from emergence.theory.errors import EmergenceError

    if args.corpus == "synthetic" or args.backend != "numpy":
        raise EmergenceError("--stream reads a corpus file with the numpy backend")
    corpus = stream_corpus(
        Path(args.corpus),
        tokenizer_name=args.tokenizer,
        vocab_size=args.vocab,
        context_length=args.context_length,
        windows=args.windows,
        oov=args.oov,
        separator=args.separator,
        tokenizer_vocab=args.bpe_vocab,
    )
    stats = streamed_basis_statistics(corpus.chunks, corpus.vocabulary.size,
                                      include_interchangeability=include_interchangeability)
    return corpus, stats
