"""Train the attention-only model of Definition 3.1 with plain SGD from zero init and compare
every weight with its leading term (Theorem 4.1, arXiv 2601.19208).

Prints per component (W_O, V, W, P) the minimum Frobenius cosine over layers and epochs,
inside the theorem's window and overall, the fitted slope of log(relative error) against
log(s eta) (theory: 1), and the causal-removal losses.  --json writes per component and
layer the cosine and relative error per epoch, min_cosine, within_window per epoch and
the causal-removal losses, with provenance.  One epoch is one full-batch gradient step
unless --batch-size is given.  At most --max-sequences windows of the corpus are trained on;
the first line says how many the corpus had (JSON: corpus.windows_available, corpus.truncated).
"""

from __future__ import annotations

NAME = "leading-terms"
HELP = "train Definition 3.1 with SGD and compare W_O, V, W, P with the leading terms"


def add_arguments(parser):
    from emergence.cli.commands._checks import PLOT_FORMATS, count_or_all, integer, output_file, seed

    parser.add_argument("--corpus", default="synthetic", metavar="PATH|synthetic|markov",
                        help="UTF-8 text file, 'synthetic' (the built-in story corpus; default) "
                             "or 'markov' (a seeded random Markov chain)")
    parser.add_argument("--layers", type=integer(1), default=2, metavar="L", help="attention layers (default 2)")
    parser.add_argument("--lr", type=_learning_rate, default=0.002, metavar="ETA|auto",
                        help="learning rate (default 0.002); auto: the rate whose window edge falls halfway through "
                             "the run, so that cosines and errors are seen on both sides of it")
    parser.add_argument("--epochs", type=integer(1), default=20, metavar="N", help="epochs (default 20)")
    parser.add_argument("--vocab", type=integer(2, what="vocabulary size K"), default=None, metavar="K", help="keep the K most frequent tokens (default: all, at most 500), plus <unk> under --oov unk")
    parser.add_argument("--T", type=integer(1, what="sequence length T"), default=64, dest="context_length", metavar="N", help="sequence length (default 64)")
    parser.add_argument("--max-sequences", type=count_or_all, default=64, metavar="N|all",
                        help="train on at most N of the corpus's windows, drawn at random with --seed (default 64); "
                             "all: every window. The output states how many the corpus had")
    parser.add_argument("--batch-size", type=integer(1), default=None, metavar="B", help="SGD batch (default: full batch)")
    parser.add_argument("--tokenizer", default="natural", metavar="NAME|PATH",
                        help="natural (default), whitespace, bpe (a byte-level BPE of K entries trained on the corpus) "
                             "or a saved tokenizer.json (bpe and PATH need the extra 'hf')")
    parser.add_argument("--windows", default="all", choices=("first", "all"))
    parser.add_argument("--oov", default="unk", choices=("drop", "unk"))
    parser.add_argument("--device", default=None, choices=("cpu", "cuda"), help="default: cuda when torch sees a GPU")
    parser.add_argument("--seed", type=seed, default=0, help="seed of corpus sampling and shuffling (default 0)")
    parser.add_argument("--json", default=None, type=output_file(".json", stdout=True), metavar="PATH|-", help="write the full result as JSON")
    parser.add_argument("--plot", default=None, type=output_file(*PLOT_FORMATS), metavar="PATH", help="plot cosines against epoch")
    parser.add_argument("--edge-plot", default=None, type=output_file(*PLOT_FORMATS), metavar="PATH", dest="edge_plot",
                        help="plot relative errors (with the fitted slope) and cosines against s*eta across the window's edge")


def _learning_rate(text: str) -> float | None:
    """A checked learning rate, or ``auto`` (None: chosen from the window, see the experiment module)."""
    from emergence.cli.commands._checks import learning_rate

    return None if text == "auto" else learning_rate(text)


def _format(value) -> str:
    return "n/a" if value is None else f"{value:.10f}"


