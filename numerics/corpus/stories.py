r"""A deterministic children's-story corpus with planted token associations.

Each story is one paragraph drawn from a small grammar.  Three kinds of association are
planted, and recorded as data in :data:`PLANTED_ASSOCIATIONS` so tests and demos can check
that the corpus statistics recover them:

- ``bigram``: every planted adjective is always followed by one of its own nouns, and no
  noun follows another planted adjective, so the row of \bar B of the adjective puts all
  its positive mass on those nouns;
- ``context``: every story has one animal and that animal's habitat, both mentioned
  several times, so the animal's row of \bar\Phi favours its habitat among the habitats;
- ``interchangeable``: names, pronouns and feelings are drawn uniformly in the same slots,
  so they are preceded by the same tokens and are each other's neighbours in
  \Sigma_{\bar B} = \bar B^\top\bar B.

Randomness comes from :class:`random.Random` seeded by the caller, so the text is the same
on every machine.

>>> story_corpus(2, seed=0) == story_corpus(2, seed=0)
True
>>> story_corpus(3, seed=1).count("\n\n")
2
"""

from __future__ import annotations

import random

from emergence.base.errors import InvalidSizeError

ADJECTIVE_NOUNS: dict[str, tuple[str, ...]] = {
    "red": ("ball", "apple", "car"),
    "shiny": ("coin", "star", "key"),
    "soft": ("pillow", "blanket", "hat"),
    "sweet": ("cake", "cookie", "candy"),
    "blue": ("kite", "boat", "cup"),
}
ANIMAL_HABITATS: dict[str, str] = {
    "fish": "pond",
    "bird": "nest",
    "bunny": "garden",
    "bear": "cave",
    "duck": "lake",
    "frog": "river",
}
NAMES: tuple[str, ...] = ("lily", "tom", "mia", "ben", "sue", "max")
PRONOUNS: tuple[str, ...] = ("he", "she")
FEELINGS: tuple[str, ...] = ("happy", "sad", "excited", "scared", "proud")

PLANTED_ASSOCIATIONS: dict[str, dict] = {
    "bigram": {adjective: nouns for adjective, nouns in ADJECTIVE_NOUNS.items()},
    "context": {animal: (habitat,) for animal, habitat in ANIMAL_HABITATS.items()},
    "interchangeable": {"names": NAMES, "pronouns": PRONOUNS, "feelings": FEELINGS},
}
"""Planted associations: adjective -> its nouns (bigram), animal -> its habitat (context),
groups of interchangeable tokens (interchangeability)."""

_OPENING = "once upon a time , there was a little {animal} named {name} . {name} lived by the {habitat} ."
_EVENTS = (
    "one day , {pronoun} found a {adjective} {noun} near the {habitat} .",
    "{name} gave the {adjective} {noun} to {friend} .",
    '{friend} said , " i like your {adjective} {noun} ! "',
    "the {animal} felt {feeling} .",
    "{pronoun} played with the {adjective} {noun} all day .",
    "{name} and {friend} went to the {habitat} .",
    "the {animal} saw a {adjective} {noun} and felt {feeling} .",
    "{friend} and {name} were {feeling} at the {habitat} .",
)
_CLOSING = "at night , the {animal} went back to the {habitat} and felt {feeling} ."


def _story(rng: random.Random, events: int) -> str:
    animal = rng.choice(sorted(ANIMAL_HABITATS))
    name = rng.choice(NAMES)
    slots = {"animal": animal, "habitat": ANIMAL_HABITATS[animal], "name": name}
    sentences = [_OPENING.format(**slots)]
    for _ in range(events):
        adjective = rng.choice(sorted(ADJECTIVE_NOUNS))
        sentences.append(
            rng.choice(_EVENTS).format(
                **slots,
                pronoun=rng.choice(PRONOUNS),
                adjective=adjective,
                noun=rng.choice(ADJECTIVE_NOUNS[adjective]),
                friend=rng.choice([n for n in NAMES if n != name]),
                feeling=rng.choice(FEELINGS),
            )
        )
    sentences.append(_CLOSING.format(**slots, feeling=rng.choice(FEELINGS)))
    return " ".join(sentences)


def story_corpus(stories: int, seed: int = 0, events: tuple[int, int] = (8, 14)) -> str:
    """``stories`` stories separated by blank lines; each has a random number of events in ``events``.

    A story has at least 8 events (about 100 natural tokens), so windows of T + 1 = 65
    tokens fit every story at the default.
    """
    if stories < 1:
        raise InvalidSizeError(f"number of stories must be at least 1, got {stories}")
    rng = random.Random(seed)
    low, high = events
    return "\n\n".join(_story(rng, rng.randint(low, high)) for _ in range(stories)) + "\n"
