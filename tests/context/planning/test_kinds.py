"""Kinds: the shipped WordNet noun taxonomy, read the way passage recall reads it.

A question asking for a kind of thing ("which cities", "what martial arts", "favourite food")
must meet the words that name a member of it ("Rome", "taekwondo", "ginger snaps"); words that
are English function words, or short words not written in capitals ("us", "it"), name no kind.
The file itself is checked for shape: every hypernym is a synset of the file, every lemma's
senses are, and the WordNet licence travels with it.
"""

from __future__ import annotations

import gzip
import re

import pytest

from vak_desktop.context.planning.kinds import (
    MIN_DEPTH,
    SOURCE,
    answer_type,
    asked_kinds,
    asks_for_several,
    kinds_of,
    lemma,
    piece_kinds,
    question_kinds,
    taxonomy,
)
from vak_desktop.shipped import shipped


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("which cities has Jon visited?", "Took a short trip last week to Rome to clear my mind."),
        ("what is Evan's favorite food?", "Ginger snaps are my weakness."),
        ("what martial arts has John done?", "I'm off to do some taekwondo!"),
        ("in what country was Tim last week?", "I went to a castle during my trip to the UK."),
        ("what musical instruments does she play?", "I have been practising the violin."),
        ("which kind of animals did they adopt?", "We adopted a kitten from the shelter."),
    ],
)
def test_a_member_is_found_by_the_kind_asked_for(asked: str, said: str) -> None:
    assert set(question_kinds(words(asked))) & piece_kinds(words(said), said)


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("which cities has Jon visited?", "Ginger snaps are my weakness."),
        ("what food does he like?", "I went to a castle during my trip to the UK last Friday."),
        ("what martial arts has John done?", "Took a short trip last week to Rome."),
        # a noun that is the question's topic, not its answer's kind, asks for no kind
        ("what did he share after talking about snacks?", "Ginger snaps are my weakness."),
    ],
)
def test_a_member_of_another_kind_is_not(asked: str, said: str) -> None:
    assert not set(question_kinds(words(asked))) & piece_kinds(words(said), said)


def test_the_answer_type_is_the_phrase_after_what_which_or_favourite() -> None:
    assert answer_type(words("Which cities has Jon visited?")) == ["cities", ""]
    assert answer_type(words("What kind of healthy meals did Sam eat?")) == ["healthy", "meals", ""]
    assert answer_type(words("What is Evan's favorite food?")) == ["", "food", ""]
    assert answer_type(words("What did he offer after talking about snacks?")) == [""]


@pytest.mark.parametrize(
    ("question", "several"),
    [
        ("Which cities has Jon visited?", True),
        ("What martial arts has John done?", True),  # "arts": WordNet lists it, and "art"
        ("What kind of healthy meals did Sam eat?", True),
        ("How many video game tournaments has Nate played in?", True),
        ("Which city did Jon visit first?", False),
        ("What is Evan's favorite food?", False),
        ("What did he buy after talking about snacks?", False),  # a topic, not the answer's kind
        ("Which class did she join?", False),  # "class" ends in an s and is one
    ],
)
def test_a_question_asks_for_several_things_by_a_plural_kind_or_how_many(
    question: str, several: bool
) -> None:
    assert asks_for_several(words(question)) is several


def test_plurals_are_read_as_their_nouns() -> None:
    assert lemma("cities") == "city"
    assert lemma("children") == "child"  # irregular: from the file's noun.exc lines
    assert lemma("martial_arts") == "martial_art"
    assert lemma("ginger_snaps") == "ginger_snap"


def test_function_words_and_short_lower_case_words_name_no_kind() -> None:
    """WordNet has "us" (the United States) and "it" (information technology): read only when
    written in capitals, they are a country; in lower case, never a noun."""
    for word in ("us", "it", "the", "what", "can", "will"):
        assert kinds_of(word) == () and asked_kinds(word) == ()
    assert piece_kinds(["us"], "tell us") == set()
    assert piece_kinds(["us"], "back in the US") == piece_kinds([], "back in the US") != set()


def test_no_kind_is_nearer_the_root_than_the_floor() -> None:
    found = taxonomy()
    for term in (*kinds_of("rome"), *kinds_of("gingersnap"), *asked_kinds("thing")):
        assert found.depth[int(term[1:])] >= MIN_DEPTH


def test_the_shipped_file_is_whole_and_carries_its_licence() -> None:
    text = gzip.decompress(shipped(SOURCE).read_bytes()).decode("utf-8")
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in text
    found = taxonomy()
    count = len(found.depth)
    assert count > 80_000 and len(found.senses) > 100_000
    assert all(0 <= p < count for parents in found.parents for p in parents)
    assert all(0 <= s < count for senses in found.senses.values() for s in senses)
    assert all(plural_of in found.senses for plural_of in found.plurals.values())
