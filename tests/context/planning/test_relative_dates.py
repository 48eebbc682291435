"""Relative times in a passage resolved against the day they were said (issue #22 item 2)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.context.sessions import SessionBuilder, TurnScript
from vak_desktop.context.planning.dates import days_named, months_named
from vak_desktop.context.planning.passages import passage_index, ranked_passages, select_passages
from vak_desktop.context.planning.relative_dates import ADDED, annotate, asks_when, says_when
from vak_desktop.ledger import Ledger

SUNDAY = "2023-01-29T14:00:00Z"  # Sun 29 January 2023


@pytest.mark.parametrize(
    ("said", "resolved"),
    [
        ("I went to Paris yesterday!", "I went to Paris yesterday (= Sat 28 January 2023)!"),
        ("Tonight is the show", "Tonight (= Sun 29 January 2023) is the show"),
        ("see you tomorrow", "see you tomorrow (= Mon 30 January 2023)"),
        ("We moved last week.", "We moved last week (= the week before Sun 29 January 2023)."),
        # never the day itself:
        ("last Sunday we ate out", "last Sunday (= Sun 22 January 2023) we ate out"),
        ("next Monday I start", "next Monday (= Mon 30 January 2023) I start"),
        ("It opened 3 days ago", "It opened 3 days ago (= Thu 26 January 2023)"),
        ("two weeks ago", "two weeks ago (= the week of Sun 15 January 2023)"),
        ("I quit five months ago", "I quit five months ago (= August 2022)"),
        ("Last month was hard", "Last month (= December 2022) was hard"),
        ("we met a year ago", "we met a year ago (= 2022)"),
        # forward, and "this" (LoCoMo conv-42: "a gaming party two weekends later", said on
        # a Friday, answered "two weekends later"):
        (
            "a party two weekends later",
            "a party two weekends later (= the weekend of Sat 11 February 2023)",
        ),
        ("back in 3 days", "back in 3 days (= Wed 1 February 2023)"),
        ("due a week from now", "due a week from now (= the week of Sun 5 February 2023)"),
        ("two months later we wed", "two months later (= March 2023) we wed"),
        ("in two years", "in two years (= 2025)"),
        ("this weekend we hike", "this weekend (= the weekend of Sat 28 January 2023) we hike"),
        ("this Friday", "this Friday (= Fri 3 February 2023)"),
        ("this month is busy", "this month (= January 2023) is busy"),
    ],
)
def test_each_relative_time_resolves_where_it_is_said(said: str, resolved: str) -> None:
    assert annotate(said, SUNDAY) == resolved
    assert ADDED.sub("", resolved) == said  # what was added, and only that, can be read past


def test_nothing_is_guessed() -> None:
    for text in ("a few days ago we talked", "Il est parti hier."):  # no number; not English
        assert annotate(text, SUNDAY) == text
    assert annotate("yesterday", "") == "yesterday" == annotate("yesterday", "not a date")
    many = "yesterday, today, tomorrow, last week, last year, and yesterday again"
    assert annotate(many, SUNDAY).count("(=") == 3  # at most three a passage, each once


def test_a_passage_shows_what_its_words_resolve_to_where_they_are_said() -> None:
    """Before: "I've been to Paris yesterday!" reached the model under "Sun 29 January 2023"
    alone, and a 1.5B model answered "when did Jon go to Paris?" with the 29th (or 2026);
    with the day after the passage, it still copied the words beside the event."""
    ledger = Ledger.open(":memory:")
    session = SessionBuilder(ledger)
    session.said("Jon: Oh, I've been to Paris yesterday!", SUNDAY)
    session.turn(TurnScript("Jon: another day", answer="Gina: ok"))
    session.pending("When did Jon go to Paris?")
    found = passage_index(session.index())
    recalled = select_passages(
        found, ranked_passages(found, "When did Jon go to Paris?"), 200, 0.25
    )
    line = next(x for x in recalled.text.splitlines() if "Paris" in x)
    assert line.endswith("Jon: Oh, I've been to Paris yesterday (= Sat 28 January 2023)!")


def test_a_question_asking_when_favours_the_passage_that_says_when() -> None:
    """Two utterances hold the question's words alike; the one that says when it happened
    ("last Sunday") is what a "When did …?" question asks for. A question that only holds the word
    "when" ("… to do when he comes over?") asks for no time."""
    assert asks_when("Answer in a few words: When did Andrew go rock climbing?")
    assert asks_when("What date was the concert?") and asks_when("How long ago did Jon move?")
    assert not asks_when("What does Nate want to do when he comes over?")
    assert says_when("I went last Sunday") and says_when("It was on 3 May 2023.")
    assert says_when("Back in November 2023, we moved.") and not says_when("I went climbing.")
    ledger = Ledger.open(":memory:")
    session = SessionBuilder(ledger)
    for text in (
        "Andrew: I went rock climbing last Sunday with my friends, it was a blast!",
        "Audrey: Andrew, rock climbing with your friends sounds great, it is a blast!",
    ):
        session.said(text, SUNDAY)
    session.turn(TurnScript("Andrew: ok", answer="Audrey: ok"))
    question = "When did Andrew go rock climbing?"
    session.pending(question)
    found = passage_index(session.index())
    best, _ = ranked_passages(found, question)[0]
    assert "last Sunday" in found.store.pieces[best].text


_SAID = (
    "yesterday", "Today", "tonight", "tomorrow", "this morning", "last", "next", "this", "week",
    "weekend", "month", "year", "Friday", "sunday", "3", "two", "a couple of", "days", "weeks",
    "ago", "later", "from now", "in", "on", "13", "October", "2023", "2023-10-13", "we", "went",
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_SAID), max_size=8))
def test_says_when_misses_no_time_that_annotate_resolves_or_a_date_names(said: list[str]) -> None:
    text = " ".join(said)
    if annotate(text, SUNDAY) != text or days_named(text) or months_named(text):
        assert says_when(text)
