"""A tool call the model wrote in its text runs as a call, and the ledger says it came as text."""

from __future__ import annotations

from typing import Any

import httpx

from tests.doubles.fixtures import TOOL_MODEL, double_fixture, http_fixture  # noqa: F401
from tests.doubles.ollama_model import Reply
from tests.doubles.ollama_server import OllamaDouble
from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.evidence.text_calls import TEXT_FORM_CALL, text_call_id
from vak_desktop.context.payloads import Activity, AssistantStep, EvidenceBody, ToolResult
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime import ModelBinding, ToolOutput, ToolRegistry, TurnRunner
from vak_desktop.runtime.capacity.binding import bind_model
from vak_desktop.runtime.events import ToolCallRequested, ToolResultReady, TurnFinished
from vak_desktop.runtime.tools import ToolContext
from vak_desktop.runtime.tools.recall import RecallTool


class NotesTool:
    """Reads a note by name from a fixed set, and remembers what it was asked."""

    spec = ToolSpec(
        "read_note",
        "Read one of the user's notes by name.",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        self.asked.append(arguments)
        notes = {"groceries": "eggs, rice, lemons"}
        name = str(arguments.get("name"))
        return ToolOutput(notes[name]) if name in notes else ToolOutput(f"no note {name}", True)


def _activities(ledger: Ledger, session: str, kind: str) -> list[Activity]:
    return [
        e.payload
        for e in ledger.chain_to_root(session)
        if isinstance(e.payload, Activity) and e.payload.type == kind
    ]


async def test_a_json_call_in_qwen_tags_runs_and_the_next_request_carries_it_natively(
    ledger: Ledger,
) -> None:
    notes = NotesTool()
    written = (
        "Let me check that note.\n<tool_call>\n"
        '{"name": "read_note", "arguments": {"name": "groceries"}}\n</tool_call>'
    )
    provider = ScriptedProvider(Scripted(text=written), Scripted(text="Eggs, rice and lemons."))
    runner = TurnRunner(ledger, provider, ToolRegistry([RecallTool(), notes]))
    session = ledger.create_session().id
    binding = ModelBinding(provider="scripted", model="m", details=None)
    events = [e async for e in runner.run(session, "what is on my grocery note?", binding)]

    assert notes.asked == [{"name": "groceries"}]
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.outcome == "completed"
    requested = [e for e in events if isinstance(e, ToolCallRequested)]
    turn_id = ledger.chain_to_root(session)[0].id
    assert [(r.id, r.name) for r in requested] == [(text_call_id(f"{turn_id}:0", 0), "read_note")]
    results = [e for e in events if isinstance(e, ToolResultReady)]
    assert [(r.name, r.is_error) for r in results] == [("read_note", False)]

    chain = ledger.chain_to_root(session)
    (activity,) = _activities(ledger, session, TEXT_FORM_CALL)
    assert activity.detail["text"] == written  # the words as the model wrote them
    assert activity.detail["calls"][0]["name"] == "read_note"
    step = next(e.payload for e in chain if isinstance(e.payload, AssistantStep))
    assert step.text == "Let me check that note."
    assert [c.name for c in step.tool_calls] == ["read_note"]
    result = next(e.payload for e in chain if isinstance(e.payload, ToolResult))
    assert result.tool_call_id == step.tool_calls[0].id and result.content == "eggs, rice, lemons"

    second = provider.requests[1]
    assistant, tool = second.messages[-2], second.messages[-1]
    assert assistant.tool_calls == step.tool_calls and "<tool_call>" not in assistant.content
    assert tool.role == "tool" and tool.tool_call_id == step.tool_calls[0].id


async def test_malformed_json_in_text_is_just_text(ledger: Ledger) -> None:
    notes = NotesTool()
    text = 'Try {"name": "read_note", "arguments": {"name": "x"} maybe?'  # never closed
    provider = ScriptedProvider(Scripted(text=text))
    runner = TurnRunner(ledger, provider, ToolRegistry([notes]))
    session = ledger.create_session().id
    binding = ModelBinding(provider="scripted", model="m", details=None)
    events = [e async for e in runner.run(session, "hm", binding)]
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert notes.asked == [] and len(provider.requests) == 1
    assert _activities(ledger, session, TEXT_FORM_CALL) == []
    step = next(
        e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, AssistantStep)
    )
    assert step.text == text and step.tool_calls == ()


async def test_a_call_of_a_tool_nobody_has_gets_the_real_tools_names(ledger: Ledger) -> None:
    """Issue #22: `{"name": "delete_all", "arguments": {}}` is a call in shape; it runs
    nothing, and the model reads which tools there are instead of its JSON being the answer."""
    notes = NotesTool()
    text = 'Try {"name": "delete_all", "arguments": {}}'
    provider = ScriptedProvider(Scripted(text=text), Scripted(text="I cannot delete notes."))
    runner = TurnRunner(ledger, provider, ToolRegistry([notes]))
    session = ledger.create_session().id
    binding = ModelBinding(provider="scripted", model="m", details=None)
    events = [e async for e in runner.run(session, "hm", binding)]
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert notes.asked == [] and len(provider.requests) == 2
    (result,) = [
        e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, ToolResult)
    ]
    assert result.is_error and "'delete_all'" in result.content and "`read_note`" in result.content


async def test_native_calls_are_not_doubled_by_a_call_also_written_in_the_text(
    ledger: Ledger,
) -> None:
    notes = NotesTool()
    provider = ScriptedProvider(
        Scripted(text='read_note(name="other")', calls=[("read_note", {"name": "groceries"})]),
        Scripted(text="done"),
    )
    runner = TurnRunner(ledger, provider, ToolRegistry([notes]))
    session = ledger.create_session().id
    binding = ModelBinding(provider="scripted", model="m", details=None)
    _ = [e async for e in runner.run(session, "note?", binding)]
    assert notes.asked == [{"name": "groceries"}]
    assert _activities(ledger, session, TEXT_FORM_CALL) == []


async def test_a_function_form_call_through_the_ollama_double(
    ledger: Ledger, double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    notes = NotesTool()
    double.enqueue(
        Reply(text='```python\nread_note(name="groceries")\n```'),
        Reply(text="You need eggs, rice and lemons."),
    )
    provider = OllamaProvider(http, double.url)
    runner = TurnRunner(ledger, provider, ToolRegistry([RecallTool(), notes]))
    session = ledger.create_session().id
    binding = await bind_model(provider, TOOL_MODEL)
    events = [e async for e in runner.run(session, "grocery note?", binding)]
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert notes.asked == [{"name": "groceries"}]
    (activity,) = _activities(ledger, session, TEXT_FORM_CALL)
    assert activity.detail["calls"][0]["form"] == "function"

    bodies = double.chat_bodies()
    assert len(bodies) == 2
    replayed = bodies[1]["messages"]
    call_message = next(m for m in replayed if m["role"] == "assistant" and m.get("tool_calls"))
    assert call_message["tool_calls"][0]["function"] == {
        "name": "read_note",
        "arguments": {"name": "groceries"},
    }
    assert call_message["content"] == ""  # the fence went with the call
    assert replayed[-1]["role"] == "tool" and replayed[-1]["content"] == "eggs, rice, lemons"
    bodies_kept = [
        e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, EvidenceBody)
    ]
    assert [b.content for b in bodies_kept] == ["eggs, rice, lemons"]
