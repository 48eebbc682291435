"""The production invariant checker (`context/invariants.py`, what `vak eval` runs) finds
nothing wrong in a request the engine built, and names the invariant, the turn and the result
when the request is damaged: a result cut, a turn split, a card dropped, a tool twice, a
history over its budget."""

from __future__ import annotations

import dataclasses

import pytest

from tests.context.sessions import Call, SessionBuilder, TurnScript, profile, search_result
from tests.runtime.card_tools import SearchTool, run_turn, tools
from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.evidence.windows import short_ref
from vak_desktop.context.invariants import (
    NO_CUT,
    NO_SPLIT,
    PACKET_BATCH,
    UNIQUENESS,
    WITHIN_HORIZON,
    Finding,
    catalogued_tools,
    packet_listed,
    request_findings,
    tool_name_findings,
)
from vak_desktop.context.planning.assemble import (
    AssembledRequest,
    TailContext,
    assemble,
    plan_request,
)
from vak_desktop.context.planning.planner import Fidelity, Plan
from vak_desktop.context.planning.turn_cards import full_record
from vak_desktop.context.planning.turns import TurnIndex
from vak_desktop.context.request import Message, ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import DEFAULT_SYSTEM_PROMPT
from vak_desktop.runtime.events import CardShown
from vak_desktop.runtime.lexicons import lexicons

TAIL = TailContext(utc="2026-11-30T10:20:00Z", local="2026-11-30 11:20 (Monday)", timezone="CET")
CARD = {"title": "Compiler release", "value": "incremental linking", "source": "example.org"}
RATIO = 0.25


async def card_session(ledger: Ledger) -> SessionBuilder:
    """Eight search turns, a live card turn (emit call, Presentation, ack), three more turns,
    and a pending question."""
    session = SessionBuilder(ledger)
    for n in range(8):
        result = search_result(f"early{n}", 6_000)
        session.turn(
            TurnScript(f"Early question {n}?", ((Call("search", {"n": n}, result),),), "ok")
        )
    provider = ScriptedProvider(
        Scripted(calls=[("emit_metric_card", CARD)]),
        Scripted(text="Shown. " + "The card holds the release notes in brief. " * 80),
    )
    events = await run_turn(
        ledger, session.session, provider, "Show the compiler release as a metric card.",
        tools(SearchTool([])),
    )  # fmt: skip
    (shown,) = [e for e in events if isinstance(e, CardShown)]
    assert (shown.type, shown.title) == ("metric", "Compiler release")
    for n in range(3):
        result = search_result(f"late{n}", 6_000)
        session.turn(
            TurnScript(f"Late question {n}?", ((Call("search", {"n": n}, result),),), "ok")
        )
    session.pending("What changed since the first question?")
    return session


def build(index: TurnIndex, horizon: int) -> tuple[Plan, AssembledRequest]:
    current = index.turns[-1]
    tools_ = ()
    plan, tail = plan_request(
        index, profile(horizon, ratio=RATIO), current, system=DEFAULT_SYSTEM_PROMPT,
        tools=tools_, tail_context=TAIL, lexicons=lexicons(),
    )  # fmt: skip
    request = assemble(
        index, plan, current, system=DEFAULT_SYSTEM_PROMPT, tools=tools_, tail=tail, ratio=RATIO
    )
    return plan, request


def findings(index: TurnIndex, plan: Plan, request: AssembledRequest) -> list[Finding]:
    return request_findings(index, plan, request, index.turns[-1], RATIO)


def with_messages(request: AssembledRequest, messages: list[Message]) -> AssembledRequest:
    return dataclasses.replace(request, messages=tuple(messages))


@pytest.fixture
async def planned(ledger: Ledger) -> tuple[TurnIndex, Plan, AssembledRequest]:
    session = await card_session(ledger)
    index = session.index()
    plan, request = build(index, 4_200)  # a question about the past: passages take two thirds
    fidelity = {p.index: p.fidelity for p in plan.turns}
    assert fidelity[8] is Fidelity.CARD  # the card turn is shown as its card
    assert Fidelity.FULL in fidelity.values()
    return index, plan, request


async def test_a_request_the_engine_built_keeps_every_invariant(
    planned: tuple[TurnIndex, Plan, AssembledRequest],
) -> None:
    assert findings(*planned) == []


async def test_a_result_missing_from_its_card_is_a_cut(
    planned: tuple[TurnIndex, Plan, AssembledRequest],
) -> None:
    index, plan, request = planned
    carded = next(p for p in plan.turns if p.fidelity is Fidelity.CARD and p.index != 8)
    ref = short_ref(index.turns[carded.index].evidence[0])
    messages = [
        dataclasses.replace(m, content=m.content.replace(f" [evidence:{ref}]", ""))
        for m in request.messages
    ]
    (finding,) = findings(index, plan, with_messages(request, messages))
    assert finding.invariant == NO_CUT and finding.turn == carded.index + 1
    assert ref in finding.message


async def test_a_card_dropped_from_its_turn_card_is_a_cut(
    planned: tuple[TurnIndex, Plan, AssembledRequest],
) -> None:
    index, plan, request = planned
    messages = [
        dataclasses.replace(m, content=m.content.replace('card: metric "Compiler release"', ""))
        for m in request.messages
    ]
    (finding,) = findings(index, plan, with_messages(request, messages))
    assert (finding.invariant, finding.turn) == (NO_CUT, 9)
    assert index.turns[8].presentations[0] in finding.message


