"""One turn end to end over the ledger, with a scripted provider."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Directive,
    EvidenceBody,
    Receipt,
    ToolResult,
    TurnCard,
)
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.providers.errors import ContextOverflow, ServerError
from vak_desktop.runtime import ModelBinding, ToolOutput, ToolRegistry, TurnRunner, default_tools
from vak_desktop.runtime.events import TextChunk, ToolResultReady, TurnEvent, TurnFinished
from vak_desktop.runtime.tools import ToolContext
from vak_desktop.runtime.tools.recall import RecallTool


def _binding() -> ModelBinding:
    return ModelBinding(provider="scripted", model="m", details=None)


async def _collect(runner: TurnRunner, session: str, text: str) -> list[TurnEvent]:
    return [e async for e in runner.run(session, text, _binding())]


def _kinds(ledger: Ledger, session: str) -> list[str]:
    return [e.kind for e in ledger.chain_to_root(session)]


class BigTool:
    spec = ToolSpec("big", "Returns a huge result.")

    def __init__(self, content: str) -> None:
        self.content = content

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput(self.content)


class BrokenTool:
    spec = ToolSpec("broken", "Always raises.")

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        raise RuntimeError("disk on fire")


async def test_a_text_turn_writes_directive_step_receipt_and_close(ledger: Ledger) -> None:
    provider = ScriptedProvider(Scripted(text="Hello there, friend."))
    runner = TurnRunner(ledger, provider, default_tools())
    session = ledger.create_session().id
    events = await _collect(runner, session, "hi")
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Hello there, friend."
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert _kinds(ledger, session) == [
        "directive",
        "assistant_step",
        "receipt",
        "activity",  # prefix_sent: the system text and tools this first request carried
        "turn_card",
        "activity",
    ]
    request = provider.requests[0]
    assert request.messages[0].role == "system"
    tail, words = request.messages[-2:]  # the tail, then the user's words alone
    assert tail.content.endswith("</stance>") and words.content == "hi"
    assert request.keep_alive == "30m" and request.num_ctx >= 8192
    assert ledger.verify().ok


@pytest.mark.allow_log_warnings  # BrokenTool's traceback is logged, as it should be
async def test_tool_calls_loop_until_the_model_answers(ledger: Ledger) -> None:
    session = ledger.create_session().id
    content = "\n".join(f"row {i}" for i in range(10_000))  # ~88k chars: windowed
    provider = ScriptedProvider(
        Scripted(calls=[("big", {}), ("broken", {}), ("nope", {})]), Scripted(text="done")
    )
    tools = ToolRegistry([RecallTool(), BigTool(content), BrokenTool()])
    events = await _collect(TurnRunner(ledger, provider, tools), session, "go")
    results = [e for e in events if isinstance(e, ToolResultReady)]
    assert [(r.name, r.is_error, r.windowed) for r in results] == [
        ("big", False, True),
        ("broken", True, False),
        ("nope", True, False),
    ]
    chain = ledger.chain_to_root(session)
    bodies = [e.payload for e in chain if isinstance(e.payload, EvidenceBody)]
    assert bodies[0].content == content  # stored whole
    carried = [e.payload for e in chain if isinstance(e.payload, ToolResult)]
    assert len(carried[0].content) <= 30_100 and "recall(" in carried[0].content
    assert "disk on fire" in carried[1].content
    second = provider.requests[1]
    assert [m.role for m in second.messages[-4:]] == ["assistant", "tool", "tool", "tool"]
    assert second.messages[-3].content == carried[0].content


async def test_recall_returns_the_whole_stored_result_and_a_line_range(ledger: Ledger) -> None:
    session = ledger.create_session().id
    body = ledger.append(session, EvidenceBody("c0", "read", "a\nb\nc\nd", 7))
    tool = RecallTool()
    ctx = ToolContext(ledger, session)
    assert (await tool.run({"id": body.id[3:15]}, ctx)).content == "a\nb\nc\nd"
    assert (await tool.run({"id": body.id, "range": [2, 3]}, ctx)).content == "b\nc"
    assert (await tool.run({"id": body.id, "chars": [2, 5]}, ctx)).content == "b\nc"


async def test_provider_failure_keeps_the_directive_and_partial_text(ledger: Ledger) -> None:
    provider = ScriptedProvider(
        Scripted(text="partial answer", raise_after=ServerError("runner crashed"))
    )
    session = ledger.create_session().id
    events = await _collect(TurnRunner(ledger, provider, default_tools()), session, "q")
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    assert finished.outcome == "failed" and "runner crashed" in finished.error
    chain = ledger.chain_to_root(session)
    assert chain[0].payload == Directive(
        text="q",
        model="m",
        provider="scripted",
        system=chain[0].payload.system,  # type: ignore[union-attr]
    )
    step = next(e.payload for e in chain if isinstance(e.payload, AssistantStep))
    assert step.text == "partial answer" and step.interrupted


async def test_cancelling_mid_stream_keeps_what_arrived(ledger: Ledger) -> None:
    provider = ScriptedProvider(Scripted(text="word " * 200, chunk=5, delay=0.01))
    runner = TurnRunner(ledger, provider, default_tools())
    session = ledger.create_session().id
    seen: list[str] = []
    five_chunks = asyncio.Event()

    async def consume() -> None:
        async for event in runner.run(session, "tell me", _binding()):
            if isinstance(event, TextChunk):
                seen.append(event.text)
                if len(seen) == 5:
                    five_chunks.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(five_chunks.wait(), timeout=10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    chain = ledger.chain_to_root(session)
    step = next(e.payload for e in chain if isinstance(e.payload, AssistantStep))
    assert step.interrupted and step.text.startswith("word word")
    close = chain[-1].payload
    assert isinstance(close, Activity) and close.detail["outcome"] == "cancelled"


async def test_an_unclosed_turn_is_marked_interrupted_by_the_next(ledger: Ledger) -> None:
    session = ledger.create_session().id
    ledger.append(session, Directive(text="asked before the crash"))
    runner = TurnRunner(ledger, ScriptedProvider(Scripted(text="ok")), default_tools())
    await _collect(runner, session, "again")
    kinds = [(e.kind, getattr(e.payload, "type", "")) for e in ledger.chain_to_root(session)]
    assert kinds[1:3] == [("turn_card", ""), ("activity", "turn_interrupted")]
    card = ledger.chain_to_root(session)[1].payload
    assert isinstance(card, TurnCard) and card.outcome == "interrupted"
    assert card.asked == "asked before the crash"


async def test_over_length_is_recorded_replanned_and_retried_once(ledger: Ledger) -> None:
    provider = ScriptedProvider(
        Scripted(raise_before=ContextOverflow(20_000, 8_192)), Scripted(text="fits now")
    )
    session = ledger.create_session().id
    binding = ModelBinding(provider="scripted", model="m", details=None)
    runner = TurnRunner(ledger, provider, default_tools())
    events = [e async for e in runner.run(session, "long", binding)]
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    # the refusal counted 20k tokens for a one-word turn: the current turn cannot shrink, so
    # the retry asks for a window that holds what the provider counted
    assert [r.num_ctx for r in provider.requests] == [8_192, 32_768]
    chain = ledger.chain_to_root(session)
    overflow = [e.payload for e in chain if getattr(e.payload, "type", "") == "context_overflow"]
    assert len(overflow) == 1 and overflow[0].detail["verified_window"] == 8_192  # type: ignore[union-attr]
    receipts = [e.payload for e in chain if isinstance(e.payload, Receipt)]
    assert receipts[0].num_ctx == 32_768


def _live_bytes(ledger: Ledger) -> int:
    """Bytes the SQLite file uses for data (its pages less the free ones a delete left)."""
    ledger._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = ledger._db.execute("PRAGMA page_count").fetchone()[0]
    free = ledger._db.execute("PRAGMA freelist_count").fetchone()[0]
    return int((pages - free) * ledger._db.execute("PRAGMA page_size").fetchone()[0])


async def test_a_5_mb_directive_and_a_5_mb_answer_are_each_stored_once(ledger: Ledger) -> None:
    """The card used to copy a long text with no full stop whole (its "first sentence"), and
    the stream journal kept every answer beside its step: 5 MB in, 15 MB on disk. (The
    directive's words are long: the lexicon reading costs ~80 µs a word, minutes for 5 MB of
    ordinary words, which is the reading's own limit, not the ledger's.)"""
    directive, answer = ("w" * 999 + " ") * 5_000, "answer " * 700_000
    provider = ScriptedProvider(Scripted(text=answer, chunk=50_000))
    runner = TurnRunner(ledger, provider, default_tools())
    session = ledger.create_session().id
    before = _live_bytes(ledger)
    events = await _collect(runner, session, directive)
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    stored = _live_bytes(ledger) - before
    once = len(directive) + len(answer)
    assert once <= stored < once * 1.05, (stored, once)
    card = next(e.payload for e in ledger.entries(session) if isinstance(e.payload, TurnCard))
    assert card.asked == " ".join(["<999 chars>"] * 40) + " … (+4960 words)"
    assert card.answered.narration.endswith("(+699960 words)")
    assert ledger._db.execute("SELECT COUNT(*) FROM stream_journal").fetchone()[0] == 0
    assert ledger.verify().ok
