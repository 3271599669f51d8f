"""Print the nearest tokens of each query, with scores, under bigram, interchangeability and context.

bigram: row of B (what follows the query); interchangeability: row of Sigma = B^T B
(tokens preceded by the same tokens; the query is part of its own list, as in the paper's
Fig. 5), optionally normalised (--normalize cosine|pmi, see
emergence.numerics.leading_terms.associations); context: row of Phi (tokens whose earlier
presence predicts the query).  Only tokens seen in that relation are listed.  A query that
is not a token of the vocabulary is reported on its own line and the others still print.
Output: a table, or with --json the object {query: {token, bigram: [...], interchangeability:
[...], context: [...], scores: {kind: [...]}}} ({query: {error}} for an unknown query); a JSON
file gets its provenance (configuration, versions, seed) beside it in PATH.provenance.json.
Tokens are shown readable (byte-level BPE tokens decoded to text).
"""

from __future__ import annotations

from pathlib import Path

from emergence.commands._corpus_arguments import add_corpus_arguments, corpus_and_statistics

NAME = "associate"
HELP = "nearest tokens of query words under the bigram, interchangeability and context statistics"


def add_arguments(parser):
    from emergence.commands._checks import integer, output_file

    add_corpus_arguments(parser)
    parser.add_argument("--query", nargs="+", required=True, metavar="WORD", help="query tokens")
    parser.add_argument("--top", type=integer(1), default=10, metavar="K", help="neighbours per statistic (default 10)")
    parser.add_argument("--normalize", default="none", choices=("none", "cosine", "pmi"),
                        help="interchangeability score: raw B^T B (none, default), cosine of columns of B, or "
                             "cosine of positive-PMI columns (pmi: frequent punctuation/function words do not dominate)")
    parser.add_argument("--json", default=None, type=output_file(".json", stdout=True), metavar="PATH|-",
                        help="write JSON to PATH, or '-' for stdout")


def query_token(corpus, word: str) -> str:
    """The vocabulary token a query word stands for, or :class:`EmergenceError` saying why none does.

    The word itself, or its single token under the corpus tokenizer (``Happy`` -> ``happy``
    under ``natural``), matched against the readable tokens with surrounding spaces ignored,
    so ``red`` finds the byte-level BPE token ``Ġred``; the most frequent match wins.
    """
    from emergence.base.errors import EmergenceError

    parts = corpus.tokenizer.split(word)
    candidates = {word.strip()} | ({corpus.tokenizer.readable(parts[0]).strip()} if len(parts) == 1 else set())
    for token, readable in zip(corpus.vocabulary.tokens, corpus.readable_tokens):
        if readable.strip() in candidates and readable.strip():
            return token
    if len(parts) != 1 and all(word.strip() != r.strip() for r in corpus.readable_tokens):
        raise EmergenceError(f"query {word!r} is not a single {corpus.tokenizer.name} token")
    raise EmergenceError(f"query {word!r} is not in the vocabulary")


def run(args) -> int:
    import sys

    from emergence.numerics.leading_terms.associations import (
        ASSOCIATION_KINDS,
        input_frequency,
        top_association_scores,
    )
    from emergence.base.io import provenance, to_json_text, write_json_atomic
    from emergence.base.errors import EmergenceError, InvalidSizeError

    if args.top < 1:
        raise InvalidSizeError(f"--top must be at least 1, got {args.top}")
    basis = corpus_and_statistics(args)
    corpus, stats = basis.corpus, basis.statistics
    tokens = corpus.vocabulary.tokens
    readable = dict(zip(tokens, corpus.readable_tokens))
    frequency = input_frequency(corpus.inputs, corpus.vocabulary.size)
    result: dict[str, dict] = {}
    for word in args.query:
        try:
            token = query_token(corpus, word)
        except EmergenceError as error:
            result[word] = {"error": str(error)}
            continue
        scores = top_association_scores(stats, tokens, token, args.top, args.normalize, frequency)
        entry: dict = {"token": readable[token]}
        entry.update({kind: [readable[t] for t, _ in pairs] for kind, pairs in scores.items()})
        entry["scores"] = {kind: [score for _, score in pairs] for kind, pairs in scores.items()}
        result[word] = entry
    if all("error" in entry for entry in result.values()):
        raise EmergenceError("; ".join(entry["error"] for entry in result.values()))
    if args.json is not None:
        config = {**basis.config, "query": list(args.query), "top": args.top, "normalize": args.normalize}
        if args.json == "-":
            sys.stdout.write(to_json_text(result))
        else:
            path = Path(args.json)
            write_json_atomic(path, result)
            sidecar = path.with_name(path.name + ".provenance.json")
            write_json_atomic(sidecar, provenance(config, args.seed if args.corpus == "synthetic" else None))
            print(f"wrote associations of {len(result)} queries to {path} (provenance in {sidecar})")
        return 0
    print(f"V={len(tokens)}, T={corpus.context_length}, N={corpus.num_sequences} windows; "
          f"interchangeability normalised: {args.normalize}; scores in brackets")
    for word, entry in result.items():
        if "error" in entry:
            print(f"\n{word}: {entry['error']}")
            continue
        print(f"\n{entry['token']!r}" if entry["token"] != word else f"\n{word}")
        for kind in ASSOCIATION_KINDS:
            listed = ", ".join(f"{t!r} ({s:.3g})" if t != t.strip() or not t else f"{t} ({s:.3g})"
                               for t, s in zip(entry[kind], entry["scores"][kind]))
            print(f"  {kind:<19} " + (listed or "(no token seen in this relation)"))
    return 0
