"""The topic index: a packet names the covered turns it cannot list by their stretches — a day
(at most 16 turns) each, with the words that mark it — not by a bare list of numbers (issue #22
Build item 1). On a real ledger: where stretches start, which words a line names, that a closed
stretch's line never changes as the session grows, that the index is advanced with the session
and equals the one built whole, and that a long dated chat's request carries the stretches and
keeps the spec's invariants.
"""

from __future__ import annotations

import re

from tests.context.sessions import SessionBuilder, profile
from vak_desktop.context.capacity.profile import tokens_per_char
from vak_desktop.context.invariants import packet_listed, request_findings
from vak_desktop.context.payloads import Activity, AssistantStep, Directive
from vak_desktop.context.planning.assemble import TailContext, assemble, plan_request
from vak_desktop.context.planning.dates import day_span
from vak_desktop.context.planning.packets import (
    LISTED_HEADER,
    PacketShape,
    number_ranges,
    render_packet,
)
from vak_desktop.context.planning.planner import Fidelity
from vak_desktop.context.planning.topics import (
    STRETCH_TURNS,
    TOPICS_HEADER,
    topic_index,
    topics_fitting,
    topics_over,
)
from vak_desktop.context.planning.turn_cards import build_turn_card, card_of
from vak_desktop.context.planning.turns import TURN_CLOSED, Turn, advance_turn_index
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.lexicons import lexicons

TAIL = TailContext(utc="2026-12-01T10:20:00Z", local="2026-12-01 11:20 (Tuesday)", timezone="CET")
STOP = lexicons().subjectless()
# one subject a day, the two speakers every day; each day's turns say what that day was about
DAYS = [
    ("2023-01-20", "pottery", "I started a pottery class at the Clayhouse studio, glazing bowls."),
    ("2023-01-29", "Paris", "We flew to Paris and saw the Louvre, then a bakery in Montmartre."),
    ("2023-02-04", "puppy", "Our border collie puppy Biscuit chewed the sofa and my slippers."),
    ("2023-02-16", "marathon", "I signed up for the Berlin marathon and ran 30 kilometres today."),
    ("2023-03-02", "violin", "My violin teacher gave me a Vivaldi concerto to practise."),
]


def said(builder: SessionBuilder, text: str, answer: str, at: str) -> None:
    """A closed turn said at `at` (an import keeps its source's time)."""
    directive = Directive(text=text, said_at=at)
    head = builder.append(directive)
    builder.turn_ids.append(head.id)
    step = builder.append(AssistantStep(text=answer, model="m", said_at=at))
    turn = Turn(head.id, len(builder.turn_ids) - 1, directive, (step,), said_at=at)
    builder.append(build_turn_card(turn, "completed", 0.25))
    builder.append(Activity(type=TURN_CLOSED, detail={"outcome": "completed"}))


def chat(builder: SessionBuilder, per_day: int = 10, days: int = len(DAYS)) -> SessionBuilder:
    for day, _subject, news in DAYS[:days]:
        for n in range(per_day):
            at = f"{day}T1{n % 10}:00:00Z"
            said(builder, f"Maya: {news} Hey Tom, how was your week? ({n})", "Tom: Wow!", at)
    return builder


def test_a_stretch_is_one_day_of_at_most_sixteen_turns() -> None:
    builder = chat(SessionBuilder(Ledger.open(":memory:")), per_day=3, days=2)
    for n in range(STRETCH_TURNS + 2):  # one long day
        said(builder, f"Maya: note {n}", "Tom: ok", "2023-04-01T10:00:00Z")
    turns = builder.index().turns
    view = topics_over(turns, STOP)
    assert view.store.starts == [0, 3, 6, 6 + STRETCH_TURNS]
    lines = view.topics(len(turns), 0)
    assert [(t.first, t.last) for t in lines] == [(0, 2), (3, 5), (6, 21), (22, 23)]
    assert [t.day for t in lines[:3]] == ["20 Jan 2023", "29 Jan 2023", "1 Apr 2023"]
    assert day_span("2023-06-13", "2023-06-21") == "13–21 Jun 2023"
    assert day_span("2023-01-20", "2023-04-03") == "20 Jan – 3 Apr 2023"


def test_a_stretch_names_what_is_new_in_it_not_its_speakers_or_times() -> None:
    builder = chat(SessionBuilder(Ledger.open(":memory:")))
    turns = builder.index().turns
    lines = topics_over(turns, STOP).topics(len(turns), 0)
    for line, (_day, subject, _news) in zip(lines, DAYS, strict=True):
        words = line.words.split(", ")
        assert subject in words, line  # the day's subject, as written ("Paris" a name)
        assert not {"Maya", "maya", "Tom", "tom", "week"} & set(words[:3]), line


def test_a_closed_stretch_keeps_its_line_as_the_session_grows() -> None:
    """The packet is part of the cached prefix: a turn added later must not rewrite the line of
    a stretch that has closed (its words are weighed against what came before it only)."""
    builder = chat(SessionBuilder(Ledger.open(":memory:")), days=3)
    early = builder.index().turns
    before = topics_over(early, STOP)
    chat(builder)  # two more days, the same words and new ones
    later = builder.index().turns
    after = topics_over(later, STOP)
    assert after.topics(len(later), 0)[:2] == before.topics(len(early), 0)[:2]
    assert after.topics(len(later), 1)[0] == before.topics(len(early), 1)[0]


