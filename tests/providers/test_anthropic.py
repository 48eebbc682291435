"""The Anthropic adapter against a loopback Messages API (named server-sent events): streaming
text and thinking, usage in every cache tier, tool calls from input fragments, the over-length
error, retries (429, 529, an error event before any content), a refused key, `cache_control`
on at most four blocks at the assembler's breakpoints, and the model catalogue."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.doubles.anthropic_server import (
    AnthropicDouble,
    error_body,
    finish,
    reply,
    start,
    text_block,
    thinking_block,
    too_long,
    tool_block,
    usage,
)
from tests.doubles.openai_server import SSE, Fail
from tests.providers.hosted import (
    Sleeps,
    assembled_request,
    collect,
    failure,
    fast_retry,
    text_of,
)
from vak_desktop.context.payloads import Receipt, ToolCall, Usage
from vak_desktop.context.request import ChatRequest, Message, ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.providers import (
    AnthropicProvider,
    ContextOverflow,
    Done,
    KeyRefused,
    ModelNotFound,
    ThinkingDelta,
    ToolCallEvent,
    default_host,
    is_local,
    open_provider,
)
from vak_desktop.runtime import TurnRunner, bind_model, default_tools
from vak_desktop.runtime.events import TurnFinished

MODEL = "claude-sonnet-4-5"
KEY = "sk-ant-api03-0123456789abcdef"
WEATHER = ToolSpec(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@pytest.fixture(name="server")
def server_fixture() -> Iterator[AnthropicDouble]:
    models: dict[str, int | None] = {MODEL: 200_000, "claude-opus-4-1": 200_000}
    models["claude-haiku-4-5"] = None  # an older catalogue entry without token limits
    with AnthropicDouble(models=models, api_key=KEY) as double:
        yield double


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


@pytest.fixture(name="sleeps")
def sleeps_fixture() -> Sleeps:
    return Sleeps()


@pytest.fixture(name="provider")
def provider_fixture(
    server: AnthropicDouble, http: httpx.AsyncClient, sleeps: Sleeps
) -> AnthropicProvider:
    return AnthropicProvider(http, server.url, api_key=KEY, retry=fast_retry(sleeps))


def ask(text: str, **kwargs: Any) -> ChatRequest:
    return ChatRequest(model=MODEL, messages=(Message("user", text),), **kwargs)


def posts(server: AnthropicDouble) -> int:
    return sum(1 for r in server.requests if r[0] == "POST")


def last_body(server: AnthropicDouble) -> dict[str, Any]:
    body: dict[str, Any] = server.requests[-1][3]
    return body


async def test_streams_thinking_and_text_with_every_cache_tier(
    server: AnthropicDouble, provider: AnthropicProvider
) -> None:
    events: list[Any] = [start(MODEL, usage(40, 1, read=3000, written=500))]
    events += thinking_block(0, "The user wants a colour.")
    events += text_block(1, "The sky is blue.")
    events += finish("end_turn", 12)
    server.script(SSE(events, marker=None))
    out = await collect(provider.stream(ask("What colour is the sky?")))
    assert (
        "".join(e.text for e in out if isinstance(e, ThinkingDelta)) == "The user wants a colour."
    )
    assert text_of(out) == "The sky is blue."
    done = out[-1]
    assert isinstance(done, Done) and done.done_reason == "stop" and done.model == MODEL
    assert done.usage == Usage(
        input_tokens=40, output_tokens=12, cache_read_tokens=3000, cache_write_tokens=500
    )
    assert done.usage.prompt_tokens() == 3540  # input_tokens excludes both cache tiers
    _, path, headers, body = server.requests[-1]
    assert path == "/v1/messages" and headers["x-api-key"] == KEY
    assert headers["anthropic-version"] == "2023-06-01" and "authorization" not in headers
    assert body["max_tokens"] == 4096 and body["stream"] is True


async def test_history_renders_as_the_messages_api_wants(
    server: AnthropicDouble, provider: AnthropicProvider
) -> None:
    png = "iVBORw0KGgoAAAANSUhEUg=="
    calls = (
        ToolCall("toolu_1", "get_weather", {"city": "Paris"}),
        ToolCall("toolu_2", "get_weather", {"city": "Oslo"}),
    )
    request = ChatRequest(
        model=MODEL,
        messages=(
            Message("system", "Be brief."),
            Message("user", "Weather in Paris and Oslo? And this?", images=(png,)),
            Message("assistant", "Checking both.", thinking="hidden", tool_calls=calls),
            Message("tool", "18 C", tool_call_id="toolu_1", tool_name="get_weather"),
            Message("tool", "4 C", tool_call_id="toolu_2", tool_name="get_weather"),
        ),
        tools=(WEATHER,),
        temperature=0.3,
    )
    events = await collect(provider.stream(request))  # the double refuses what the API would
    assert isinstance(events[-1], Done)
    body = last_body(server)
    assert body["system"] == [{"type": "text", "text": "Be brief."}]
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": WEATHER.description,
            "input_schema": WEATHER.parameters,
        }
    ]
    assert body["temperature"] == 0.3
    user, assistant, results = body["messages"]
    assert user["content"][0]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": png,
    }
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Checking both."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
            {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Oslo"}},
        ],
    }
    assert results["role"] == "user" and [b["tool_use_id"] for b in results["content"]] == [
        "toolu_1",
        "toolu_2",
    ]
    assert "hidden" not in json.dumps(body)  # thinking without its signature is not sent back


async def test_tool_use_input_fragments_are_assembled(
    server: AnthropicDouble, provider: AnthropicProvider
) -> None:
    arguments = json.dumps({"city": "Paris", "unit": "celsius"})
    events: list[Any] = [start(MODEL, usage(300))]
    events += text_block(0, "Let me check.")
    events += tool_block(1, "toolu_9", "get_weather", arguments, parts=5)
    events += finish("tool_use", 40)
    server.script(SSE(events, marker=None))
    out = await collect(provider.stream(ask("Weather in Paris?", tools=(WEATHER,))))
    assert [e.call for e in out if isinstance(e, ToolCallEvent)] == [
        ToolCall("toolu_9", "get_weather", {"city": "Paris", "unit": "celsius"})
    ]
    assert isinstance(out[-1], Done) and out[-1].done_reason == "tool_calls"


@pytest.mark.parametrize("where", ["status", "stream"])
async def test_prompt_too_long_is_context_overflow(
    server: AnthropicDouble, provider: AnthropicProvider, sleeps: Sleeps, where: str
) -> None:
    refusal = too_long(208_512, 200_000)
    if where == "status":
        server.script(refusal)
    else:
        assert isinstance(refusal.body, dict)
        server.script(SSE([start(MODEL, usage(0)), ("error", refusal.body)], marker=None))
    error = await failure(provider, ask("long"))
    assert isinstance(error, ContextOverflow)
    assert (error.requested, error.limit) == (208_512, 200_000)
    assert sleeps.waits == [] and posts(server) == 1


async def test_rate_limit_and_overload_are_retried(
    server: AnthropicDouble, provider: AnthropicProvider, sleeps: Sleeps
) -> None:
    limited = Fail(429, error_body("rate_limit_error", "Number of requests exceeded"))
    limited.headers["retry-after"] = "3"
    overloaded = Fail(529, error_body("overloaded_error", "Overloaded"))
    in_stream = SSE(
        [start(MODEL, usage(5)), ("error", error_body("overloaded_error", "Overloaded"))]
    )
    in_stream.marker = None
    server.script(limited, overloaded, in_stream, reply(MODEL, "finally"))
    assert text_of(await collect(provider.stream(ask("hi")))) == "finally"
    assert sleeps.waits == [3.0, 1.5, 3.0] and posts(server) == 4


async def test_refused_key_is_explained(server: AnthropicDouble, http: httpx.AsyncClient) -> None:
    wrong = "sk-ant-api03-wrong-key-000"
    provider = AnthropicProvider(http, server.url, api_key=wrong, key_name="claude")
    error = await failure(provider, ask("hi"))
    assert isinstance(error, KeyRefused) and error.status == 401
    assert "API key for provider 'claude' was refused" in str(error)
    assert wrong not in str(error) and wrong not in repr(provider)
    missing = AnthropicProvider(http, server.url, key_name="claude")
    assert "none is stored for provider 'claude'" in str(await failure(missing, ask("hi")))


def marked_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = list(body.get("system", [])) + [b for m in body["messages"] for b in m["content"]]
    return [b for b in blocks if "cache_control" in b]


async def test_cache_control_sits_at_the_assemblers_breakpoints(
    server: AnthropicDouble, provider: AnthropicProvider, ledger: Ledger
) -> None:
    request = assembled_request(ledger, MODEL)
    assert len(request.cache_breakpoints) == 3
    await collect(provider.stream(request))
    marked = marked_blocks(last_body(server))
    assert all(b["cache_control"] == {"type": "ephemeral"} for b in marked)
    expected = []
    for index in request.cache_breakpoints:
        message = request.messages[index]
        expected.append(message.tool_call_id if message.role == "tool" else message.content)
    found = [b.get("tool_use_id") or b.get("text") for b in marked]
    assert found == expected
    assert request.messages[request.cache_breakpoints[0]].role == "system"  # tools + system


async def test_never_more_than_four_cache_blocks(
    server: AnthropicDouble, provider: AnthropicProvider, ledger: Ledger
) -> None:
    request = assembled_request(ledger, MODEL, history_turns=6)
    crowded = ChatRequest(
        model=MODEL,
        messages=request.messages,
        tools=request.tools,
        cache_breakpoints=tuple(range(0, len(request.messages), 2)),
    )
    assert len(crowded.cache_breakpoints) > 4
    events = await collect(provider.stream(crowded))  # the double refuses a fifth block
    assert isinstance(events[-1], Done)
    marked = marked_blocks(last_body(server))
    assert len(marked) == 4 and "cache_control" in last_body(server)["system"][-1]


async def test_thinking_asks_for_a_budget_below_the_cap(
    server: AnthropicDouble, provider: AnthropicProvider
) -> None:
    await collect(provider.stream(ask("hard question", think=True, temperature=0.2)))
    body = last_body(server)
    assert body["thinking"]["type"] == "enabled"
    assert 1024 <= body["thinking"]["budget_tokens"] < body["max_tokens"]
    assert "temperature" not in body


async def test_catalogue_is_the_metadata_rung(
    server: AnthropicDouble, provider: AnthropicProvider
) -> None:
    assert [m.name for m in await provider.list_models()] == list(server.models)
    listed = [r for r in server.requests if r[1] == "/v1/models"]
    assert len(listed) == 2  # two pages of two
    details = await provider.show(MODEL)
    assert details.declared_window == 200_000 and "thinking" in details.capabilities
    assert (await provider.show("claude-haiku-4-5")).declared_window == 200_000
    with pytest.raises(ModelNotFound):
        await provider.show("claude-nope")


async def test_registered_as_hosted(server: AnthropicDouble, http: httpx.AsyncClient) -> None:
    assert default_host("anthropic") == "https://api.anthropic.com"
    provider = open_provider("anthropic", http, server.url, api_key=KEY)
    assert isinstance(provider, AnthropicProvider) and not is_local(provider)
    assert text_of(await collect(provider.stream(ask("hi")))) == server.default_text


async def test_a_real_turn_with_a_tool_step_round_trips(
    server: AnthropicDouble, provider: AnthropicProvider, ledger: Ledger
) -> None:
    """The runtime's own second request (its tool step and result appended) is one the API
    accepts, and the receipts keep every cache tier."""
    first: list[Any] = [start(MODEL, usage(900, 1, read=0, written=2400))]
    first += tool_block(0, "toolu_r", "recall", json.dumps({"turn": 1}))
    first += finish("tool_use", 30)
    second: list[Any] = [start(MODEL, usage(60, 1, read=2400))]
    second += text_block(0, "Nothing earlier to recall.")
    second += finish("end_turn", 9)
    server.script(SSE(first, marker=None), SSE(second, marker=None))
    session = ledger.create_session().id
    binding = await bind_model(provider, MODEL)
    runner = TurnRunner(ledger, provider, default_tools())
    events = [e async for e in runner.run(session, "Recall turn 1, please.", binding)]
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.outcome == "completed", finished
    bodies = [r[3] for r in server.requests if r[0] == "POST"]
    assert len(bodies) == 2
    blocks = [b["type"] for m in bodies[1]["messages"] for b in m["content"]]
    assert blocks[-2:] == ["tool_use", "tool_result"]
    receipts = [e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, Receipt)]
    assert [r.usage.prompt_tokens() for r in receipts] == [3300, 2460]
    assert receipts[0].usage.cache_write_tokens == 2400
    assert receipts[1].usage.cache_read_tokens == 2400
