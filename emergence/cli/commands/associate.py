"""Print the nearest tokens of each query, with scores, under bigram, interchangeability and context.

bigram: row of B (what follows the query); interchangeability: row of Sigma = B^T B
(tokens preceded by the same tokens; the query is part of its own list, as in the paper's
Fig. 5, and first under --normalize cosine|pmi, which list only tokens seen at least
--min-count times as targets; see emergence.numerics.leading_terms.associations); context: row of Phi (tokens whose earlier
presence predicts the query).  Only tokens seen in that relation are listed.  A query that
is not a token of the vocabulary is reported on its own line and the others still print.
Output: a table, or with --json the object {query: {token, bigram: [...], interchangeability:
[...], context: [...], scores: {kind: [...]}}} ({query: {error}} for an unknown query); a JSON
file gets its provenance (configuration, versions, seed) beside it in PATH.provenance.json.
Tokens are shown readable (byte-level BPE tokens decoded to text), with the tokenizer's spelling
in angle brackets where the readable form is ambiguous (byte fragments).
"""

from __future__ import annotations

from pathlib import Path

from emergence.cli.commands._corpus_arguments import add_corpus_arguments, corpus_options

NAME = "associate"
HELP = "nearest tokens of query words under the bigram, interchangeability and context statistics"


def add_arguments(parser):
    from emergence.cli.commands._checks import integer, output_file
    from emergence.numerics.leading_terms.associations import DEFAULT_MIN_COUNT

    add_corpus_arguments(parser)
    parser.add_argument("--query", nargs="+", required=True, metavar="WORD", help="query tokens")
    parser.add_argument("--top", type=integer(1), default=10, metavar="K", help="neighbours per statistic (default 10)")
    parser.add_argument("--normalize", default="none", choices=("none", "cosine", "pmi"),
                        help="interchangeability score: raw B^T B (none, default), cosine of columns of B, or "
                             "cosine of positive-PMI columns (pmi: frequent punctuation/function words do not dominate)")
    parser.add_argument("--min-count", type=integer(1), default=DEFAULT_MIN_COUNT, dest="min_count", metavar="M",
                        help=f"under cosine and pmi, list only tokens seen at least M times as a target (default "
                             f"{DEFAULT_MIN_COUNT}): rarer ones score 1.0 on one or two bigrams; the query is always first")
    parser.add_argument("--json", default=None, type=output_file(".json", stdout=True), metavar="PATH|-",
                        help="write JSON to PATH, or '-' for stdout")


def _listed(tokens, scores) -> str:
    """``token (score)`` pairs, a token with surrounding spaces (or empty) in quotes."""
    return ", ".join(f"{t!r} ({s:.3g})" if t != t.strip() or not t else f"{t} ({s:.3g})" for t, s in zip(tokens, scores))


def _print_entry(word: str, entry: dict) -> None:
    from emergence.numerics.leading_terms.associations import ASSOCIATION_KINDS

    if "error" in entry:
        print(f"\n{word}: {entry['error']}")
        return
    print(f"\n{entry['token']!r}" if entry["token"] != word else f"\n{word}")
    for kind in ASSOCIATION_KINDS:
        print(f"  {kind:<19} " + (_listed(entry[kind], entry["scores"][kind]) or "(no token seen in this relation)"))


def _write_json(record, target: str) -> None:
    import sys

    from emergence.base.io import to_json_text, write_json_atomic

    if target == "-":
        sys.stdout.write(to_json_text(record.queries))
        return
    path = Path(target)
    write_json_atomic(path, record.queries)
    sidecar = path.with_name(path.name + ".provenance.json")
    write_json_atomic(sidecar, record.provenance)
    print(f"wrote associations of {len(record.queries)} queries to {path} (provenance in {sidecar})")


def _unknown_queries(error, queries) -> str | None:
    """On a corpus too short for one window: the causes, joined, when no query is a token of its vocabulary."""
    from emergence.base.errors import EmergenceError
    from emergence.numerics.corpus.queries import query_token

    if error.vocabulary is None:
        return None
    causes = []
    for word in queries:
        try:
            query_token(error, word)
        except EmergenceError as cause:
            causes.append(str(cause))
    return "; ".join(causes) if len(causes) == len(queries) else None


def run(args) -> int:
    from emergence.api import associate
    from emergence.base.errors import EmergenceError
    from emergence.numerics.corpus.documents import CorpusTooShortError

    try:
        record = associate(args.corpus, args.query, top=args.top, normalize=args.normalize,
                           min_count=args.min_count, **corpus_options(args))
    except CorpusTooShortError as error:  # an unknown word is the first thing to fix, before the window length
        unknown = _unknown_queries(error, args.query)
        if unknown is None:
            raise
        raise EmergenceError(unknown) from None
    if args.json is not None:
        _write_json(record, args.json)
        return 0
    minimum = f" (tokens seen at least {args.min_count} times as targets)" if args.normalize != "none" else ""
    print(f"V={record.V}, T={record.T}, N={record.N} windows; "
          f"interchangeability normalised: {args.normalize}{minimum}; scores in brackets")
    for word, entry in record.queries.items():
        _print_entry(word, entry)
    return 0