def test_the_index_is_advanced_with_the_session_and_equals_the_one_built_whole() -> None:
    builder = chat(SessionBuilder(Ledger.open(":memory:")), days=2)
    builder.pending("Maya: what did I say about Paris?")
    first = builder.index()
    live = first.turns[:-1]
    found = topic_index(first, live, STOP)
    assert topic_index(first, live, STOP) is found  # kept in the index's memo
    chat(builder, days=4)
    builder.pending("Maya: and the puppy?")
    advanced = advance_turn_index(first, builder.chain())
    grown = topic_index(advanced, advanced.turns[:-1], STOP)
    assert grown.store is found.store  # extended in place, not built again
    whole = topics_over(advanced.turns[:-1], STOP)
    size = len(advanced.turns) - 1
    for level in range(3):
        assert grown.topics(size, level) == whole.topics(size, level)


def test_no_line_fits_no_stretch_is_shown() -> None:
    turns = chat(SessionBuilder(Ledger.open(":memory:"))).index().turns
    view = topics_over(turns, STOP)
    assert topics_fitting(view, len(turns), 5, 0.25) == ((), 0)
    shown, chars = topics_fitting(view, len(turns), 60, 0.25)
    assert 0 < len(shown) < len(DAYS) and chars <= 60 / 0.25  # coarser stretches that fit
    shown, _ = topics_fitting(view, len(turns), 1_000, 0.25)
    assert len(shown) == len(DAYS)  # room for every day


def test_a_long_dated_chat_names_its_stretches_not_a_list_of_numbers() -> None:
    """Before: "Also covered, by number: turns 1–7, 9–27, …" — now a line per stretch with its
    day and words, every covered turn still accounted for, the invariants kept."""
    builder = chat(SessionBuilder(Ledger.open(":memory:")), per_day=12)
    builder.pending("Maya: what was the name of the museum we saw?")
    index = builder.index()
    capacity = profile(2_400, output_reserve=256)
    tools = (ToolSpec("recall", "Bring back anything from earlier."),)
    plan, tail = plan_request(
        index, capacity, index.turns[-1], system="S", tools=tools, tail_context=TAIL,
        lexicons=lexicons(),
    )  # fmt: skip
    built = assemble(
        index, plan, index.turns[-1], system="S", tools=tools, tail=tail,
        ratio=tokens_per_char(capacity),
    )  # fmt: skip
    packet = next(m.content for m in built.messages if m.content.startswith("<context_summary"))
    assert TOPICS_HEADER in packet and "by number" not in packet
    assert re.search(r"^- Turns 1–\d+ \(20[ –][^)]*2023\): \w+", packet, re.M)
    packeted = {t.index + 1 for t in plan.turns if t.fidelity is Fidelity.PACKET}
    assert packeted and packeted <= packet_listed(packet)
    assert request_findings(index, plan, built, index.turns[-1], tokens_per_char(capacity)) == []


def test_a_packet_read_from_its_few_outside_turns_is_the_one_found_among_the_packeted() -> None:
    """The planner names the runs of a packet from the few turns of its range carried elsewhere
    (`outside`); the request's text must be what a scan of the packeted turns gives."""
    turns = chat(SessionBuilder(Ledger.open(":memory:")), per_day=8, days=3).index().turns
    span = turns[:24]
    for holes in ([], [0], [23], [3, 4, 9], [0, 1, 2, 22, 23], list(range(1, 24, 2))):
        packeted = [(t, card_of(t, 0.25)) for t in span if t.index not in holes]
        for shape in (PacketShape(), PacketShape(listed=(packeted[-1][0].turn_id,))):
            scanned = render_packet(None, span, packeted, shape)
            assert render_packet(None, span, packeted, shape, outside=holes) == scanned


def test_a_packet_finding_its_named_turns_by_id_is_the_one_found_by_a_scan() -> None:
    """Given every turn by id (`turns`), the packet finds the few turns its shape names by
    bisection and reads the others around them; the text must be what a pass over all gives,
    whichever turns are named, packeted or not, and the others must be every other packeted
    turn, in order (by number, or one line each)."""
    turns = chat(SessionBuilder(Ledger.open(":memory:")), per_day=8, days=3).index().turns
    span, by_id = turns[:24], {t.turn_id: t for t in turns}
    for holes in ([], [0], [23], [3, 4, 9], list(range(1, 24, 2))):
        packeted = [(t, card_of(t, 0.25)) for t in span if t.index not in holes]
        ids = [t.turn_id for t, _card in packeted]
        named = (ids[:1], ids[-1:], ids[2:5], [span[holes[0]].turn_id] if holes else [])
        for featured in named:
            for listed in ((), tuple(ids[-3:]), tuple(ids[::5])):
                for detailed in (False, True):
                    shape = PacketShape(tuple(featured), detailed, listed)
                    text = render_packet(None, span, packeted, shape, turns=by_id)
                    assert render_packet(None, span, packeted, shape) == text
                    apart = {*featured, *(() if detailed else listed)}
                    others = [t.number for t, _card in packeted if t.turn_id not in apart]
                    if detailed:
                        after = text.split(LISTED_HEADER)[-1] if others else ""
                        assert re.findall(r"^- Turn (\d+)", after, re.M) == list(map(str, others))
                    elif others:
                        assert f"by number: turns {number_ranges(others)}." in text
