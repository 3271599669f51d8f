"""The built-in story corpus is deterministic and its planted associations are recovered."""

import numpy as np
import pytest

from emergence.numerics.leading_terms.associations import top_associations
from emergence.numerics.leading_terms.basis_statistics import basis_statistics
from emergence.numerics.corpus.documents import load_corpus
from emergence.numerics.corpus.stories import ANIMAL_HABITATS, PLANTED_ASSOCIATIONS, story_corpus


def test_story_corpus_is_deterministic_and_seeded():
    assert story_corpus(20, seed=3) == story_corpus(20, seed=3)
    assert story_corpus(20, seed=3) != story_corpus(20, seed=4)


@pytest.fixture(scope="module")
def story_statistics():
    corpus = load_corpus("synthetic", context_length=64, seed=0)
    return corpus.vocabulary.tokens, basis_statistics(corpus.sequences, corpus.vocabulary.size)


def test_planted_bigrams_are_the_top_of_each_adjective_row(story_statistics):
    tokens, stats = story_statistics
    for adjective, nouns in PLANTED_ASSOCIATIONS["bigram"].items():
        assert set(top_associations(stats, tokens, adjective, len(nouns))["bigram"]) == set(nouns)


def test_each_animal_row_of_phi_prefers_its_habitat(story_statistics):
    tokens, stats = story_statistics
    index = {t: i for i, t in enumerate(tokens)}
    habitats = sorted(set(ANIMAL_HABITATS.values()))
    for animal, (habitat,) in PLANTED_ASSOCIATIONS["context"].items():
        row = stats.context[index[animal]]
        assert max(habitats, key=lambda h: row[index[h]]) == habitat
        assert habitat in top_associations(stats, tokens, animal, 3)["context"]


def test_interchangeable_groups_are_each_others_neighbours(story_statistics):
    tokens, stats = story_statistics
    for group in PLANTED_ASSOCIATIONS["interchangeable"].values():
        for member in group:
            neighbours = top_associations(stats, tokens, member, len(group) + 3)["interchangeability"]
            assert set(group) <= set(neighbours), (member, neighbours)  # the query is in its own list


def test_every_story_fits_a_default_window():
    corpus = load_corpus("synthetic", context_length=64, windows="first", oov="drop", seed=1)
    assert corpus.documents_used == corpus.documents_total
    assert np.all(corpus.sequences < corpus.vocabulary.size)
