"""The Anthropic adapter checked against the official `anthropic` SDK, which no one here wrote:
request bodies against its `MessageCreateParamsStreaming` (strictly, `sdk_types.py`), and stream
fixtures in its published event shapes replayed both through the SDK's own accumulator and
through our adapter (on the loopback double), which must agree: thinking with its signature,
tool input, and a tool call cut off at max_tokens.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import RawMessageStreamEvent
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from pydantic import TypeAdapter

from tests.doubles.anthropic_server import (
    AnthropicDouble,
    finish,
    start,
    text_block,
    thinking_block,
    tool_block,
    usage,
)
from tests.doubles.openai_server import SSE
from tests.providers.hosted import assembled_request, collect
from tests.providers.sdk_types import sdk_errors
from vak_desktop.context.payloads import Activity, AssistantStep
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Ledger
from vak_desktop.providers import (
    AnthropicProvider,
    StreamNotice,
    ThinkingSigned,
    ToolCallEvent,
)
from vak_desktop.providers.anthropic_wire import accepts_sampling, render
from vak_desktop.runtime import TurnRunner, bind_model, default_tools
from vak_desktop.runtime.events import Notice, TurnFinished

MODEL = "claude-sonnet-4-5"
KEY = "sk-ant-api03-0123456789abcdef"
SIGNATURE = "EqQBCgIYAhIM"  # what `thinking_block` signs with
EVENTS = TypeAdapter(RawMessageStreamEvent)


@pytest.fixture(name="server")
def server_fixture() -> Iterator[AnthropicDouble]:
    with AnthropicDouble(api_key=KEY, models={MODEL: 200_000}) as server:
        yield server


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def sdk_message(events: list[Any]) -> Any:
    """The message the SDK's own stream accumulator builds from these events."""
    snapshot, buffers = None, {}
    for _, data in events:
        snapshot = accumulate_event(
            event=EVENTS.validate_python(data), current_snapshot=snapshot, json_bufs=buffers
        )
    return snapshot


def posted(server: AnthropicDouble) -> list[dict[str, Any]]:
    return [r[3] for r in server.requests if r[0] == "POST"]


def thinking_tool_loop() -> tuple[list[Any], list[Any]]:
    first: list[Any] = [start(MODEL, usage(900))]
    first += thinking_block(0, "The user wants turn 1; recall reads it.")
    first += tool_block(1, "toolu_1", "recall", json.dumps({"turn": 1}))
    first += finish("tool_use", 40)
    second: list[Any] = [start(MODEL, usage(60))]
    second += text_block(0, "Nothing earlier to recall.")
    second += finish("end_turn", 9)
    return first, second


async def test_thinking_and_its_signature_go_back_within_the_tool_loop(
    server: AnthropicDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    first, second = thinking_tool_loop()
    server.script(SSE(first, marker=None), SSE(second, marker=None))
    provider = AnthropicProvider(http, server.url, api_key=KEY)
    binding = await bind_model(provider, MODEL)
    session = ledger.create_session().id
    runner = TurnRunner(ledger, provider, default_tools())
    events = [e async for e in runner.run(session, "Recall turn 1.", binding, think=True)]
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"

    expected = sdk_message(first).content[0]  # the SDK's reading of the same stream
    assert expected.type == "thinking" and expected.signature == SIGNATURE
    step = next(
        e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, AssistantStep)
    )
    assert [(t.thinking, t.signature) for t in step.signed_thinking] == [
        (expected.thinking, expected.signature)
    ]
    bodies = posted(server)
    assistant = next(m for m in bodies[1]["messages"] if m["role"] == "assistant")
    assert [b["type"] for b in assistant["content"]] == ["thinking", "tool_use"]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": expected.thinking,
        "signature": SIGNATURE,
    }
    for body in bodies:  # both requests are ones the SDK's request type accepts
        assert sdk_errors(MessageCreateParamsStreaming, body) == []


