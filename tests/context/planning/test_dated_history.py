"""Time in the request: today's date said as such, the history dated by the day it was said,
and a packet that shows content and names its evidence ids (issue #22 items 2 and 6)."""

from __future__ import annotations

import re

from tests.context.sessions import Call, SessionBuilder, TurnScript, profile
from vak_desktop.context.capacity.profile import tokens_per_char
from vak_desktop.context.payloads import Directive
from vak_desktop.context.planning.assemble import TailContext, assemble, plan_request
from vak_desktop.context.planning.turn_cards import card_of, render_card
from vak_desktop.context.planning.turns import Turn
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.lexicons import lexicons

CLOCK = TailContext(utc="2026-12-01T10:00:00Z", local="2026-12-01 11:00 (Tuesday)", timezone="CET")


def request_for(builder: SessionBuilder, horizon: int, question: str) -> tuple[str, str]:
    builder.pending(question)
    index = builder.index()
    capacity = profile(horizon, output_reserve=256)
    plan, tail = plan_request(
        index, capacity, index.turns[-1], system="S", tools=(), tail_context=CLOCK,
        lexicons=lexicons(),
    )  # fmt: skip
    built = assemble(
        index, plan, index.turns[-1], system="S", tools=(), tail=tail,
        ratio=tokens_per_char(capacity),
    )  # fmt: skip
    *earlier, tail, directive = built.messages[1:]
    assert directive.content == question  # the user's words come last, alone
    return "\n".join(m.content for m in earlier), tail.content


def test_today_is_said_as_such_and_the_turns_keep_their_own_day() -> None:
    builder = SessionBuilder(Ledger.open(":memory:"))
    said = Directive(text="We met last Saturday at the lake.", said_at="2023-05-08T13:56:00Z")
    head = builder.append(said)
    builder.turn_ids.append(head.id)
    builder.turn(TurnScript("and then?", answer="ok"))
    history, current = request_for(builder, 4_000, "when did we meet at the lake?")
    assert current.startswith("(Today's date: 2026-12-01 11:00 (Tuesday)")
    assert "Earlier turns are dated by the day they were said." in current
    # a whole turn's day, and its relative time resolved where it is said:
    assert "[Mon 8 May 2023] We met last Saturday (= Sat 6 May 2023) at the lake." in history
    card = card_of(Turn(head.id, 0, said, (), said_at=said.said_at), 0.25)
    assert render_card(card, 1).startswith("Turn 1 (interrupted, Mon 8 May 2023) — asked:")


def notes(turns: int) -> SessionBuilder:
    builder = SessionBuilder(Ledger.open(":memory:"))
    for n in range(turns):
        call = Call("read", {"path": f"notes{n}.md"}, f"note {n}: " + "words and more words " * 40)
        builder.turn(TurnScript(f"read notes{n}.md please", steps=((call,),), answer="Read."))
    return builder


def test_a_packet_shows_lines_while_it_has_room_and_always_names_evidence_ids() -> None:
    """Before: a packet whose every line did not fit was a list of numbers with no evidence id
    ("Also covered, by number: turns 1–36, …"); now it lists the lines that fit, the others by
    stretch (what they name, never a bare list of numbers), and names the evidence ids of the
    newest turns it does not list."""
    history, _ = request_for(notes(160), 3_000, "what was in the notes?")
    packet = history[history.index("<context_summary") :]
    assert "Some of the other covered turns, one line each:" in packet
    # dated lines, with their ids
    assert re.search(r"^- Turn \d+ \(\w{3} \d+ \w+ \d{4}\): ", packet, re.M)
    assert "— evidence: " in packet
    assert "Also covered, by number" not in packet  # the rest by stretch, and still their ids:
    assert re.search(r"^- Turns 1–16 \(\d+ \w{3} \d{4}\): \w+", packet, re.M)
    assert "Evidence ids in them (newest first):" in packet and "(read, turn " in packet
