"""The OpenRouter adapter against a loopback server speaking its chat-completions dialect under
`/api`: streamed reasoning, usage with both cache tiers and cost, tool calls, the over-length
error, retries, a refused key, `session_id` (and `cache_control` at the assembler's breakpoints
for a model that caches only where told), and the catalogue as the metadata rung."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.doubles.openai_server import (
    SSE,
    Fail,
    OpenAIDouble,
    Raw,
    chunk,
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
    ModelNotFound,
    OpenRouterProvider,
    ThinkingDelta,
    ToolCallEvent,
    default_host,
    is_local,
    open_provider,
)

MODEL = "meta-llama/llama-3.3-70b-instruct"
CLAUDE = "anthropic/claude-sonnet-4.5"
KEY = "sk-or-v1-0123456789abcdef0123"


@pytest.fixture(name="server")
def server_fixture() -> Iterator[OpenAIDouble]:
    windows = {MODEL: 131_072, CLAUDE: 1_000_000}
    with OpenAIDouble(models=(MODEL, CLAUDE), api_key=KEY, windows=windows) as double:
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
) -> OpenRouterProvider:
    return OpenRouterProvider(http, server.url + "/api/v1", api_key=KEY, retry=fast_retry(sleeps))


def ask(text: str, model: str = MODEL) -> ChatRequest:
    return ChatRequest(model=model, messages=(Message("user", text),))


async def test_streams_reasoning_then_text_with_both_cache_tiers(
    server: OpenAIDouble, provider: OpenRouterProvider
) -> None:
    usage = usage_chunk(5000, 40, cached=3000, cache_write_tokens=1500, cost=0.0021)
    server.script(
        SSE(
            [
                Raw(b": OPENROUTER PROCESSING"),
                chunk({"role": "assistant", "reasoning": "Compare sizes. "}),
                chunk({"reasoning": "Oslo is smaller."}),
                *text_chunks("Paris is larger.", 4, MODEL),
                usage,
            ]
        )
    )
    events = await collect(provider.stream(ask("Paris or Oslo?")))
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thinking == "Compare sizes. Oslo is smaller." and text_of(events) == "Paris is larger."
    done = events[-1]
    assert isinstance(done, Done)
    assert done.usage == Usage(
        input_tokens=500, output_tokens=40, cache_read_tokens=3000, cache_write_tokens=1500
    )
    assert done.usage.prompt_tokens() == 5000
    method, path, headers, _ = server.requests[-1]
    assert (method, path) == ("POST", "/api/v1/chat/completions")
    assert headers["authorization"] == f"Bearer {KEY}" and headers["x-title"] == "Vak Desktop"


async def test_tool_calls(server: OpenAIDouble, provider: OpenRouterProvider) -> None:
    calls = [
        ("t1", "recall", json.dumps({"turn": 3})),
        ("t2", "recall", json.dumps({"id": "b3:9"})),
    ]
    server.script(SSE([*tool_call_chunks(calls, 2), usage_chunk(70, 12)]))
    events = await collect(provider.stream(ask("recall both")))
    assert [e.call for e in events if isinstance(e, ToolCallEvent)] == [
        ToolCall("t1", "recall", {"turn": 3}),
        ToolCall("t2", "recall", {"id": "b3:9"}),
    ]


async def test_over_length_is_context_overflow(
    server: OpenAIDouble, provider: OpenRouterProvider
) -> None:
    message = (
        "This endpoint's maximum context length is 131072 tokens. However, you requested about "
        "140000 tokens (139000 of text input, 1000 in the output). Please reduce the length."
    )
    server.script(Fail(400, {"error": {"message": message, "code": 400}}))
    error = await failure(provider, ask("long"))
    assert isinstance(error, ContextOverflow) and (error.requested, error.limit) == (
        140_000,
        131_072,
    )


async def test_rate_limit_then_success(
    server: OpenAIDouble, provider: OpenRouterProvider, sleeps: Sleeps
) -> None:
    limited = Fail(429, {"error": {"code": 429, "message": "Rate limit exceeded"}})
    server.script(limited, Fail(503, {"error": {"code": 503, "message": "No providers"}}))
    server.script(SSE(text_chunks("routed")))
    assert text_of(await collect(provider.stream(ask("hi")))) == "routed"
    assert sleeps.waits == [0.75, 1.5]


async def test_refused_key_is_explained(server: OpenAIDouble, http: httpx.AsyncClient) -> None:
    provider = OpenRouterProvider(http, server.url + "/api", api_key="sk-or-v1-bad-000000")
    error = await failure(provider, ask("hi"))
    assert isinstance(error, KeyRefused) and "'openrouter'" in str(error)
    assert "sk-or" not in str(error)


async def test_session_id_rides_every_request(
    server: OpenAIDouble, provider: OpenRouterProvider, ledger: Ledger
) -> None:
    request = assembled_request(ledger, MODEL)
    await collect(provider.stream(request))
    body = server.requests[-1][3]
    assert body["session_id"] == body["prompt_cache_key"] == request.session_key
    assert "cache_control" not in json.dumps(body)  # this upstream caches prefixes itself


async def test_an_explicit_cache_model_is_marked_at_the_breakpoints(
    server: OpenAIDouble, provider: OpenRouterProvider, ledger: Ledger
) -> None:
    request = assembled_request(ledger, CLAUDE)
    await collect(provider.stream(request))
    messages = server.requests[-1][3]["messages"]
    marked = [
        i
        for i, m in enumerate(messages)
        if isinstance(m["content"], list) and "cache_control" in m["content"][-1]
    ]
    assert marked == list(request.cache_breakpoints) and len(marked) <= 4
    for i in marked:  # the text is unchanged, only moved into a part
        assert messages[i]["content"][-1]["text"] == request.messages[i].content


async def test_catalogue_is_the_metadata_rung(
    server: OpenAIDouble, provider: OpenRouterProvider
) -> None:
    details = await provider.show(CLAUDE)
    assert details.declared_window == 1_000_000
    assert server.requests[-1][:2] == ("GET", "/api/v1/models")
    with pytest.raises(ModelNotFound, match="openai/gpt-nope"):
        await provider.show("openai/gpt-nope")
    assert [m.name for m in await provider.list_models()] == [MODEL, CLAUDE]


async def test_registered_as_hosted(server: OpenAIDouble, http: httpx.AsyncClient) -> None:
    assert default_host("openrouter") == "https://openrouter.ai/api"
    provider = open_provider("openrouter", http, server.url + "/api", api_key=KEY)
    assert isinstance(provider, OpenRouterProvider) and not is_local(provider)
