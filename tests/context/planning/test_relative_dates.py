"""Relative times in a passage resolved against the day they were said (issue #22 item 2)."""

from __future__ import annotations

import pytest

from tests.context.sessions import SessionBuilder, TurnScript
from vak_desktop.context.payloads import Directive
from vak_desktop.context.planning.passages import passage_index, ranked_passages, select_passages
from vak_desktop.context.planning.relative_dates import resolve
from vak_desktop.ledger import Ledger

SUNDAY = "2023-01-29T14:00:00Z"  # Sun 29 January 2023


@pytest.mark.parametrize(
    ("said", "resolved"),
    [
        ("I went to Paris yesterday!", "yesterday = Sat 28 January 2023"),
        ("Tonight is the show", "tonight = Sun 29 January 2023"),
        ("see you tomorrow", "tomorrow = Mon 30 January 2023"),
        ("We moved last week.", "last week = the week before Sun 29 January 2023"),
        ("last Sunday we ate out", "last sunday = Sun 22 January 2023"),  # never the day itself
        ("next Monday I start", "next monday = Mon 30 January 2023"),
        ("It opened 3 days ago", "3 days ago = Thu 26 January 2023"),
        ("two weeks ago", "two weeks ago = the week of Sun 15 January 2023"),
        ("I quit five months ago", "five months ago = August 2022"),
        ("Last month was hard", "last month = December 2022"),
        ("we met a year ago", "a year ago = 2022"),
    ],
)
def test_each_relative_time_resolves_against_its_day(said: str, resolved: str) -> None:
    assert resolve(said, SUNDAY) == resolved


def test_nothing_is_guessed() -> None:
    assert resolve("a few days ago we talked", SUNDAY) == ""  # "a few" is no number
    assert resolve("yesterday", "") == "" and resolve("yesterday", "not a date") == ""
    assert resolve("Il est parti hier.", SUNDAY) == ""  # English only, nothing else guessed
    many = "yesterday, today, tomorrow, last week, last year"
    assert resolve(many, SUNDAY).count("=") == 3  # at most three a passage


def test_a_passage_shows_its_words_verbatim_then_what_they_resolve_to() -> None:
    """Before: "I've been to Paris yesterday!" reached the model under "Sun 29 January 2023"
    alone, and a 1.5B model answered "when did Jon go to Paris?" with the 29th (or 2026)."""
    ledger = Ledger.open(":memory:")
    session = SessionBuilder(ledger)
    head = session.append(Directive(text="Jon: Oh, I've been to Paris yesterday!", said_at=SUNDAY))
    session.turn_ids.append(head.id)
    session.turn(TurnScript("Jon: another day", answer="Gina: ok"))
    session.pending("When did Jon go to Paris?")
    found = passage_index(session.index())
    recalled = select_passages(
        found, ranked_passages(found, "When did Jon go to Paris?"), 200, 0.25
    )
    line = next(x for x in recalled.text.splitlines() if "Paris" in x)
    assert line.endswith("Jon: Oh, I've been to Paris yesterday! (yesterday = Sat 28 January 2023)")
