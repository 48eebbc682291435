"""The spec's worked shapes (§4 "Properties", §10 "Typical shape"), reached by measurement.

The session is the spec's: 31 turns, each a web search returning ~14k characters of JSON and a
short answer. The same ledger is planned for three models:

(a) a 13k horizon under a ~12k prefix: the packet over the three whole batches of 8 telling the
    model which turns it is missing and how to recall them, and the newest partial batch as
    cards past the budget (the packet moves only in whole batches; the plan says so);
(b) a small model (8,192 tokens, 2,048 of them reserved for output): about two turns whole, the
    other turns as cards, no packet, under 3k tokens of history;
(c) a frontier model (200k): every turn whole.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.context.invariants import checked_request
from tests.context.sessions import Call, SessionBuilder, TurnScript, profile, search_result
from vak_desktop.context.payloads import CapacityProfile
from vak_desktop.context.planning.assemble import TailContext, plan_request
from vak_desktop.context.planning.planner import Fidelity, Plan
from vak_desktop.context.planning.turns import TurnIndex
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import DEFAULT_SYSTEM_PROMPT, ToolRegistry
from vak_desktop.runtime.lexicons import lexicons
from vak_desktop.runtime.tools import RecallTool

# the prefix these shapes were measured with, and the session's own search tool: its calls keep
# their shape on the cards (a tool the request lacked would be told in words on them)
TOOLS = (
    *ToolRegistry([RecallTool()]).specs(),
    ToolSpec("tavily_search", "Search the web.", {"type": "object"}),
)
TAIL = TailContext(utc="2026-11-30T10:20:00Z", local="2026-11-30 11:20 (Monday)", timezone="CET")
TOPICS = (
    "the weather in Noida",
    "the copper price",
    "Rust parser crates",
    "Python release dates",
    "SQLite WAL mode",
    "AI news",
)
RATIO = 0.25
FOLLOW_UP = "And how does that compare with last week?"


def spec_session(ledger: Ledger, model: str = "m") -> SessionBuilder:
    """31 closed search turns and the follow-up that is being asked now, given to `model`
    (`profile`'s by default)."""
    session = SessionBuilder(ledger, card_ratio=RATIO, model=model)
    for n in range(1, 32):
        topic = TOPICS[n % len(TOPICS)]
        session.turn(
            TurnScript(
                f"What is the latest on {topic}? (question {n})",
                (
                    (
                        Call(
                            "tavily_search",
                            {"query": f"{topic} {n}"},
                            search_result(f"q{n}", 14_000),
                        ),
                    ),
                ),
                f"Here is what I found on {topic}: ten sources agree. The details follow.",
            )
        )
    session.pending(FOLLOW_UP)
    return session


def planned(index: TurnIndex, capacity: CapacityProfile, system: str) -> tuple[Plan, list[str]]:
    """Plan and assemble the follow-up, check every invariant, return the plan and the
    contents of the history messages (between the system prompt and the follow-up)."""
    plan, request = checked_request(index, capacity, system=system, tools=TOOLS, tail_context=TAIL)
    assert request.messages[-1].content == FOLLOW_UP  # the user's words, after the tail
    return plan, [m.content for m in request.messages[1:-2]]


def fidelities(plan: Plan) -> Counter[Fidelity]:
    return Counter(t.fidelity for t in plan.turns)


@pytest.mark.parametrize("summarised", [False, True])
def test_a_13k_horizon_under_a_12k_prefix_carries_the_current_turn_and_says_what_it_misses(
    ledger: Ledger, summarised: bool
) -> None:
    system = "You are a careful assistant. " * 1_715  # 48k chars: 12k tokens at 0.25
    capacity = profile(13_000, output_reserve=512, ratio=RATIO)
    session = spec_session(ledger)
    index = session.index()
    if summarised:  # the runtime's summariser wrote the packet the plan asks for
        plan, _ = planned(index, capacity, system)
        assert plan.packet_range == (session.turn_ids[0], session.turn_ids[23])
        session.compaction(1, 24, "The user asked about six recurring topics.")
        index = session.index()
    plan, history = planned(index, capacity, system)
    assert plan.budget.prefix_tokens >= 12_000 and plan.budget.available == 0
    assert fidelities(plan) == {Fidelity.PACKET: 24, Fidelity.CARD: 7}
    assert plan.partial_batch and plan.over_budget > 0
    assert (plan.packet is not None) == summarised
    packet, cards = history  # the packet and one run of cards: turns 25–31
    assert packet.startswith('<context_summary turns="1–24">')
    assert 'Turns 1–24 are summarised here; recall({"turn": 1}) returns turn 1' in packet
    assert cards.startswith("<earlier_turns>") and "Turn 25 (" in cards
    if summarised:
        assert "The user asked about six recurring topics." in packet


def test_a_small_model_keeps_about_two_turns_whole_and_the_rest_as_cards(ledger: Ledger) -> None:
    capacity = profile(8_192, output_reserve=2_048, ratio=RATIO)  # the spec's reserve
    index = spec_session(ledger).index()
    plan, history = planned(index, capacity, DEFAULT_SYSTEM_PROMPT)
    counts = fidelities(plan)
    assert 1 <= counts[Fidelity.FULL] <= 3
    assert counts[Fidelity.CARD] == 31 - counts[Fidelity.FULL]
    assert plan.packet_range is None
    assert plan.fidelity_of(index.turns[30].turn_id) is Fidelity.FULL  # the turn "that" means
    assert plan.history_tokens < 3_000  # and `check_request` measured the request below it
    assert sum(text.startswith("<earlier_turns>") for text in history) == 1  # one run of cards


def test_a_frontier_model_keeps_the_whole_session(ledger: Ledger) -> None:
    capacity = profile(200_000, output_reserve=8_192, ratio=RATIO)
    index = spec_session(ledger).index()
    plan, history = planned(index, capacity, DEFAULT_SYSTEM_PROMPT)
    assert fidelities(plan) == {Fidelity.FULL: 31}
    assert plan.packet_range is None
    assert not any(text.startswith(("<earlier_turns>", "<context_summary")) for text in history)


def test_a_long_session_keeps_dozens_of_turns_whole_when_not_every_card_fits(
    ledger: Ledger,
) -> None:
    """Cards alone could fill the budget of a long session; they get half of it when they do
    not all fit, so the other half still holds whole turns (spec §4: dozens on a big model)."""
    builder = SessionBuilder(ledger)
    for n in range(600):
        builder.turn(
            TurnScript(directive=f"Question {n} about part {n % 13}?", answer=f"Part {n}. " * 40)
        )
    index = builder.index()
    roomy = profile(12_000, output_reserve=1_024)
    plan, _ = plan_request(
        index,
        roomy,
        None,
        system="You are helpful.",
        tools=(),
        tail_context=TAIL,
        lexicons=lexicons(),
    )
    counts = {f: sum(t.fidelity is f for t in plan.turns) for f in Fidelity}
    assert counts[Fidelity.FULL] >= 12, counts
    assert counts[Fidelity.CARD] >= 50, counts
    assert counts[Fidelity.PACKET] > 0 and plan.packet_range is not None
    assert plan.history_tokens <= plan.budget.available


def test_the_turn_reserve_is_what_this_models_own_turns_reached(ledger: Ledger) -> None:
    """The spec's current-turn reserve is the in-turn size observed *for this model*. The
    same 31 turns imported from another app (or given to another model) tell nothing of this
    model's turns: they reserve nothing, and the history gets that room. Measured in
    efficacy: imported build logs made the real 0.5B's reserve 3,150 tokens at its
    2,742-token horizon, and its history got none."""
    capacity = profile(8_192, output_reserve=2_048, ratio=RATIO)
    own = planned(spec_session(ledger).index(), capacity, DEFAULT_SYSTEM_PROMPT)[0]
    other = spec_session(ledger, model="another-app").index()
    imported, _ = planned(other, capacity, DEFAULT_SYSTEM_PROMPT)
    # the reserve is this turn so far: its directive alone
    assert own.budget.current_turn_reserve > 3_000 > 100 > imported.budget.current_turn_reserve
    assert imported.budget.available - own.budget.available == (
        own.budget.current_turn_reserve - imported.budget.current_turn_reserve
    )
    assert imported.history_tokens > own.history_tokens
