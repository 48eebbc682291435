"""The OpenAI adapter against a loopback server speaking the chat-completions wire format:
streaming, cached-token usage, tool calls, the over-length error, retries, a refused key, the
session as `prompt_cache_key`, and the metadata rung."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.doubles.openai_server import (
    SSE,
    Fail,
    OpenAIDouble,
    chunk,
    openai_overflow,
    text_chunks,
    tool_call_chunks,
    usage_chunk,
)
from tests.providers.hosted import (
    Sleeps,
    assembled_request,
    collect,
    failure,
    fast_retry,
    text_of,
)
from vak_desktop.context.payloads import ToolCall, Usage
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Ledger
from vak_desktop.providers import (
    ContextOverflow,
    Done,
    KeyRefused,
    ModelInspector,
    ModelNotFound,
    OpenAIProvider,
    RateLimited,
    ServerError,
    ToolCallEvent,
    default_host,
    is_local,
    open_provider,
)

MODEL = "gpt-4o-mini"
KEY = "sk-proj-test-0123456789abcdef"


@pytest.fixture(name="server")
def server_fixture() -> Iterator[OpenAIDouble]:
    with OpenAIDouble(models=(MODEL, "gpt-4.1", "ft:custom"), api_key=KEY) as double:
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
    server: OpenAIDouble, http: httpx.AsyncClient, sleeps: Sleeps
) -> OpenAIProvider:
    return OpenAIProvider(http, server.url, api_key=KEY, retry=fast_retry(sleeps))


def ask(text: str, **kwargs: object) -> ChatRequest:
    return ChatRequest(model=MODEL, messages=(Message("user", text),), **kwargs)  # type: ignore[arg-type]


def posts(server: OpenAIDouble) -> int:
    return sum(1 for r in server.requests if r[0] == "POST")


async def test_streams_text_with_cached_tokens_in_usage(
    server: OpenAIDouble, provider: OpenAIProvider
) -> None:
    server.script(SSE([*text_chunks("Cached and fresh.", 3, MODEL), usage_chunk(1800, 4, 1536)]))
    events = await collect(provider.stream(ask("again", max_tokens=50)))
    assert text_of(events) == "Cached and fresh."
    done = events[-1]
    assert isinstance(done, Done) and done.model == MODEL and done.done_reason == "stop"
    assert done.usage == Usage(input_tokens=264, output_tokens=4, cache_read_tokens=1536)
    assert done.usage.prompt_tokens() == 1800  # OpenAI's prompt_tokens includes cached_tokens
    _, path, headers, body = server.requests[-1]
    assert path == "/v1/chat/completions" and headers["authorization"] == f"Bearer {KEY}"
    assert body["max_completion_tokens"] == 50 and "max_tokens" not in body


async def test_tool_call_fragments_are_assembled(
    server: OpenAIDouble, provider: OpenAIProvider
) -> None:
    arguments = json.dumps({"query": "rayleigh scattering", "limit": 5})
    server.script(
        SSE([*tool_call_chunks([("call_x", "search", arguments)], 5), usage_chunk(90, 20)])
    )
    events = await collect(provider.stream(ask("search it")))
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert calls == [ToolCall("call_x", "search", {"query": "rayleigh scattering", "limit": 5})]
    assert isinstance(events[-1], Done) and events[-1].done_reason == "tool_calls"


async def test_reasoning_models_stream_reasoning_usage(
    server: OpenAIDouble, provider: OpenAIProvider
) -> None:
    final = usage_chunk(30, 200)
    final["usage"]["completion_tokens_details"] = {"reasoning_tokens": 180}
    server.script(SSE([chunk({"content": "42"}, "stop"), final]))
    done = (await collect(provider.stream(ask("think"))))[-1]
    assert isinstance(done, Done) and done.usage.reasoning_tokens == 180


async def test_context_length_exceeded_is_context_overflow(
    server: OpenAIDouble, provider: OpenAIProvider, sleeps: Sleeps
) -> None:
    server.script(openai_overflow(131_000, 128_000))
    error = await failure(provider, ask("long"))
    assert isinstance(error, ContextOverflow) and (error.requested, error.limit) == (
        131_000,
        128_000,
    )
    assert sleeps.waits == [] and posts(server) == 1  # never retried: it would fail the same


async def test_the_code_decides_not_the_message(
    server: OpenAIDouble, provider: OpenAIProvider
) -> None:
    body = {"error": {"message": "Too long.", "type": "invalid_request_error"}}
    body["error"]["code"] = "context_length_exceeded"
    server.script(Fail(400, body))
    error = await failure(provider, ask("long"))
    assert isinstance(error, ContextOverflow) and error.limit is None


async def test_rate_limit_then_success_honours_retry_after(
    server: OpenAIDouble, provider: OpenAIProvider, sleeps: Sleeps
) -> None:
    limited = Fail(429, {"error": {"message": "Rate limit reached", "type": "requests"}})
    limited.headers["Retry-After"] = "2"
    server.script(limited, SSE([*text_chunks("after the pause"), usage_chunk(10, 3)]))
    events = await collect(provider.stream(ask("hi")))
    assert text_of(events) == "after the pause"
    assert sleeps.waits == [2.0] and posts(server) == 2


async def test_server_errors_back_off_exponentially_then_succeed(
    server: OpenAIDouble, provider: OpenAIProvider, sleeps: Sleeps
) -> None:
    failed = {"error": {"message": "The server had an error", "type": "server_error"}}
    server.script(Fail(500, failed), Fail(502, failed), SSE(text_chunks("third time")))
    assert text_of(await collect(provider.stream(ask("hi")))) == "third time"
    assert sleeps.waits == [0.75, 1.5] and posts(server) == 3


async def test_retries_are_bounded(
    server: OpenAIDouble, provider: OpenAIProvider, sleeps: Sleeps
) -> None:
    busy = {"error": {"message": "Slow down", "type": "requests"}}
    server.script(*(Fail(429, busy) for _ in range(5)))
    error = await failure(provider, ask("hi"))
    assert isinstance(error, RateLimited)
    assert len(sleeps.waits) == 3 and posts(server) == 4


async def test_a_long_retry_after_is_not_waited_for(
    server: OpenAIDouble, provider: OpenAIProvider, sleeps: Sleeps
) -> None:
    server.script(Fail(429, {"error": {"message": "quota"}}, {"Retry-After": "3600"}))
    error = await failure(provider, ask("hi"))
    assert isinstance(error, RateLimited) and error.retry_after == 3600.0
    assert sleeps.waits == []


async def test_an_exhausted_quota_is_not_retried(
    server: OpenAIDouble, provider: OpenAIProvider, sleeps: Sleeps
) -> None:
    message = "You exceeded your current quota, please check your plan and billing details."
    body = {
        "error": {"message": message, "type": "insufficient_quota", "code": "insufficient_quota"}
    }
    server.script(Fail(429, body))
    error = await failure(provider, ask("hi"))
    assert not isinstance(error, RateLimited) and "no quota left" in str(error)
    assert sleeps.waits == [] and posts(server) == 1


async def test_nothing_is_retried_once_an_event_was_yielded(
    server: OpenAIDouble, provider: OpenAIProvider, sleeps: Sleeps
) -> None:
    broken = {"error": {"message": "upstream failed mid-answer", "type": "server_error"}}
    server.script(SSE([chunk({"content": "Half an ans"}), broken]))
    seen: list[str] = []
    with pytest.raises(ServerError):
        async for event in provider.stream(ask("hi")):
            seen.append(getattr(event, "text", ""))
    assert seen == ["Half an ans"] and sleeps.waits == [] and posts(server) == 1


async def test_refused_key_names_the_entry_and_where_to_set_it(
    server: OpenAIDouble, http: httpx.AsyncClient
) -> None:
    wrong = "sk-proj-wrong-9876543210"
    provider = OpenAIProvider(http, server.url, api_key=wrong, key_name="work-openai")
    error = await failure(provider, ask("hi"))
    assert isinstance(error, KeyRefused) and error.status == 401
    message = str(error)
    assert "API key for provider 'work-openai' was refused" in message
    assert "Settings → Providers" in message and "keyring" in message
    assert wrong not in message and KEY not in message and "sk-" not in message
    assert wrong not in repr(provider)


async def test_session_is_the_prompt_cache_key(
    server: OpenAIDouble, provider: OpenAIProvider, ledger: Ledger
) -> None:
    request = assembled_request(ledger, MODEL)
    assert request.cache_breakpoints and request.session_key
    await collect(provider.stream(request))
    await collect(provider.stream(request))
    first, second = (r[3] for r in server.requests[-2:])
    assert first["prompt_cache_key"] == second["prompt_cache_key"] == request.session_key
    # OpenAI caches every prefix on its own: the breakpoints need no marks, only byte-stable
    # messages (the same projection twice is the same bytes)
    assert first["messages"] == second["messages"]
    assert "cache_control" not in json.dumps(first)
    assert [m["role"] for m in first["messages"]][-2:] == ["assistant", "tool"]


async def test_metadata_rung(server: OpenAIDouble, provider: OpenAIProvider) -> None:
    assert isinstance(provider, ModelInspector)
    assert (await provider.show(MODEL)).declared_window == 128_000  # the family's window
    assert (await provider.show("gpt-4.1")).declared_window == 1_047_576
    assert (await provider.show("ft:custom")).declared_window is None  # nothing known: no claim
    server.windows["ft:custom"] = 16_000  # a gateway that lists windows is believed
    server.window_field = "context_window"
    assert (await provider.show("ft:custom")).declared_window == 16_000
    with pytest.raises(ModelNotFound):
        await provider.show("gpt-nope")
    assert server.requests[-1][:2] == ("GET", "/v1/models/gpt-nope")
    # after a listing, showing each listed model costs no request
    names = [m.name for m in await provider.list_models()]
    before = len(server.requests)
    assert [(await provider.show(n)).name for n in names] == names
    assert len(server.requests) == before


async def test_registered_as_hosted(server: OpenAIDouble, http: httpx.AsyncClient) -> None:
    assert default_host("openai") == "https://api.openai.com"
    provider = open_provider("openai", http, server.url + "/v1", api_key=KEY)
    assert isinstance(provider, OpenAIProvider) and provider.host == server.url
    assert not is_local(provider)  # hosted even when reached over loopback
    assert text_of(await collect(provider.stream(ask("hi")))) == server.default_text
