"""Compute the leading-term corpus statistics of a text corpus and write them to an .npz file.

Arrays: B (bigram, V x V), Sigma (interchangeability B^T B), Phi (context), G (Sigma Phi),
Q (key-query), Delta (positional, length T), vocab (tokens in index order, readable and unique: a
byte-level BPE token is decoded to its text, a byte fragment shown as '\ufffd⟨raw⟩'), vocab_raw (the
tokenizer's own spelling), T, N (number
of windows), and provenance (JSON text: configuration, versions, seed, and the measured
seconds, tokens per second and peak resident memory of the run).  --stream reads the file
in blocks and accumulates the statistics chunk by chunk (the in-memory results up to the rounding
of the chunked sums: see docs/leading_terms.md).
"""

from __future__ import annotations


from emergence.cli.commands._corpus_arguments import add_corpus_arguments, corpus_and_statistics

NAME = "basis"
HELP = "corpus statistics B, Sigma, Phi, G, Q, Delta of the leading-term theory (.npz)"


def add_arguments(parser):
    from emergence.cli.commands._checks import NPZ_FORMATS, output_file

    add_corpus_arguments(parser)
    parser.add_argument("--stream", action="store_true",
                        help="read the corpus file in blocks and the windows in chunks (corpora larger than memory)")
    parser.add_argument("--save-tokenizer", default=None, type=output_file(".json"), dest="save_tokenizer",
                        metavar="PATH", help="also write the subword tokenizer (e.g. the trained BPE) as tokenizer.json "
                                             "to PATH, to train or compare checkpoints with the same tokens")
    parser.add_argument("--out", required=True, type=output_file(*NPZ_FORMATS), help="output .npz file")


def run(args) -> int:
    import resource
    import time

    import numpy as np

    from emergence.base.io import to_json_text, write_npz_atomic
    from emergence.base.errors import EmergenceError

    if args.save_tokenizer is not None and args.tokenizer in ("natural", "whitespace"):
        raise EmergenceError("--save-tokenizer writes a subword tokenizer; use --tokenizer bpe or a tokenizer.json")
    started = time.perf_counter()
    basis = corpus_and_statistics(args)
    seconds = time.perf_counter() - started
    tokens = basis.N * basis.T
    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 2**30  # ru_maxrss is in KiB on Linux
    measured = {"seconds": seconds, "tokens": tokens, "tokens_per_second": tokens / seconds, "peak_rss_gib": peak_gib}
    write_npz_atomic(
        args.out,
        **basis.arrays(),
        vocab=np.array(basis.tokens, dtype=str),
        vocab_raw=np.array(basis.corpus.vocabulary.tokens, dtype=str),
        T=np.int64(basis.T),
        N=np.int64(basis.N),
        provenance=np.array(to_json_text({**basis.provenance, "measured": measured})),
    )
    print(
        f"wrote B, Sigma, Phi, G, Q, Delta for V={len(basis.tokens)}, T={basis.T}, N={basis.N} windows "
        f"({basis.details['documents_used']} of {basis.details['documents_total']} documents) to {args.out}"
    )
    if args.save_tokenizer is not None:
        from emergence.base.io import atomic_path

        with atomic_path(args.save_tokenizer) as temporary:
            basis.corpus.tokenizer.save(temporary)
        print(f"wrote the tokenizer to {args.save_tokenizer}")
    print(f"measured: {tokens} window tokens in {seconds:.3g} s ({tokens / seconds:.3g} tokens/s, tokenizing included), "
          f"peak resident memory {peak_gib:.2f} GiB")
    return 0
