"""The cache watch: a step that is not an append, a changed prefix, a short cache read — each
named in an Activity; ordinary turns write none."""

from __future__ import annotations

import dataclasses
from typing import Any

from tests.context.sessions import profile
from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.capacity.cache_watch import (
    CACHE_BREAK,
    CACHE_MISS,
    PREFIX_CHANGED,
    step_break,
)
from vak_desktop.context.payloads import Activity, Ewma, Receipt, Usage
from vak_desktop.context.request import ChatRequest, Message, ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import ModelBinding, ToolOutput, ToolRegistry, TurnRunner, default_tools
from vak_desktop.runtime.tools import ToolContext
from vak_desktop.runtime.tools.recall import RecallTool
from vak_desktop.runtime.turn.cache_watch import CacheWatch

WATCHED = {CACHE_BREAK, PREFIX_CHANGED, CACHE_MISS}


class EchoTool:
    spec = ToolSpec("echo", "Says back what it was given.")
    always_loaded = True  # not in the catalogue: adding it changes the tool list alone

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput(str(arguments))


def _binding() -> ModelBinding:
    return ModelBinding(provider="scripted", model="m", details=None)


async def _turn(runner: TurnRunner, session: str, text: str) -> None:
    async for _ in runner.run(session, text, _binding()):
        pass


def _watched(ledger: Ledger, session: str) -> list[Activity]:
    return [
        e.payload
        for e in ledger.chain_to_root(session)
        if isinstance(e.payload, Activity) and e.payload.type in WATCHED
    ]


async def test_tool_turns_on_one_prefix_write_no_cache_activity(ledger: Ledger) -> None:
    provider = ScriptedProvider(
        Scripted(calls=[("echo", {"a": 1})]),
        Scripted(text="done"),
        Scripted(calls=[("echo", {"b": 2})]),
        Scripted(calls=[("echo", {"c": 3})]),
        Scripted(text="done again"),
    )
    runner = TurnRunner(ledger, provider, ToolRegistry([RecallTool(), EchoTool()]))
    session = ledger.create_session().id
    await _turn(runner, session, "first")
    await _turn(runner, session, "second")
    assert _watched(ledger, session) == []
    receipts = [e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, Receipt)]
    assert len({r.prefix_digest for r in receipts}) == 1
    assert all([d.split("=")[0] for d in r.tool_digests] == ["recall", "echo"] for r in receipts)


async def test_a_changed_system_prompt_and_tool_set_are_named(ledger: Ledger) -> None:
    provider = ScriptedProvider(Scripted(text="one"), Scripted(text="two"), Scripted(text="3"))
    session = ledger.create_session().id
    await _turn(TurnRunner(ledger, provider, default_tools()), session, "first")
    await _turn(
        TurnRunner(ledger, provider, default_tools(), system_prompt="Be terse."), session, "2nd"
    )
    tools = default_tools()
    tools.add(EchoTool())
    await _turn(TurnRunner(ledger, provider, tools, system_prompt="Be terse."), session, "3rd")
    changes = _watched(ledger, session)
    assert [a.type for a in changes] == [PREFIX_CHANGED, PREFIX_CHANGED]
    assert "the system prompt changed" in changes[0].message
    assert "tools added: echo" in changes[1].message
    assert "system prompt" not in changes[1].message


def _request(*contents: str, tools: tuple[ToolSpec, ...] = ()) -> ChatRequest:
    messages = (Message("system", "S"), *(Message("user", c) for c in contents))
    return ChatRequest(model="m", messages=messages, tools=tools)


def test_step_break_names_the_changed_message_and_the_tool_list() -> None:
    assert step_break(_request("a"), _request("a", "b"), 1) is None
    changed = step_break(_request("a", "b"), _request("a", "B", "c"), 2)
    assert changed is not None and changed.detail["message"] == 2
    assert "message 2 (user) changed: “b” → “B”" in changed.message
    shrunk = step_break(_request("a", "b"), _request("a"), 1)
    assert shrunk is not None and "shrank from 3 to 2" in shrunk.message
    x, y = ToolSpec("x", "X."), ToolSpec("y", "Y.")
    assert step_break(_request(tools=(x,)), _request(tools=(x, y)), 1) is None  # appended
    reordered = step_break(_request(tools=(x, y)), _request(tools=(y, x)), 1)
    assert reordered is not None and "reordered" in reordered.message
    edited = step_break(_request(tools=(x,)), _request(tools=(ToolSpec("x", "Other."),)), 1)
    assert edited is not None and "the schema of x changed" in edited.message


def test_a_short_provider_reported_cache_read_is_a_cache_miss() -> None:
    reported = dataclasses.replace(profile(horizon=50_000), cache="provider_reported")
    first = _request("a" * 4_000)
    second = _request("a" * 4_000, "b")
    step0 = Receipt("p", "m", Usage(input_tokens=200, cache_read_tokens=800), step=0)
    watch = CacheWatch(None)
    assert watch.observe(first, step0, reported, 0.25) == []
    full = Receipt("p", "m", Usage(input_tokens=10, cache_read_tokens=1_000), step=1)
    assert watch.observe(second, full, reported, 0.25) == []
    third = _request("a" * 4_000, "b", "c")
    cold = Receipt("p", "m", Usage(input_tokens=1_000, cache_read_tokens=0), step=2)
    [miss] = watch.observe(third, cold, reported, 0.25)
    assert miss.type == CACHE_MISS and miss.detail["expected"] == 1_010
    # a runner that reports no cache is never held to it
    quiet = CacheWatch(None)
    quiet.observe(first, step0, profile(horizon=50_000), 0.25)
    assert quiet.observe(second, cold, profile(horizon=50_000), 0.25) == []


def test_a_new_turn_is_held_to_its_measured_prefix() -> None:
    request = _request("a" * 400, tools=(ToolSpec("x", "X."),))
    digest = "b3:measured"
    measured = dataclasses.replace(
        profile(horizon=50_000),
        cache="provider_reported",
        prefix_tokens=Ewma(300.0, 2),
        prefix_chars=1_200,
        prefix_digest=digest,
    )
    previous = Receipt("p", "m", prefix_digest=digest)
    short = Receipt("p", "m", Usage(input_tokens=500, cache_read_tokens=120), prefix_digest=digest)
    [miss] = CacheWatch(previous).observe(request, short, measured, 0.25)
    assert miss.type == CACHE_MISS and miss.detail["expected"] == 300  # the measured count
    full = Receipt("p", "m", Usage(input_tokens=200, cache_read_tokens=300), prefix_digest=digest)
    assert CacheWatch(previous).observe(request, full, measured, 0.25) == []
