"""Corpus options shared by the ``basis``, ``associate`` and ``predict-weights`` commands."""

from __future__ import annotations


def add_corpus_arguments(parser) -> None:
    """CORPUS (a UTF-8 file or ``synthetic``) and the tokenizer, vocabulary and window options."""
    from emergence.cli.commands._checks import integer, seed

    parser.add_argument("corpus", help="UTF-8 text file (documents cut by --separator), or 'synthetic'")
    parser.add_argument("--separator", default="auto", choices=("auto", "eot", "blank-line", "line"),
                        help="document separator: <|endoftext|> if it occurs in the file, else blank lines (auto, "
                             "default); eot; blank-line; line")
    parser.add_argument("--tokenizer", default="natural", metavar="NAME|PATH",
                        help="natural: lowercase letter runs + single other characters (default); whitespace: split "
                             "on whitespace; bpe: byte-level BPE trained on the corpus with --vocab entries; or a "
                             "saved tokenizer.json (bpe and PATH need the extra 'hf')")
    parser.add_argument("--vocab", type=integer(2, what="vocabulary size K"), default=None, metavar="K",
                        help="keep the K most frequent tokens (default: all, at most 500); other tokens become <unk> "
                             "under --oov unk, so the statistics are (K+1) x (K+1) (the top-K restriction), "
                             "K x K under --oov drop")
    parser.add_argument("--bpe-vocab", type=integer(2, what="BPE vocabulary size"), default=None, dest="bpe_vocab",
                        metavar="N",
                        help="vocabulary size of the BPE that --tokenizer bpe trains (default: K); e.g. 50000 with --vocab 5000")
    parser.add_argument("--T", type=integer(1, what="sequence length T"), default=64, dest="context_length", metavar="N",
                        help="sequence length T; windows have T+1 tokens (default 64)")
    parser.add_argument("--windows", default="all", choices=("first", "all"),
                        help="first T+1 tokens of each document, or all non-overlapping windows (default)")
    parser.add_argument("--oov", default="unk", choices=("drop", "unk"),
                        help="drop documents with out-of-vocabulary tokens, or map them to <unk> (default)")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the synthetic corpus (default 0)")
    parser.add_argument("--backend", default="numpy", choices=("numpy", "cupy"),
                        help="array backend for the statistics (default numpy)")


def corpus_options(args) -> dict:
    """The keyword arguments of :func:`emergence.api.basis` (besides the corpus) that the options give."""
    return dict(tokenizer=args.tokenizer, vocab=args.vocab, T=args.context_length, windows=args.windows, oov=args.oov,
                seed=args.seed, backend=args.backend, separator=args.separator, bpe_vocab=args.bpe_vocab,
                stream=getattr(args, "stream", False))


def corpus_and_statistics(args, include_interchangeability: bool = True):
    """The corpus the options describe and its basis statistics: :func:`emergence.api.basis`."""
    from emergence.api import basis

    return basis(args.corpus, **corpus_options(args), include_interchangeability=include_interchangeability)
