"""The summariser's requests fit the model's window: too many new cards are summarised in
chunks, each seeded with the summary so far."""

from __future__ import annotations

from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.capacity.profile import estimate_tokens
from vak_desktop.context.payloads import Activity, AssistantStep, Directive
from vak_desktop.context.planning.turns import TURN_CLOSED, build_turn_index
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import ModelBinding
from vak_desktop.runtime.turn.summariser import summarise_range

RATIO = 0.25


def _session(ledger: Ledger, turns: int) -> str:
    session = ledger.create_session().id
    for i in range(turns):
        ledger.append(session, Directive(text=f"Question {i}: tell me about subject number {i}."))
        ledger.append(session, AssistantStep(text=f"Subject {i} is described at length. " * 12))
        ledger.append(session, Activity(TURN_CLOSED, detail={"outcome": "completed"}))
    return session


async def test_a_range_too_big_for_one_request_is_summarised_in_chunks(ledger: Ledger) -> None:
    session = _session(ledger, 24)
    index = build_turn_index(ledger.chain_to_root(session))
    provider = ScriptedProvider(*(Scripted(text=f"summary after chunk {n}") for n in range(24)))
    binding = ModelBinding(provider="scripted", model="m", details=None)
    window, answer = 600, 200
    packet = await summarise_range(
        provider,
        binding,
        index,
        (index.turns[0].turn_id, index.turns[-1].turn_id),
        max_tokens=answer,
        ratio=RATIO,
        keep_alive=None,
        window=window,
    )
    assert len(provider.requests) > 1
    for request in provider.requests:
        assert estimate_tokens(request.chars(), RATIO) <= window - answer
        assert request.max_tokens == answer
    # each chunk after the first is seeded with the summary so far
    assert "summary after chunk 0" in provider.requests[1].messages[-1].content
    assert packet.summary == f"summary after chunk {len(provider.requests) - 1}"
    assert (packet.first_turn_id, packet.last_turn_id) == (
        index.turns[0].turn_id,
        index.turns[-1].turn_id,
    )
    every_turn = " ".join(m.content for r in provider.requests for m in r.messages)
    assert all(f"Question {i}:" in every_turn for i in range(24))  # no turn left out


async def test_a_range_that_fits_takes_one_request(ledger: Ledger) -> None:
    session = _session(ledger, 4)
    index = build_turn_index(ledger.chain_to_root(session))
    provider = ScriptedProvider(Scripted(text="one summary"))
    binding = ModelBinding(provider="scripted", model="m", details=None)
    packet = await summarise_range(
        provider,
        binding,
        index,
        (index.turns[0].turn_id, index.turns[-1].turn_id),
        max_tokens=256,
        ratio=RATIO,
        keep_alive=None,
        window=100_000,
    )
    assert len(provider.requests) == 1 and packet.summary == "one summary"