async def test_a_whole_turn_missing_a_result_is_split(
    planned: tuple[TurnIndex, Plan, AssembledRequest],
) -> None:
    index, plan, request = planned
    whole = next(p for p in plan.turns if p.fidelity is Fidelity.FULL)
    directive = index.turns[whole.index].directive.text
    at = next(i for i, m in enumerate(request.messages) if m.content == directive)
    messages = list(request.messages)
    del messages[at + 2]  # the tool result after the call
    found = findings(index, plan, with_messages(request, messages))
    assert {f.invariant for f in found} == {NO_SPLIT}
    assert any(f.turn == whole.index + 1 and "is not the whole turn" in f.message for f in found)


async def test_a_tool_twice_and_a_history_over_budget_are_named(
    planned: tuple[TurnIndex, Plan, AssembledRequest],
) -> None:
    index, plan, request = planned
    twice = dataclasses.replace(request, tools=(ToolSpec("x", "x"), ToolSpec("x", "x")))
    assert [f.invariant for f in findings(index, plan, twice)] == [UNIQUENESS]
    small = dataclasses.replace(plan.budget, horizon=plan.budget.horizon // 3)
    over = dataclasses.replace(plan, budget=small, packet_tokens=0)
    assert WITHIN_HORIZON in {f.invariant for f in findings(index, over, request)}


def _long_session(ledger: Ledger, turns: int) -> TurnIndex:
    session = SessionBuilder(ledger)
    for n in range(turns):
        result = search_result(f"r{n}", 3_000)
        session.turn(TurnScript(f"Question {n}?", ((Call("search", {"n": n}, result),),), "ok"))
    session.pending("And the next one?")
    return session.index()


def test_a_packet_growing_by_one_turn_is_caught(ledger: Ledger) -> None:
    """The packet range moves in whole batches of 8; a range that grew by one turn (the old
    defect: a new summariser call on every request) is named."""
    index = _long_session(ledger, 20)
    plan, request = build(index, 1_800)
    assert plan.packet_range is not None and findings(index, plan, request) == []
    last = index.by_id(plan.packet_range[1])
    assert last is not None and (last.index + 1) % 8 == 0
    grown = index.turns[last.index + 1]
    turns = tuple(
        p._replace(fidelity=Fidelity.PACKET, tokens=0) if p.turn_id == grown.turn_id else p
        for p in plan.turns
    )
    wider = dataclasses.replace(
        plan, turns=turns, packet_range=(plan.packet_range[0], grown.turn_id)
    )
    current = index.turns[-1]
    rebuilt = assemble(
        index,
        wider,
        current,
        system=DEFAULT_SYSTEM_PROMPT,
        tools=(),
        tail=request.tail,
        ratio=RATIO,
    )
    found = findings(index, wider, rebuilt)
    assert any(f.invariant == PACKET_BATCH and f.turn == grown.number for f in found)


def test_a_turn_both_whole_and_in_the_packet_is_caught(ledger: Ledger) -> None:
    index = _long_session(ledger, 20)
    plan, request = build(index, 1_800)
    packeted = next(p for p in plan.turns if p.fidelity is Fidelity.PACKET)
    number = packeted.index + 1
    record = full_record(index.turns[packeted.index])
    at = next(i for i, m in enumerate(request.messages) if m.content.startswith("<context_summary"))
    packet = request.messages[at].content  # still lists the turn; now it is also whole in front
    messages = [*request.messages[:at], *record, request.messages[at], *request.messages[at + 1 :]]
    turns = tuple(
        p._replace(fidelity=Fidelity.FULL) if p.turn_id == packeted.turn_id else p
        for p in plan.turns
    )
    both = dataclasses.replace(plan, turns=turns)
    assert number in packet_listed(packet)  # by its stretch's line, or by number
    found = findings(index, both, with_messages(request, messages))
    assert any(
        f.invariant == NO_SPLIT and f.turn == number and "in the packet" in f.message for f in found
    )


def test_a_tool_declared_and_catalogued_as_not_loaded_is_named_twice() -> None:
    """#22 item 6: a tool the reading loaded was also listed as "not loaded yet"; the
    uniqueness check only looked for a schema declared twice."""
    system = (
        "You help.\n\nMore tools (not loaded yet: call find_tools with what you need):\n"
        "- echo — Echo the arguments back.\n- unit_convert — Convert units."
    )
    tools = (ToolSpec("recall", "Recall."), ToolSpec("echo", "Echo."))
    assert catalogued_tools(system) == {"echo", "unit_convert"}
    found = tool_name_findings(system, tools)
    assert [(f.invariant, f.message) for f in found] == [
        (UNIQUENESS, "the tool echo is declared and listed as not loaded yet")
    ]
    compact = "Short.\n\nMore tools (find_tools loads them): echo, unit_convert."
    assert [f.message for f in tool_name_findings(compact, tools)] == [
        "the tool echo is declared and listed as not loaded yet"
    ]
    twice = (*tools, ToolSpec("recall", "Recall."))
    assert "the tool recall is declared twice" in [f.message for f in tool_name_findings("", twice)]
    # found by find_tools during the turn: appended after the prefix, its line stays
    result = Message(role="tool", content='{"loaded": ["echo"]}', tool_name="find_tools")
    assert tool_name_findings(system, tools, [result]) == []
