"""Reset-with-handoff (spec §4): when the prefix plus the new turn fill the horizon, a `Reset`
with its handoff is written before the turn, the turn is planned from it, and `recall({turn})`
still reaches the turns behind it."""

from __future__ import annotations

import json

from tests.context.sessions import SessionBuilder, TurnScript, profile
from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.payloads import Activity, Receipt, Reset, ToolResult
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.turn.reset import RESET_WRITTEN

# a horizon the default prefix and one turn fill on their own
TINY = profile(1_200, output_reserve=256, ratio=0.3, provider="scripted", model="tiny")


def _session(ledger: Ledger) -> SessionBuilder:
    session = SessionBuilder(ledger)
    session.append(TINY)
    for n in range(1, 11):
        session.turn(TurnScript(f"Question {n}: the colour of box {n}?", (), f"Box {n} is red."))
    return session


async def test_a_turn_that_cannot_fit_with_any_history_resets_with_a_handoff(
    ledger: Ledger,
) -> None:
    session = _session(ledger)
    binding = ModelBinding(provider="scripted", model="tiny", details=None)
    provider = ScriptedProvider(
        Scripted(calls=[("recall", {"turn": 4})]),
        Scripted(text="Box 4 is red."),
    )
    runner = TurnRunner(ledger, provider, default_tools())
    async for _ in runner.run(session.session, "What colour was box 4? " * 40, binding):
        pass
    chain = session.chain()
    kinds = [e.kind for e in chain]
    at = kinds.index("reset")
    assert kinds[at + 1] == "directive"  # the boundary is in front of the turn
    reset = chain[at].payload
    assert isinstance(reset, Reset) and "Turns 1–10 are behind a reset" in reset.handoff
    why = chain[at - 1].payload
    assert isinstance(why, Activity) and why.type == RESET_WRITTEN and "horizon" in why.message
    first = provider.requests[0]
    assert any(m.content.startswith("<handoff>") for m in first.messages)
    assert not any("<context_summary" in m.content for m in first.messages)
    receipt = next(e.payload for e in chain if isinstance(e.payload, Receipt))
    assert {t["fidelity"] for t in receipt.plan["turns"]} == {"behind_reset"}
    recalled = next(e.payload for e in chain if isinstance(e.payload, ToolResult))
    assert "Question 4: the colour of box 4?" in recalled.content  # still reachable
    assert json.dumps(receipt.plan)  # the plan is recorded as planned from the reset


async def test_a_horizon_of_zero_still_answers_and_says_why(ledger: Ledger) -> None:
    """A model whose probe found no instruction followed at all (horizon 0): the turn is sent,
    answered, and an Activity says the request exceeds the horizon; never a hang or a cut."""
    zero = profile(0, output_reserve=256, ratio=0.3, provider="scripted", model="zero")
    session = SessionBuilder(ledger)
    session.append(zero)
    binding = ModelBinding(provider="scripted", model="zero", details=None)
    provider = ScriptedProvider(Scripted(text="Hello."))
    runner = TurnRunner(ledger, provider, default_tools())
    outcomes = []
    async for event in runner.run(session.session, "Hi there", binding):
        outcomes.append(event)
    assert len(provider.requests) == 1
    said = [
        e.payload.message
        for e in session.chain()
        if isinstance(e.payload, Activity) and e.payload.type == "plan_over_budget"
    ]
    assert said and "exceed the measured horizon of 0 tokens" in said[0]


async def test_the_handoff_carries_the_turn_a_refer_back_points_at(ledger: Ledger) -> None:
    session = _session(ledger)
    binding = ModelBinding(provider="scripted", model="tiny", details=None)
    provider = ScriptedProvider(Scripted(text="It was red."))
    runner = TurnRunner(ledger, provider, default_tools())
    # long enough that no history fits beside it, even with the memory tools alone (0119)
    ask = "Remind me what I asked earlier about the colour of box 7. " * 40
    async for _ in runner.run(session.session, ask, binding):
        pass
    (reset,) = [e.payload for e in session.chain() if isinstance(e.payload, Reset)]
    assert "Turn 7 (completed) — asked: Question 7: the colour of box 7?" in reset.handoff
    assert any("Question 7" in m.content for m in provider.requests[0].messages)


async def test_one_turn_behind_a_reset_is_said_in_the_singular(ledger: Ledger) -> None:
    """ "turn 1 goes behind", never "turns 1 go behind" (#25 item 4)."""
    session = SessionBuilder(ledger)
    session.append(TINY)
    session.turn(TurnScript("Question 1: the colour of box 1?", (), "Box 1 is red."))
    binding = ModelBinding(provider="scripted", model="tiny", details=None)
    provider = ScriptedProvider(Scripted(text="Box 1 is red."))
    runner = TurnRunner(ledger, provider, default_tools())
    async for _ in runner.run(session.session, "What colour was box 1? " * 40, binding):
        pass
    [why] = [
        e.payload.message
        for e in session.chain()
        if isinstance(e.payload, Activity) and e.payload.type == RESET_WRITTEN
    ]
    assert "turn 1 goes behind a reset" in why and "turns 1 go" not in why
