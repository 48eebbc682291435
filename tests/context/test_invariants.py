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
    UNIQUENESS,
    WITHIN_HORIZON,
    Finding,
    request_findings,
)
from vak_desktop.context.planning.assemble import (
    AssembledRequest,
    TailContext,
    assemble,
    plan_request,
)
from vak_desktop.context.planning.planner import Fidelity, Plan
from vak_desktop.context.planning.turns import TurnIndex
from vak_desktop.context.request import Message, ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import DEFAULT_SYSTEM_PROMPT
from vak_desktop.runtime.events import CardShown

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
        tools=tools_, tail_context=TAIL,
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
    plan, request = build(index, 3_500)
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
