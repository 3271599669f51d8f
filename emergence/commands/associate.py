"""Print the nearest tokens of each query under bigram, interchangeability and context.

bigram: row of B (what follows the query); interchangeability: row of Sigma = B^T B
(tokens preceded by the same tokens); context: row of Phi (tokens whose earlier presence
predicts the query).  Output: a table, or with --json the object
{query: {bigram: [...], interchangeability: [...], context: [...]}}; a JSON file gets
its provenance (configuration, versions, seed) beside it in PATH.provenance.json.
"""

from __future__ import annotations

from pathlib import Path

from emergence.commands._corpus_arguments import add_corpus_arguments, corpus_and_statistics, corpus_config

NAME = "associate"
HELP = "nearest tokens of query words under the bigram, interchangeability and context statistics"


def add_arguments(parser):
    from emergence.commands._checks import integer, output_file

    add_corpus_arguments(parser)
    parser.add_argument("--query", nargs="+", required=True, metavar="WORD", help="query tokens")
    parser.add_argument("--top", type=integer(1), default=10, metavar="K", help="neighbours per statistic (default 10)")
    parser.add_argument("--json", default=None, type=output_file(".json", stdout=True), metavar="PATH|-", help="write JSON to PATH, or '-' for stdout")


def _query_tokens(args) -> list[str]:
    from emergence.numerics.corpus.tokenizers import tokenizer
    from emergence.theory.errors import EmergenceError

    split = tokenizer(args.tokenizer)
    tokens = []
    for word in args.query:
        parts = split(word)
        if len(parts) != 1:
            raise EmergenceError(f"query {word!r} is not a single {args.tokenizer} token")
        tokens.append(parts[0])
    return tokens


def run(args) -> int:
    import sys

    from emergence.numerics.leading_terms.associations import ASSOCIATION_KINDS, top_association_scores
    from emergence.numerics.io import provenance, to_json_text, write_json_atomic
    from emergence.theory.errors import InvalidSizeError

    if args.top < 1:
        raise InvalidSizeError(f"--top must be at least 1, got {args.top}")
    queries = _query_tokens(args)
    corpus, stats = corpus_and_statistics(args)
    tokens = corpus.vocabulary.tokens
    scores = {q: top_association_scores(stats, tokens, q, args.top) for q in queries}
    result = {q: {kind: [t for t, _ in pairs] for kind, pairs in kinds.items()} for q, kinds in scores.items()}
    if args.json is not None:
        config = {**corpus_config(args), "query": queries, "top": args.top}
        if args.json == "-":
            sys.stdout.write(to_json_text(result))
        else:
            path = Path(args.json)
            write_json_atomic(path, result)
            sidecar = path.with_name(path.name + ".provenance.json")
            write_json_atomic(sidecar, provenance(config, args.seed if args.corpus == "synthetic" else None))
            print(f"wrote associations of {len(queries)} queries to {path} (provenance in {sidecar})")
        return 0
    print(f"V={len(tokens)}, T={corpus.context_length}, N={corpus.num_sequences} windows")
    for query, kinds in scores.items():
        print(f"\n{query}")
        for kind in ASSOCIATION_KINDS:
            print(f"  {kind:<19} " + ", ".join(token for token, _ in kinds[kind]))
    return 0