def _print_header(args, result: dict) -> None:
    corpus = result["corpus"]
    drawn = (f" drawn at random from {corpus['windows_available']} (--max-sequences {args.max_sequences}; "
             "all: every window)") if corpus["truncated"] else f" (all {corpus['windows_available']})"
    print(f"corpus {args.corpus}: V={corpus['V']}, T={corpus['T']}, N={corpus['N']} windows{drawn}; "
          f"lr={result['config']['lr']:.4g}, L={args.layers}, {len(result['steps'])} epochs = {result['steps'][-1]} steps; "
          f"theorem window s <= {result['step_limit']:.3g} ({sum(result['within_window'])} epochs inside)")
    moved = result["loss_inside_window"]
    if moved["change"] is not None:
        print(f"lr {result['config']['lr']:.4g}{' (auto)' if args.lr is None else ''}: inside the window "
              f"(s*eta <= {result['window_edge_s_eta']:.3g}) the loss moves {moved['first']:.6f} -> "
              f"{moved['last']:.6f} ({moved['change']:+.2e})")
    failed = [name for name, ok in result["size_conditions"].items() if not ok]
    if failed:
        print("size conditions of the theorem not met: " + ", ".join(failed))


def _print_table(result: dict) -> None:
    print(f"{'weight':<6}  {'min cos (window)':>16}  {'min cos (all)':>13}  "
          f"{'slope of log rel.err vs log s*eta: all':>38}  {'later half':>10}")
    for name in ("W_O", "V", "W", "P"):
        slopes = [result[key][name] for key in ("relative_error_slope", "relative_error_slope_late")]
        print(f"{name:<6}  {_format(result['min_cosine_within_window'][name]):>16}  "
              f"{_format(result['min_cosine'][name]):>13}  "
              + "  ".join(f"{'n/a' if v is None else f'{v:.3f}':>{w}}" for v, w in zip(slopes, (38, 10))))
    removal = result["causal_removal"]
    print(f"loss {result['initial_loss']:.4f} (init) -> {removal['trained']:.4f}; causal removal: "
          + "; ".join(f"{name} " + "/".join(f"{v:.4f}" for v in removal[name]) for name in ("W_O", "V", "W", "P")))


def _validate(args):
    """The API's validation with a progress bar over the epochs."""
    from emergence.api import validate_leading_terms
    from emergence.base.progress import progress as progress_bar

    with progress_bar(args.epochs, "epochs", unit="epoch") as bar:

        def progress(done: int, total: int, loss: float) -> None:
            bar.set_postfix(loss=f"{loss:.4f}")
            bar.update(1)

        return validate_leading_terms(
            args.corpus, progress=progress, layers=args.layers, lr=args.lr, epochs=args.epochs,
            vocab_size=args.vocab, context_length=args.context_length, max_sequences=args.max_sequences,
            batch_size=args.batch_size, tokenizer=args.tokenizer, windows=args.windows, oov=args.oov,
            seed=args.seed, device=args.device,
        )


def _save_figures(args, validation) -> None:
    from emergence.report.figures import save_figure, window_edge_figure

    if args.plot is not None:
        save_figure(validation.plot(), args.plot)
    if args.edge_plot is not None:
        save_figure(window_edge_figure(validation), args.edge_plot)


def run(args) -> int:
    import sys
    from pathlib import Path

    from emergence.base.io import to_json_text, write_json_atomic
    from emergence.report.figures import figure_format

    for path in (args.plot, args.edge_plot):
        if path is not None:
            figure_format(path)
    validation = _validate(args)
    result = validation.to_dict()
    if args.json == "-":
        sys.stdout.write(to_json_text(result))
    else:
        if args.json is not None:
            write_json_atomic(Path(args.json), result)
        _print_header(args, result)
        _print_table(result)
        if args.json is not None:
            print(f"wrote {args.json}")
    _save_figures(args, validation)
    return 0
