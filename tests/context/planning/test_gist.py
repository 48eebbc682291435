"""A card's gist keeps what a long turn says — names, numbers, dates, quoted strings, code — not
its first sentence (#22 item 3), on three styles of chat: two people's small talk, a coding
chat, and a tool-heavy turn whose card is built from a real ledger."""

from __future__ import annotations

from tests.context.sessions import Call, SessionBuilder, TurnScript
from vak_desktop.context.planning.gist import gist
from vak_desktop.context.planning.turn_cards import (
    LEAD_WORDS,
    asked_of,
    card_of,
    narration_of,
    render_card,
)
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.lexicons import lexicons

STOP = lexicons().stop_words(lexicons().languages).words

SMALL_TALK = (
    "Nadia: Thanks, Tomasz! That's so sweet of you, really. Haha yes, totally. "
    "Anyway, big news: I signed the lease for the flat on Kestrel Road on 14 March 2023, "
    "and the rent is 1,150 a month. My sister Ilse is moving in with me in April. "
    "Oh well, we'll see how it goes! How are you doing, by the way? "
    "Hope you're all well and the kids are good and everything is fine with you."
)
CODING = (
    "Hey, thanks so much, that's great! Sure, no problem at all. "
    "So the failure is in `parse_header()` in src/wire/http.py: it raises KeyError when the "
    "'Content-Length' header is missing, since commit 3f2a9c on 2024-02-11. "
    "Setting a default of 0 fixed it and tests/test_http.py passes, 42 tests. "
    "Let me know if there is anything else you would like me to look at, I am happy to help "
    "with whatever you need and it is really no trouble at all for me to do so."
)


def words_of(text: str) -> int:
    return len([w for w in text.split() if w != "…"])


def test_small_talk_keeps_the_names_dates_and_numbers_not_the_greeting() -> None:
    shown, kept = gist(SMALL_TALK, LEAD_WORDS, STOP)
    assert shown.startswith("Nadia: ")  # the speaker label stays in front
    for fact in ("Kestrel", "14 March 2023", "1,150", "Ilse", "April"):
        assert fact in shown, (fact, shown)
    assert "Thanks, Tomasz!" not in shown and "Haha" not in shown
    assert words_of(shown) == kept <= LEAD_WORDS + 1  # the budget, plus the speaker label
    old_lead = "Nadia: Thanks, Tomasz!"  # what the card showed before: its first sentence
    assert asked_of(SMALL_TALK, 0.25, STOP).startswith("Nadia: …")
    assert not asked_of(SMALL_TALK, 0.25, STOP).startswith(old_lead)


def test_a_coding_chat_keeps_identifiers_paths_and_the_commit() -> None:
    shown, _ = gist(CODING, 30, STOP)
    for fact in ("`parse_header()`", "src/wire/http.py", "KeyError", "3f2a9c", "2024-02-11"):
        assert fact in shown, (fact, shown)
    assert "thanks so much" not in shown and "happy to help" not in shown


def test_the_gist_keeps_the_order_the_text_was_written_in() -> None:
    shown, _ = gist(CODING, 45, STOP)
    assert shown.index("parse_header") < shown.index("42 tests")
    sentences = [s for s in shown.split(" … ") if s.strip("… ")]
    positions = [CODING.index(s.strip("… ").split()[0]) for s in sentences]
    assert positions == sorted(positions)


def test_the_gist_is_deterministic_and_within_its_budget() -> None:
    for text in (SMALL_TALK, CODING, "word " * 500, "Hi! " * 100):
        first = narration_of(text, STOP)
        assert first == narration_of(text, STOP)
        assert words_of(first.rsplit(" (+", 1)[0]) <= LEAD_WORDS + 1


def test_a_sentence_longer_than_the_budget_shows_its_most_salient_run() -> None:
    text = " ".join(["plain"] * 80 + ["ticket", "INC-20931", "closed", "2025-06-30"] + ["x"] * 80)
    shown, kept = gist(text, 10, STOP)
    assert "INC-20931" in shown and "2025-06-30" in shown
    assert kept == 10 and shown.startswith("…") and shown.endswith("…")


def test_a_text_of_nothing_but_fillers_is_still_shown() -> None:
    shown, kept = gist("Hi! Thanks! Okay. Great, thanks again! " * 10, 8, STOP)
    assert kept and shown.strip("… ")


def test_a_tool_heavy_turn_card_keeps_the_answer_s_findings(ledger: Ledger) -> None:
    answer = (
        "Great question, happy to look into this for you! Okay, so here is what I found. "
        "I searched the logs and read the config. The job failed at 03:14 on 2025-11-02 "
        "because /etc/backup/rsync.conf points at host nas-7, which was renamed to nas-07. "
        "I hope this helps, and let me know if you need anything else at all, I am always "
        "happy to help you with these kinds of questions whenever you need."
    )
    builder = SessionBuilder(ledger)
    builder.turn(
        TurnScript(
            "why did the backup fail last night?",
            (
                (Call("grep", {"pattern": "backup"}, "backup.log: error 23"),),
                (Call("read", {"path": "/etc/backup/rsync.conf"}, "host = nas-7"),),
            ),
            answer,
        )
    )
    turn = builder.index().turns[0]
    card = card_of(turn, 0.25)
    narration = card.answered.narration
    for fact in ("03:14", "2025-11-02", "/etc/backup/rsync.conf", "nas-7", "nas-07"):
        assert fact in narration, (fact, narration)
    assert not narration.startswith("Great question")
    rendered = render_card(card, 1)
    assert rendered.count("  did: ") == 2 and "[evidence:" in rendered


def test_a_long_ask_shown_whole_says_no_words_are_left_out() -> None:
    """An ask over the verbatim size whose gist keeps every word: no "(+0 words)"."""
    ask = "Nadia: " + " ".join(f"Kestrel{n}" for n in range(30))  # long in tokens, 31 words
    shown = asked_of(ask, 0.5, STOP)
    assert "(+" not in shown and shown.endswith("Kestrel29")
