"""Predict every weight of an L-layer attention-only transformer after S steps (Theorem 4.1).

Writes W_O (V x V), V_l, W_l (L x V x V) and P_l (L x T) built from the corpus statistics
and the derived step coefficients, the theorem's Frobenius error bounds (bound_W_O,
bound_V, bound_W, bound_P), the step limit of its window, within_window (S <= step
limit and the size conditions T >= 60, V >= 500, L <= sqrt(T)/4; for one layer Theorem
D.7's window and T >= 3), vocab, T, N and provenance.
"""

from __future__ import annotations


from emergence.cli.commands._corpus_arguments import add_corpus_arguments, corpus_and_statistics

NAME = "predict-weights"
HELP = "closed-form leading-term weights W_O, V_l, W_l, P_l after S gradient steps (.npz)"


def add_arguments(parser):
    from emergence.cli.commands._checks import NPZ_FORMATS, integer, learning_rate, output_file

    add_corpus_arguments(parser)
    parser.add_argument("--steps", type=integer(0), required=True, metavar="S", help="number of gradient steps s")
    parser.add_argument("--lr", type=learning_rate, required=True, metavar="ETA", help="learning rate eta")
    parser.add_argument("--layers", type=integer(1), required=True, metavar="L", help="number of attention layers")
    parser.add_argument("--out", required=True, type=output_file(*NPZ_FORMATS), help="output .npz file")


def run(args) -> int:
    import numpy as np

    from emergence.api import predict_weights
    from emergence.base.io import provenance, to_json_text, write_npz_atomic

    basis = corpus_and_statistics(args, include_interchangeability=False)
    prediction = predict_weights(basis, args.steps, args.lr, args.layers)
    config = {**basis.config, "steps": args.steps, "lr": args.lr, "layers": args.layers}
    record = {**provenance(config, args.seed if args.corpus == "synthetic" else None),
              "size_conditions": prediction.size_conditions, "steps_within_limit": prediction.steps_within_limit}
    write_npz_atomic(
        args.out,
        **prediction.weights,
        **{f"bound_{name}": np.float64(value) for name, value in prediction.bounds.items()},
        step_limit=np.float64(prediction.step_limit),
        within_window=np.bool_(prediction.within_window),
        vocab=np.array(basis.tokens, dtype=str),
        T=np.int64(basis.T),
        N=np.int64(basis.N),
        provenance=np.array(to_json_text(record)),
    )
    failed = [name for name, ok in prediction.size_conditions.items() if not ok]
    print(
        f"wrote W_O, V_l, W_l, P_l for s={args.steps}, eta={args.lr}, L={args.layers} "
        f"(V={len(basis.tokens)}, T={basis.T}) to {args.out}; step limit {prediction.step_limit:.4g}; "
        + ("inside the theorem's window" if prediction.within_window else
           "OUTSIDE the theorem's window (" + ", ".join(
               (["s > step limit"] if not prediction.steps_within_limit else []) + [f"not {n}" for n in failed]) + ")")
    )
    return 0