async def test_a_redacted_thinking_block_goes_back_as_it_came(
    server: AnthropicDouble, http: httpx.AsyncClient
) -> None:
    events: list[Any] = [start(MODEL, usage(10))]
    events.append(
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
            },
        )
    )
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events += text_block(1, "Done.")
    events += finish("end_turn", 3)
    server.script(SSE(events, marker=None))
    provider = AnthropicProvider(http, server.url, api_key=KEY)
    out = await collect(
        provider.stream(ChatRequest(model=MODEL, messages=(Message("user", "hi"),)))
    )
    signed = [e.block for e in out if isinstance(e, ThinkingSigned)]
    assert signed[0].redacted == sdk_message(events).content[0].data
    again = render(
        ChatRequest(
            model=MODEL,
            messages=(
                Message("user", "hi"),
                Message("assistant", "Done.", signed_thinking=tuple(signed)),
                Message("user", "and?"),
            ),
        )
    )
    assert again["messages"][1]["content"][0] == {
        "type": "redacted_thinking",
        "data": "EmwKAhgBEgy3va3pzix",
    }
    assert sdk_errors(MessageCreateParamsStreaming, again) == []


async def test_a_tool_call_cut_at_max_tokens_is_a_notice_and_an_activity_keeping_its_input(
    server: AnthropicDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    partial = '{"turn": 1, "query": "the fig'  # the output limit struck mid-string
    events: list[Any] = [start(MODEL, usage(50))]
    events += tool_block(0, "toolu_cut", "recall", partial)
    events += finish("max_tokens", 4096)
    server.script(SSE(events, marker=None))
    # the SDK keeps the partial input in its json buffer and leaves the call's input unparsed
    snapshot = sdk_message(events)
    assert snapshot.stop_reason == "max_tokens" and snapshot.content[0].type == "tool_use"
    provider = AnthropicProvider(http, server.url, api_key=KEY)
    binding = await bind_model(provider, MODEL)
    session = ledger.create_session().id
    runner = TurnRunner(ledger, provider, default_tools())
    seen = [e async for e in runner.run(session, "Recall turn 1.", binding)]
    notices = [e.message for e in seen if isinstance(e, Notice)]
    assert any("output limit" in n and "`recall`" in n for n in notices), notices
    cut = [
        e.payload
        for e in ledger.chain_to_root(session)
        if isinstance(e.payload, Activity) and e.payload.type == "stream_tool_call_cut"
    ]
    assert len(cut) == 1
    assert base64.b64decode(cut[0].detail["raw_base64"]).decode() == partial
    assert not any(isinstance(e, ToolCallEvent) for e in seen)


async def test_the_adapter_reads_tool_input_as_the_sdk_does(
    server: AnthropicDouble, http: httpx.AsyncClient
) -> None:
    first, _ = thinking_tool_loop()
    server.script(SSE(first, marker=None))
    provider = AnthropicProvider(http, server.url, api_key=KEY)
    out = await collect(
        provider.stream(ChatRequest(model=MODEL, messages=(Message("user", "hi"),)))
    )
    call = next(e.call for e in out if isinstance(e, ToolCallEvent))
    sdk_call = sdk_message(first).content[1]
    assert (call.id, call.name, call.arguments) == (sdk_call.id, sdk_call.name, sdk_call.input)
    assert not [e for e in out if isinstance(e, StreamNotice)]


def test_temperature_goes_only_to_models_that_accept_it() -> None:
    ask = (Message("user", "hi"),)
    for model, accepted in [
        ("claude-sonnet-4-5", True),
        ("claude-opus-4-6", True),
        ("claude-3-5-haiku-20241022", True),
        ("claude-opus-4-7", False),
        ("claude-opus-5", False),
        ("claude-sonnet-5-20261001", False),
    ]:
        assert accepts_sampling(model) is accepted, model
        body = render(ChatRequest(model=model, messages=ask, temperature=0.2))
        assert ("temperature" in body) is accepted, model
        # anthropic 2.14's request type has no sampling parameters at all (the API dropped
        # them from 4.7 on); the older models still take `temperature` at our API version
        body.pop("temperature", None)
        assert sdk_errors(MessageCreateParamsStreaming, body) == []


def test_an_assembled_session_request_matches_the_sdk_request_type(ledger: Ledger) -> None:
    request = assembled_request(ledger, MODEL)
    for think in (None, True):
        body = render(ChatRequest(**{**request.__dict__, "think": think}))
        assert sdk_errors(MessageCreateParamsStreaming, body) == []
