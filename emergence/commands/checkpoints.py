"""Compare local causal-LM checkpoints (GPT-NeoX/Pythia, GPT-2) with the leading-term matrices.

For each checkpoint folder in the order given, per layer and head, in the space of the
corpus's top-K tokens (tokenized with the tokenizer.json beside the checkpoints): the
Frobenius cosine of each head's W_Q W_K^T taken through the embedding with Q, of each
layer's attention input/output map E W_V W_O U with Phi^T B^T and Phi^T B^T B, and of the
direct path E U with B (see emergence.validation.leading_terms.checkpoints for the maps
and their approximations).  Needs the optional extra 'hf'; runs offline (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

from pathlib import Path

NAME = "checkpoints"
HELP = "cosines of local Hugging Face checkpoints' attention maps with the leading-term matrices"


def add_arguments(parser):
    parser.add_argument("checkpoint", nargs="+", type=Path, metavar="DIR", help="save_pretrained folders, in order")
    parser.add_argument("--corpus", required=True, help="UTF-8 text file, or 'synthetic'")
    parser.add_argument("--top-k", type=int, default=500, dest="top_k", metavar="K",
                        help="compare in the space of the corpus's K most frequent tokens (default 500)")
    parser.add_argument("--T", type=int, default=64, dest="context_length", metavar="N", help="window length T (default 64)")
    parser.add_argument("--separator", default="auto", choices=("auto", "eot", "blank-line", "line"),
                        help="document separator (default auto: <|endoftext|> if present, else blank lines)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic corpus (default 0)")
    parser.add_argument("--json", default=None, metavar="PATH|-", help="write JSON to PATH, or '-' for stdout")
    parser.add_argument("--plot", default=None, type=Path, metavar="PATH", help="write a figure of the cosines")


def run(args) -> int:
    import sys

    from emergence.numerics.corpus.documents import load_corpus
    from emergence.base.io import provenance, to_json_text, write_json_atomic
    from emergence.numerics.leading_terms.basis_statistics import basis_statistics
    from emergence.base.errors import InvalidSizeError
    from emergence.validation.leading_terms.checkpoints import (
        compare_checkpoint,
        find_tokenizer,
        leading_term_targets,
        load_checkpoint,
    )

    if args.top_k < 2:
        raise InvalidSizeError(f"--top-k must be at least 2, got {args.top_k}")
    if args.plot is not None:
        from emergence.figures import figure_format

        figure_format(args.plot)
    tokenizer_path = find_tokenizer(args.checkpoint)
    models = [load_checkpoint(path) for path in args.checkpoint]
    corpus = load_corpus(args.corpus, tokenizer_name=str(tokenizer_path), vocab_size=args.top_k,
                         context_length=args.context_length, windows="all", oov="unk", seed=args.seed,
                         separator=args.separator)
    keep = corpus.vocabulary.size - 1  # the last token is <unk>
    stats = basis_statistics(corpus.sequences, corpus.vocabulary.size, include_interchangeability=False)
    targets = leading_term_targets(stats, keep)
    backend = corpus.tokenizer.backend
    token_ids = [backend.token_to_id(token) for token in corpus.vocabulary.tokens[:keep]]
    for path, model in zip(args.checkpoint, models):
        if max(token_ids) >= model.get_input_embeddings().weight.shape[0]:
            raise InvalidSizeError(f"checkpoint {str(path)!r} has fewer embedding rows than the tokenizer's ids")
    checkpoints = [{"path": str(path), **compare_checkpoint(model, token_ids, targets)}
                   for path, model in zip(args.checkpoint, models)]
    config = {"checkpoints": [str(p) for p in args.checkpoint], "corpus": str(args.corpus), "top_k": args.top_k,
              "T": args.context_length, "separator": args.separator, "tokenizer": str(tokenizer_path)}
    record = {"top_k": keep, "T": corpus.context_length, "N": corpus.num_sequences, "tokenizer": str(tokenizer_path),
              "tokens": list(corpus.readable_tokens[:keep]),
              "tokens_raw": list(corpus.vocabulary.tokens[:keep]), "checkpoints": checkpoints,
              "provenance": provenance(config, args.seed if args.corpus == "synthetic" else None)}
    if args.plot is not None:
        from emergence.figures import checkpoint_figure, save_figure

        save_figure(checkpoint_figure(record), args.plot)
    if args.json is not None:
        if args.json == "-":
            sys.stdout.write(to_json_text(record))
            return 0
        write_json_atomic(Path(args.json), record)
    print(f"top K={keep} tokens, T={corpus.context_length}, N={corpus.num_sequences} windows; Frobenius cosines "
          "(key-query: E W_Q W_K^T E^T vs Q; value: E W_V W_O U vs Phi^T B^T; value-output: vs Phi^T B^T B)")
    for entry in checkpoints:
        print(f"\n{entry['path']}: direct E U vs B {entry['direct']:+.3f}")
        for layer in entry["layers"]:
            heads = ", ".join(f"h{h['head']} {h['key_query']:+.3f}" for h in layer["heads"])
            print(f"  layer {layer['layer']}: key-query {layer['key_query']:+.3f} ({heads}); "
                  f"value {layer['value']:+.3f}; value-output {layer['value_output']:+.3f}")
    return 0
