"""Score local causal-LM checkpoints (GPT-NeoX/Pythia, GPT-2) against the leading-term matrices.

For each checkpoint folder in the order given, per layer and head, in the space of the corpus's
top-K tokens: the Gram metric (the paper's: row-normalised Gram matrices of the model's map or
mean hidden states and of the theory matrix, compared by the correlation of their off-diagonal
entries) and the weight metric (Frobenius cosine of the maps), each beside its baselines
(frequency p p^T, a random model of the same shape), its variants (tokens of rank > k0, top
singular component removed), its noise level (token relabelings), the excess over the strongest
baseline and a verdict (excess > 3 noise levels).  See emergence.validation.leading_terms
.checkpoint_comparison for the maps and emergence.numerics.leading_terms.token_metrics for the
metrics.  The statistics come from --corpus (tokenized once; K real tokens plus <unk>, as basis
--vocab K) or from a basis .npz (--stats, computed with the same tokenizer); hidden states need
--corpus.  Checkpoints are loaded one at a time, in their own dtype, each after its memory is
estimated; one that will not fit is refused (one line, exit 2).  The table prints layers (heads:
how many pass); the JSON holds every head.  Needs the optional extra 'hf'; runs offline.
"""

from __future__ import annotations

from pathlib import Path

NAME = "checkpoints"
HELP = "Gram and weight metrics of local Hugging Face checkpoints against the leading-term matrices, with baselines"


def add_arguments(parser):
    from emergence.api import DEFAULT_CHECKPOINT_TOP_K
    from emergence.base.executors import EXECUTOR_HELP
    from emergence.cli.commands._checks import count_or_all, existing_folder, integer, output_file

    parser.add_argument("checkpoint", nargs="+", type=existing_folder, metavar="DIR", help="save_pretrained folders, in order")
    parser.add_argument("--corpus", help="UTF-8 text file, or 'synthetic': the statistics and the hidden states' windows")
    parser.add_argument("--stats", type=Path, metavar="FILE",
                        help="a basis .npz to reuse (emergence basis CORPUS --tokenizer DIR/tokenizer.json --vocab K): "
                             "its K tokens and statistics; with --corpus too, the corpus gives only the hidden states")
    parser.add_argument("--tokenizer", default=None, metavar="PATH",
                        help="tokenizer.json of the checkpoints (default: the one in the first folder or its parent)")
    parser.add_argument("--top-k", type=int, default=None, dest="top_k", metavar="K",
                        help=f"compare in the space of the corpus's K most frequent tokens (default "
                             f"{DEFAULT_CHECKPOINT_TOP_K}; with --stats: the file's K)")
    parser.add_argument("--T", type=integer(1, what="window length T"), default=64, dest="context_length", metavar="N",
                        help="window length T (default 64)")
    parser.add_argument("--separator", default="auto", choices=("auto", "eot", "blank-line", "line"),
                        help="document separator (default auto: <|endoftext|> if present, else blank lines)")
    parser.add_argument("--permutations", type=int, default=8, metavar="N",
                        help="token relabelings of the noise level (default 8)")
    parser.add_argument("--k0", type=integer(1), default=None, metavar="K0",
                        help="rank cut of the rank > k0 variant (default 50, at most K/2)")
    parser.add_argument("--forward-windows", type=count_or_all, default=256, dest="forward_windows", metavar="N|all",
                        help="windows fed through each model for the hidden states, drawn with --seed (default 256)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the synthetic corpus, the relabelings, the window draw and the random model (default 0)")
    parser.add_argument("--ids", default=None, type=output_file(), metavar="FILE",
                        help="keep the corpus's token-id windows in FILE (int32, memory-mapped; default: a temporary "
                             "file): the corpus is read in blocks and tokenized once")
    parser.add_argument("--out", default=None, type=Path, metavar="DIR",
                        help="write each scored checkpoint to DIR as it finishes; a rerun with the same DIR resumes "
                             "(scores only checkpoints, or inputs, that changed)")
    parser.add_argument("--executor", default=None, metavar="local|dask[:ADDRESS]",
                        help="score checkpoints in parallel: " + EXECUTOR_HELP + " (default: in this process, one at a time)")
    parser.add_argument("--workers", type=integer(1), default=None, metavar="N", help="worker processes of --executor")
    parser.add_argument("--json", default=None, type=output_file(".json", stdout=True), metavar="PATH|-",
                        help="write JSON to PATH, or '-' for stdout")
    parser.add_argument("--plot", default=None, type=Path, metavar="PATH", help="write a figure of the metrics")


def _score_text(score: dict) -> str:
    """One metric's number beside its baselines, excess, noise and verdict."""
    if "value" not in score:
        return f"FAIL ({score['reason']})"
    if "excess" not in score:
        return f"{score['value']:+.3f} FAIL ({score['reason']})"
    baselines = ", ".join(f"{'freq' if name == 'frequency' else 'random'} {value:+.3f}"
                          for name, value in score["baselines"].items())
    removed = score.get("top_component_removed")
    deflated = "" if removed is None else f"; top removed {removed['excess']:+.3f} +- {removed['noise']:.3f}"
    return (f"{score['value']:+.3f} ({baselines}; excess {score['excess']:+.3f} +- {score['noise']:.3f}{deflated}) "
            f"{'pass' if score['passes'] else 'FAIL'}")


def _print_scores(label: str, entry: dict, names) -> None:
    for name in names:
        for metric, score in entry[name].items():
            print(f"  {label:<8} {name:<13} {metric:<6} {_score_text(score)}")


def _print_checkpoint(checkpoint: dict) -> None:
    print(f"\n{checkpoint['path']}")
    _print_scores("direct", checkpoint, ("direct",))
    for layer in checkpoint["layers"]:
        _print_scores(f"layer {layer['layer']}", layer,
                      ("hidden_bigram", "hidden_value", "key_query", "value", "value_output", "positional"))
        passing = {f"{name} {metric}": sum(h[name][metric]["passes"] for h in layer["heads"])
                   for name in ("key_query", "value") for metric in ("gram", "weight")}
        print(f"  {'':<8} heads passing (of {len(layer['heads'])}): "
              + ", ".join(f"{key} {count}" for key, count in passing.items()))


def run(args) -> int:
    import sys

    from emergence.api import checkpoints
    from emergence.base.io import write_json_atomic

    if args.plot is not None:
        from emergence.report.figures import figure_format

        figure_format(args.plot)
    record = checkpoints([str(p) for p in args.checkpoint], corpus=args.corpus,
                         stats=None if args.stats is None else str(args.stats), top_k=args.top_k,
                         T=args.context_length, separator=args.separator, seed=args.seed, tokenizer=args.tokenizer,
                         permutations=args.permutations, k0=args.k0, forward_windows=args.forward_windows,
                         out=None if args.out is None else str(args.out), executor=args.executor, workers=args.workers,
                         progress=True, ids=args.ids)
    if args.plot is not None:
        from emergence.report.figures import save_figure

        save_figure(record.plot(), args.plot)
    if args.json == "-":
        sys.stdout.write(record.to_json())
        return 0
    if args.json is not None:
        write_json_atomic(Path(args.json), record.to_dict())
    settings = record.settings
    print(f"top K={record.top_k} tokens, T={record.T}, N={record.N} windows; hidden states over "
          f"{settings['forward_windows']} of {settings['windows_available']} windows; rank cut k0={settings['k0']}; "
          f"noise: std over {settings['permutations']} token relabelings; pass: excess over the strongest baseline "
          "> 3 x noise with all tokens and with the top component removed")
    for checkpoint in record.checkpoints:
        _print_checkpoint(checkpoint)
    return 0
