"""Incremental compaction: the packet the next turn wants is written after a turn closes, in
the background, so the close never waits on the summariser and the next turn finds it stored;
`compact()` (the `/compact` command and "Compact now") writes the same range-keyed packet."""

from __future__ import annotations

import asyncio

from tests.context.sessions import Call, SessionBuilder, TurnScript, profile, search_result
from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.payloads import Activity, Compaction, Receipt
from vak_desktop.ledger import Ledger
from vak_desktop.providers.errors import ServerError
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.events import Notice, TurnFinished

SMALL = profile(4_000, output_reserve=512, provider="scripted", model="small")
BIG = profile(500_000, output_reserve=1_024, provider="scripted", model="big")


def _binding(model: str = "small") -> ModelBinding:
    return ModelBinding(provider="scripted", model=model, details=None)


def _session(ledger: Ledger, turns: int) -> SessionBuilder:
    session = SessionBuilder(ledger)
    session.append(SMALL)
    session.append(BIG)
    for n in range(1, turns + 1):
        session.turn(
            TurnScript(
                f"Turn {n}: what does the search say about topic {n}?",
                ((Call("search", {"query": f"topic {n}"}, search_result(f"t{n}", 3_000)),),),
                f"Topic {n} is covered by ten sources. " * 5,
            )
        )
    return session


def _packets(session: SessionBuilder) -> list[Compaction]:
    return [e.payload for e in session.chain() if isinstance(e.payload, Compaction)]


async def _run(runner: TurnRunner, session: str, text: str) -> tuple[list[str], bool]:
    """Run one turn; its notices, and whether a look-ahead was still running at its close."""
    notices, running_at_close = [], False
    async for event in runner.run(session, text, _binding()):
        if isinstance(event, Notice):
            notices.append(event.message)
        elif isinstance(event, TurnFinished):
            task = runner.lookahead.running(session)
            running_at_close = task is not None and not task.done()
    return notices, running_at_close


async def test_the_next_packet_is_written_after_close_and_the_next_turn_finds_it(
    ledger: Ledger,
) -> None:
    session = _session(ledger, 36)
    provider = ScriptedProvider()
    runner = TurnRunner(ledger, provider, default_tools(), compact_ahead=True)
    # a session written before look-ahead existed: "Compact now" brings it up to date
    provider.enqueue(Scripted(text="Turns 1 to 36: searches about topics."))
    now = await runner.compact(session.session, _binding())
    assert now.packet is not None and "summarised into the context packet" in now.message
    for n in range(37, 90):
        summary = f"Turns 1 to {n}: searches about topics, each covered by ten sources."
        answer = f"Topic {n} is covered by ten sources, each saying much the same. " * 30
        provider.enqueue(Scripted(text=answer, chunk=400), Scripted(text=summary, delay=0.02))
        notices, running_at_close = await _run(runner, session.session, f"Turn {n}: topic {n}?")
        assert not any("summarising" in m for m in notices)  # no turn waited for a packet
        await runner.settle()
        if len(_packets(session)) == 2:
            break
        provider.queue.clear()  # the look-ahead had nothing to compact: its reply is unused
    else:
        raise AssertionError("the working set never shed a batch of turns")
    assert running_at_close  # the turn closed while its look-ahead was still summarising
    packet = _packets(session)[-1]
    chain = session.chain()
    at = max(i for i, e in enumerate(chain) if isinstance(e.payload, Compaction))
    assert packet.first_turn_id == now.packet.first_turn_id  # the packet grew from the same start
    assert chain[at - 1].kind == "activity"  # written after the close mark, not inside a turn
    assert provider.requests[-1].max_tokens is not None  # the summariser's own request
    # the next turn plans with that packet, stored, and asks the summariser nothing
    asked = len(provider.requests)
    provider.enqueue(Scripted(text="And the next one."))
    notices, _ = await _run(runner, session.session, "One more: the next topic?")
    await runner.settle()
    receipts = [e.payload for e in session.chain() if isinstance(e.payload, Receipt)]
    assert receipts[-1].plan["packet"] == chain[at].id
    assert receipts[-1].plan["packet_range"] == [packet.first_turn_id, packet.last_turn_id]
    assert len(provider.requests) == asked + 1


async def test_compact_on_a_session_that_fits_writes_nothing(ledger: Ledger) -> None:
    session = _session(ledger, 3)
    provider = ScriptedProvider()
    runner = TurnRunner(ledger, provider, default_tools())
    result = await runner.compact(session.session, _binding("big"))
    assert result.packet is None and "nothing to compact" in result.message
    assert provider.requests == [] and _packets(session) == []
    empty = ledger.create_session().id
    assert "no turns" in (await runner.compact(empty, _binding())).message


async def test_aclose_cancels_a_background_compaction_and_writes_nothing(ledger: Ledger) -> None:
    session = _session(ledger, 36)  # wants a packet, none stored
    provider = ScriptedProvider(Scripted(text="x" * 200, delay=0.05, chunk=1))
    runner = TurnRunner(ledger, provider, default_tools())
    task = runner.start_compaction(session.session, _binding())
    assert runner.start_compaction(session.session, _binding()) is task  # one at a time
    await asyncio.sleep(0.3)  # the summariser request is streaming (200 chars at 50 ms each)
    assert provider.requests and not task.done()
    await runner.aclose()
    assert task.cancelled()
    assert _packets(session) == []
    assert ledger.verify().ok


async def test_a_failed_summariser_is_recorded_and_writes_no_packet(ledger: Ledger) -> None:
    session = _session(ledger, 36)  # wants a packet, none stored
    provider = ScriptedProvider(Scripted(raise_before=ServerError("the runner crashed", 500)))
    runner = TurnRunner(ledger, provider, default_tools())
    result = await runner.compact(session.session, _binding())
    assert result.packet is None and "the summariser failed" in result.message
    assert _packets(session) == []
    failed = [
        e.payload
        for e in session.chain()
        if isinstance(e.payload, Activity) and e.payload.type == "summary_failed"
    ]
    assert len(failed) == 1 and "crashed" in failed[0].message
