"""Compare local causal-LM checkpoints (GPT-NeoX/Pythia, GPT-2) with the leading-term matrices.

For each checkpoint folder in the order given, per layer and head, in the space of the
corpus's top-K tokens (tokenized with the tokenizer.json beside the checkpoints): the
Frobenius cosine of each head's W_Q W_K^T taken through the embedding, formed as
(E W_Q)(E W_K)^T, with Q, of each layer's attention input/output map E W_V W_O U with
Phi^T B^T and Phi^T B^T B, and of the direct path E U with B (see
emergence.validation.leading_terms.checkpoints for the maps and their approximations).
The statistics come from --corpus (K real tokens plus <unk>, as basis --vocab K) or from a
basis .npz (--stats, computed with the same tokenizer.json).  Checkpoints are loaded one at a
time, in their own dtype, each after its memory is estimated; one that will not fit is refused
(one line, exit 2).  Needs the optional extra 'hf'; runs offline (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

from pathlib import Path

NAME = "checkpoints"
HELP = "cosines of local Hugging Face checkpoints' attention maps with the leading-term matrices"
DEFAULT_TOP_K = 500


def add_arguments(parser):
    parser.add_argument("checkpoint", nargs="+", type=Path, metavar="DIR", help="save_pretrained folders, in order")
    sources = parser.add_mutually_exclusive_group(required=True)
    sources.add_argument("--corpus", help="UTF-8 text file, or 'synthetic': the statistics are computed from it")
    sources.add_argument("--stats", type=Path, metavar="FILE",
                         help="a basis .npz to reuse (emergence basis CORPUS --tokenizer DIR/tokenizer.json --vocab K): "
                              "its K tokens and statistics, instead of --corpus")
    parser.add_argument("--top-k", type=int, default=None, dest="top_k", metavar="K",
                        help=f"compare in the space of the corpus's K most frequent tokens (default {DEFAULT_TOP_K}; "
                             "with --stats: the file's K)")
    parser.add_argument("--T", type=int, default=64, dest="context_length", metavar="N", help="window length T (default 64)")
    parser.add_argument("--separator", default="auto", choices=("auto", "eot", "blank-line", "line"),
                        help="document separator (default auto: <|endoftext|> if present, else blank lines)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic corpus (default 0)")
    parser.add_argument("--json", default=None, metavar="PATH|-", help="write JSON to PATH, or '-' for stdout")
    parser.add_argument("--plot", default=None, type=Path, metavar="PATH", help="write a figure of the cosines")


def _corpus_statistics(args, tokenizer_path: Path, top_k: int):
    """(B, Phi, Q, tokens, readable tokens, T, N) of --corpus, K real tokens plus <unk>."""
    from emergence.numerics.corpus.documents import load_corpus
    from emergence.numerics.leading_terms.basis_statistics import basis_statistics

    corpus = load_corpus(args.corpus, tokenizer_name=str(tokenizer_path), vocab_size=top_k,
                         context_length=args.context_length, windows="all", oov="unk", seed=args.seed,
                         separator=args.separator)
    stats = basis_statistics(corpus.sequences, corpus.vocabulary.size, include_interchangeability=False)
    return (stats.bigram, stats.context, stats.key_query, corpus.vocabulary.tokens, corpus.readable_tokens,
            corpus.context_length, corpus.num_sequences)


def _file_statistics(path: Path, checkpoints) -> tuple:
    """The same from a basis .npz, after checking that its arrays, the targets and the largest checkpoint
    fit (the file's size bounds the arrays read; K is read first); :class:`EmergenceError` when it is not one."""
    import numpy as np

    from emergence.base.errors import EmergenceError
    from emergence.base.limits import check_memory
    from emergence.validation.leading_terms.checkpoints import checkpoint_bytes

    try:
        with np.load(path) as data:
            keep = len(data["vocab_raw"]) - 1
            check_memory(path.stat().st_size + 4 * 8 * keep**2 + max(checkpoint_bytes(p, keep) for p in checkpoints),
                         "checkpoints", "compute the statistics with a smaller basis --vocab")
            arrays = {name: data[name] for name in ("B", "Phi", "Q", "vocab", "vocab_raw", "T", "N")}
    except (OSError, ValueError, KeyError) as error:
        raise EmergenceError(f"--stats {str(path)!r} is not a basis .npz with B, Phi, Q, vocab, vocab_raw, T, N "
                             f"({str(error).splitlines()[0] if str(error) else type(error).__name__})") from None
    return (arrays["B"], arrays["Phi"], arrays["Q"], tuple(map(str, arrays["vocab_raw"])), tuple(map(str, arrays["vocab"])),
            int(arrays["T"]), int(arrays["N"]))


def run(args) -> int:
    import sys

    from emergence.base.errors import EmergenceError, InvalidSizeError
    from emergence.base.io import provenance, to_json_text, write_json_atomic
    from emergence.base.limits import check_memory
    from emergence.numerics.corpus.subword import load_tokenizer_file
    from emergence.numerics.corpus.vocabulary import UNKNOWN_TOKEN
    from emergence.numerics.leading_terms.basis_statistics import dense_statistics_bytes
    from emergence.validation.leading_terms.checkpoints import (
        checkpoint_bytes,
        compare_checkpoints,
        find_tokenizer,
        leading_term_targets,
    )

    if args.top_k is not None and args.top_k < 2:
        raise InvalidSizeError(f"--top-k must be at least 2, got {args.top_k}")
    if args.stats is not None and args.top_k is not None:
        raise EmergenceError("--top-k is the K of the --stats file; compute the file with basis --vocab K instead")
    if args.plot is not None:
        from emergence.figures import figure_format

        figure_format(args.plot)
    tokenizer_path = find_tokenizer(args.checkpoint)
    if args.stats is None:
        top_k = args.top_k or DEFAULT_TOP_K
        largest = max(checkpoint_bytes(path, top_k) for path in args.checkpoint)  # also checks every folder first
        check_memory(dense_statistics_bytes(top_k + 1) + 4 * 8 * top_k**2 + largest, "checkpoints",
                     "compare fewer tokens (--top-k)")
        bigram, context, key_query, tokens, readable, T, N = _corpus_statistics(args, tokenizer_path, top_k)
    else:
        bigram, context, key_query, tokens, readable, T, N = _file_statistics(args.stats, args.checkpoint)
    keep = len(tokens) - (tokens[-1] == UNKNOWN_TOKEN)
    backend = load_tokenizer_file(tokenizer_path).backend
    token_ids = [backend.token_to_id(token) for token in tokens[:keep]]
    if None in token_ids:
        missing = tokens[token_ids.index(None)]
        raise EmergenceError(f"token {missing!r} of the statistics is not in {str(tokenizer_path)!r}; compute them "
                             "with that tokenizer (basis --tokenizer PATH)")
    targets = leading_term_targets(bigram, context, key_query, keep)
    del bigram, context, key_query
    checkpoints = list(compare_checkpoints(args.checkpoint, token_ids, targets))
    config = {"checkpoints": [str(p) for p in args.checkpoint], "corpus": args.corpus,
              "stats": None if args.stats is None else str(args.stats), "top_k": keep,
              "T": T, "separator": args.separator, "tokenizer": str(tokenizer_path)}
    record = {"top_k": keep, "T": T, "N": N, "tokenizer": str(tokenizer_path),
              "tokens": list(readable[:keep]), "tokens_raw": list(tokens[:keep]), "checkpoints": checkpoints,
              "provenance": provenance(config, args.seed if args.corpus == "synthetic" else None)}
    if args.plot is not None:
        from emergence.figures import checkpoint_figure, save_figure

        save_figure(checkpoint_figure(record), args.plot)
    if args.json is not None:
        if args.json == "-":
            sys.stdout.write(to_json_text(record))
            return 0
        write_json_atomic(Path(args.json), record)
    print(f"top K={keep} tokens, T={T}, N={N} windows; Frobenius cosines "
          "(key-query: (E W_Q)(E W_K)^T vs Q; value: E W_V W_O U vs Phi^T B^T; value-output: vs Phi^T B^T B)")
    for entry in checkpoints:
        print(f"\n{entry['path']}: direct E U vs B {entry['direct']:+.3f}")
        for layer in entry["layers"]:
            heads = ", ".join(f"h{h['head']} {h['key_query']:+.3f}" for h in layer["heads"])
            print(f"  layer {layer['layer']}: key-query {layer['key_query']:+.3f} ({heads}); "
                  f"value {layer['value']:+.3f}; value-output {layer['value_output']:+.3f}")
    return 0
