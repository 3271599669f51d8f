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

from emergence.commands._corpus_arguments import add_corpus_arguments, corpus_and_statistics

NAME = "associate"
HELP = "nearest tokens of query words under the bigram, interchangeability and context statistics"


def add_arguments(parser):
    from emergence.commands._checks import integer, output_file
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


def query_token(corpus, word: str) -> str:
    """The vocabulary token a query word stands for, or :class:`EmergenceError` giving the true cause.

    A vocabulary token whose readable form, surrounding spaces ignored, is the word or a single
    token of the word (or of `` word``) under the corpus tokenizer (``Happy`` -> ``happy`` under
    ``natural``; ``red`` -> ``Ġred`` under a byte-level BPE); the most frequent match wins.
    Otherwise the error says which cause applies: the word is a single token that never occurs
    in the corpus, or one that occurs but is not among the K tokens kept (``--vocab``; its count
    and rank are given), or it is no single token at all (its pieces are named).
    """
    from emergence.base.errors import EmergenceError
    from emergence.numerics.corpus.vocabulary import UNKNOWN_TOKEN

    tokenizer, vocabulary, text = corpus.tokenizer, corpus.vocabulary, word.strip()
    singles = list(dict.fromkeys(parts[0] for parts in map(tokenizer.split, (text, " " + text)) if len(parts) == 1))
    candidates = ({text} | {tokenizer.readable(token).strip() for token in singles}) - {""}
    for token in vocabulary.tokens:
        if token != UNKNOWN_TOKEN and tokenizer.readable(token).strip() in candidates:
            return token
    seen = sorted((token for token in singles if vocabulary.counts.get(token, 0) > 0), key=vocabulary.counts.get,
                  reverse=True)
    if seen:
        token, count = seen[0], vocabulary.counts[seen[0]]
        rank = 1 + sum(other > count for other in vocabulary.counts.values())  # first rank its count can have
        raise EmergenceError(f"query {word!r} is the {tokenizer.name} token {tokenizer.readable(token)!r}, seen "
                             f"{count} times (frequency rank {rank} or later): outside the K={vocabulary.kept} most "
                             "frequent tokens kept (--vocab)")
    if singles:
        raise EmergenceError(f"query {word!r} is a single {tokenizer.name} token but never occurs in the corpus")
    pieces = ", ".join(repr(tokenizer.readable(token)) for token in tokenizer.split(text))
    raise EmergenceError(f"query {word!r} is not a single {tokenizer.name} token (it splits into {pieces or 'nothing'})")


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
        scores = top_association_scores(stats, tokens, token, args.top, args.normalize, frequency, args.min_count)
        entry: dict = {"token": readable[token]}
        entry.update({kind: [readable[t] for t, _ in pairs] for kind, pairs in scores.items()})
        entry["scores"] = {kind: [score for _, score in pairs] for kind, pairs in scores.items()}
        result[word] = entry
    if all("error" in entry for entry in result.values()):
        raise EmergenceError("; ".join(entry["error"] for entry in result.values()))
    if args.json is not None:
        config = {**basis.config, "query": list(args.query), "top": args.top, "normalize": args.normalize,
                  "min_count": args.min_count}
        if args.json == "-":
            sys.stdout.write(to_json_text(result))
        else:
            path = Path(args.json)
            write_json_atomic(path, result)
            sidecar = path.with_name(path.name + ".provenance.json")
            write_json_atomic(sidecar, provenance(config, args.seed if args.corpus == "synthetic" else None))
            print(f"wrote associations of {len(result)} queries to {path} (provenance in {sidecar})")
        return 0
    minimum = f" (tokens seen at least {args.min_count} times as targets)" if args.normalize != "none" else ""
    print(f"V={len(tokens)}, T={corpus.context_length}, N={corpus.num_sequences} windows; "
          f"interchangeability normalised: {args.normalize}{minimum}; scores in brackets")
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
