"""The token-process options shared by ``phase-diagram`` and ``validate copy-head``: --tokens, --tokenizer, --vocab."""

from __future__ import annotations


def add_token_arguments(parser, what: str) -> None:
    """--tokens (the process), and for ``corpus:PATH`` the corpus commands' --tokenizer and --vocab."""
    from emergence.cli.commands._checks import integer
    from emergence.numerics.copy_head.token_process import TOKEN_PROCESS_HELP

    parser.add_argument("--tokens", default="iid", help=f"token process {what}: {TOKEN_PROCESS_HELP}; default iid")
    parser.add_argument("--tokenizer", default=None, metavar="NAME|PATH",
                        help="with --tokens corpus:PATH: natural (default: lowercase letter runs + single other "
                             "characters), whitespace, or a saved tokenizer.json")
    parser.add_argument("--vocab", type=integer(2, what="vocabulary size K"), default=None, metavar="K",
                        help="with --tokens corpus:PATH: the K most frequent tokens kept, the rest <unk>; the copy "
                             "task reads V = K + 1 classes, so K must be V - 1 (the default)")


def token_process_text(args) -> str:
    """The process text the options name (``corpus:PATH#tokenizer=NAME`` for another tokenizer); a one-line
    :class:`~emergence.base.errors.InvalidArgumentError` where --tokenizer or --vocab do not apply or disagree with --V."""
    from emergence.base.errors import InvalidArgumentError
    from emergence.numerics.copy_head.corpus_process import TOKENIZER_MARK

    corpus = args.tokens.strip().startswith("corpus:")
    for name in ("tokenizer", "vocab"):
        if getattr(args, name) is not None and not corpus:
            raise InvalidArgumentError(name, f"applies to --tokens corpus:PATH only, not to {args.tokens!r}")
    if args.vocab is not None and args.vocab != args.V - 1:
        raise InvalidArgumentError("vocab", f"the copy task reads V = {args.V} classes (V - 1 tokens and <unk>): "
                                            f"use --vocab {args.V - 1} or --V {args.vocab + 1}")
    if args.tokenizer in (None, "natural"):
        return args.tokens
    return f"{args.tokens.strip()}{TOKENIZER_MARK}{args.tokenizer}"


def token_statistics_line(record: dict) -> str:
    """One line for the report: the process, the lag range, and for a corpus its provenance."""
    low, high = record["lag_range"]
    line = f"tokens {record['process']}: lags {low}..{high}, {record['source']}"
    if record["source"] != "measured":
        return line
    return (line + f" from {record['file']} (sha256 {record['sha256'][:12]}…, tokenizer {record['tokenizer']}, "
            f"V = {record['V']} classes {record['classes']}, {record['tokens']} tokens, {record['windows']} windows, "
            f"coverage {record['coverage']:.3f})")
