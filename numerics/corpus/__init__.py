"""Text corpora as token windows: documents, tokenizers, vocabulary, synthetic corpora.

:mod:`~emergence.numerics.corpus.documents` reads and windows a corpus;
:mod:`~emergence.numerics.corpus.tokenizers` and :mod:`~emergence.numerics.corpus.vocabulary`
turn text into token ids; :mod:`~emergence.numerics.corpus.stories` (the built-in story corpus
with planted associations) and :mod:`~emergence.numerics.corpus.markov` (Markov chains with a
known bigram statistic) are the synthetic sources.
"""
