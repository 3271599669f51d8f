"""Predict every weight of an L-layer attention-only transformer after S steps (Theorem 4.1).

Writes W_O (V x V), V_l, W_l (L x V x V) and P_l (L x T) built from the corpus statistics
and the derived step coefficients, the theorem's Frobenius error bounds (bound_W_O,
bound_V, bound_W, bound_P), the step limit of its window, within_window (S <= step
limit and the size conditions T >= 60, V >= 500, L <= sqrt(T)/4), vocab, T, N and
provenance.
"""

from __future__ import annotations


from emergence.commands._corpus_arguments import add_corpus_arguments, corpus_and_statistics, corpus_config

NAME = "predict-weights"
HELP = "closed-form leading-term weights W_O, V_l, W_l, P_l after S gradient steps (.npz)"


def add_arguments(parser):
    from emergence.commands._checks import NPZ_FORMATS, integer, learning_rate, output_file

    add_corpus_arguments(parser)
    parser.add_argument("--steps", type=integer(0), required=True, metavar="S", help="number of gradient steps s")
    parser.add_argument("--lr", type=learning_rate, required=True, metavar="ETA", help="learning rate eta")
    parser.add_argument("--layers", type=integer(1), required=True, metavar="L", help="number of attention layers")
    parser.add_argument("--out", required=True, type=output_file(*NPZ_FORMATS), help="output .npz file")


def run(args) -> int:
    import numpy as np

    from emergence.numerics.io import provenance, to_json_text, write_npz_atomic
    from emergence.numerics.leading_terms.leading_weights import (
        error_bounds,
        predicted_weights,
        size_conditions,
        step_limit,
        within_step_window,
    )

    corpus, stats = corpus_and_statistics(args, include_interchangeability=False)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, in one line
        weights = predicted_weights(stats, args.steps, args.lr, args.layers)
    overflowed = [name for name, value in weights.items() if not np.all(np.isfinite(value))]
    if overflowed:
        from emergence.theory.errors import DivergenceError

        raise DivergenceError(f"the predicted {', '.join(overflowed)} overflow (not finite) at s={args.steps}, "
                              f"eta={args.lr:g}; use a smaller --lr or --steps")
    V, T = corpus.vocabulary.size, corpus.context_length
    bounds = error_bounds(args.steps, args.lr, T, args.layers)
    limit = step_limit(args.lr, T, args.layers)
    conditions = size_conditions(V, T, args.layers)
    inside_steps = within_step_window(args.steps, args.lr, T, args.layers)
    inside = inside_steps and all(conditions.values())
    config = {**corpus_config(args), "steps": args.steps, "lr": args.lr, "layers": args.layers}
    record = {**provenance(config, args.seed if args.corpus == "synthetic" else None),
              "size_conditions": conditions, "steps_within_limit": inside_steps}
    write_npz_atomic(
        args.out,
        **weights,
        **{f"bound_{name}": np.float64(value) for name, value in bounds.items()},
        step_limit=np.float64(limit),
        within_window=np.bool_(inside),
        vocab=np.array(corpus.vocabulary.tokens, dtype=str),
        T=np.int64(T),
        N=np.int64(corpus.num_sequences),
        provenance=np.array(to_json_text(record)),
    )
    failed = [name for name, ok in conditions.items() if not ok]
    print(
        f"wrote W_O, V_l, W_l, P_l for s={args.steps}, eta={args.lr}, L={args.layers} "
        f"(V={V}, T={T}) to {args.out}; step limit {limit:.4g}; "
        + ("inside the theorem's window" if inside else
           "OUTSIDE the theorem's window (" + ", ".join(
               (["s > step limit"] if not inside_steps else []) + [f"not {n}" for n in failed]) + ")")
    )
    return 0
