"""The OpenAI-compatible adapter against a loopback server speaking the chat-completions
streaming wire format (real HTTP, server-sent events)."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.doubles.openai_server import (
    SSE,
    Fail,
    OpenAIDouble,
    chunk,
    llama_overflow,
    openai_overflow,
    text_chunks,
    tool_call_chunks,
    usage_chunk,
)
from vak_desktop.context.payloads import ToolCall, Usage
from vak_desktop.context.request import ChatRequest, Message, ToolSpec
from vak_desktop.providers import (
    NO_RETRY,
    BadResponse,
    ChatProvider,
    ContextOverflow,
    Done,
    KeyRefused,
    ModelCatalog,
    ModelInspector,
    ModelNotFound,
    ProviderError,
    RateLimited,
    RetryPolicy,
    ServerError,
    StreamEvent,
    StreamNotice,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    Unreachable,
    default_host,
    is_local,
    known_providers,
    open_provider,
)
from vak_desktop.providers.openai_compatible import OpenAICompatibleProvider
from vak_desktop.providers.openai_wire import resolve_host
from vak_desktop.runtime import bind_model, capacity_profile_for

MODEL = "qwen2.5-coder-0.5b"
WEATHER = ToolSpec(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@pytest.fixture(name="server")
def server_fixture() -> Iterator[OpenAIDouble]:
    with OpenAIDouble(models=(MODEL,)) as double:
        yield double


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


@pytest.fixture(name="provider")
def provider_fixture(server: OpenAIDouble, http: httpx.AsyncClient) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(http, server.url)


def ask(text: str, **kwargs: Any) -> ChatRequest:
    return ChatRequest(model=MODEL, messages=(Message("user", text),), **kwargs)


async def collect(provider: OpenAICompatibleProvider, request: ChatRequest) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


async def failure(provider: OpenAICompatibleProvider, request: ChatRequest) -> ProviderError:
    with pytest.raises(ProviderError) as raised:
        await collect(provider, request)
    return raised.value


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


# -- streaming ------------------------------------------------------------------------------


async def test_streams_text_then_done_with_usage(
    server: OpenAIDouble, provider: OpenAICompatibleProvider
) -> None:
    server.script(SSE([*text_chunks("The sky is blue.", 3, MODEL), usage_chunk(40, 5)]))
    events = await collect(provider, ask("Why is the sky blue?", max_tokens=64, temperature=0.2))
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and text_of(events) == "The sky is blue."
    done = events[-1]
    assert isinstance(done, Done) and sum(isinstance(e, Done) for e in events) == 1
    assert done.done_reason == "stop" and done.model == MODEL
    assert done.usage == Usage(input_tokens=40, output_tokens=5)
    assert done.timings.wall_ns >= done.timings.first_token_ns > 0
    method, path, _, body = server.requests[-1]
    assert (method, path) == ("POST", "/v1/chat/completions")
    assert body == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Why is the sky blue?"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 64,
        "temperature": 0.2,
    }


async def test_usage_keeps_the_cache_tier_apart(
    server: OpenAIDouble, provider: OpenAICompatibleProvider
) -> None:
    server.script(SSE([*text_chunks("ok"), usage_chunk(1000, 3, cached=768)]))
    done = (await collect(provider, ask("again")))[-1]
    assert isinstance(done, Done)
    assert done.usage == Usage(input_tokens=232, cache_read_tokens=768, output_tokens=3)
    assert done.usage.prompt_tokens() == 1000


async def test_reasoning_content_becomes_thinking(
    server: OpenAIDouble, provider: OpenAICompatibleProvider
) -> None:
    server.script(
        SSE(
            [
                chunk({"role": "assistant", "reasoning_content": "Let me think. "}),
                chunk({"reasoning_content": "Blue light scatters."}),
                chunk({"content": "Rayleigh scattering."}, "stop"),
            ]
        )
    )
    events = await collect(provider, ask("why"))
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thinking == "Let me think. Blue light scatters."
    assert text_of(events) == "Rayleigh scattering."
    assert isinstance(events[-1], Done) and events[-1].usage == Usage()


async def test_tool_call_arguments_split_across_chunks(
    server: OpenAIDouble, provider: OpenAICompatibleProvider
) -> None:
    calls = [
        ("call_a", "get_weather", json.dumps({"city": "Paris", "unit": "celsius"})),
        ("call_b", "get_weather", json.dumps({"city": "Oslo"})),
    ]
    server.script(SSE([*tool_call_chunks(calls, pieces=4), usage_chunk(80, 30)]))
    events = await collect(provider, ask("Weather in Paris and Oslo?", tools=(WEATHER,)))
    tool_events = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [e.call for e in tool_events] == [
        ToolCall("call_a", "get_weather", {"city": "Paris", "unit": "celsius"}),
        ToolCall("call_b", "get_weather", {"city": "Oslo"}),
    ]
    assert isinstance(events[-1], Done) and events[-1].done_reason == "tool_calls"
    body = server.requests[-1][3]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": WEATHER.description,
                "parameters": WEATHER.parameters,
            },
        }
    ]


async def test_unparseable_tool_arguments_name_the_call(
    server: OpenAIDouble, provider: OpenAICompatibleProvider
) -> None:
    server.script(SSE(tool_call_chunks([("c1", "get_weather", '{"city": "Par')])))
    error = await failure(provider, ask("weather", tools=(WEATHER,)))
    assert isinstance(error, BadResponse) and "get_weather" in str(error)


async def test_history_renders_tool_calls_results_and_images(
    server: OpenAIDouble, provider: OpenAICompatibleProvider
) -> None:
    png = "iVBORw0KGgoAAAANSUhEUg=="
    request = ChatRequest(
        model=MODEL,
        messages=(
            Message("system", "Be brief."),
            Message("user", "What is this and the weather?", images=(png,)),
            Message(
                "assistant",
                thinking="hidden",
                tool_calls=(ToolCall("call_1", "get_weather", {"city": "Paris"}),),
            ),
            Message("tool", "18 C, sunny", tool_call_id="call_1", tool_name="get_weather"),
        ),
    )
    await collect(provider, request)
    messages = server.requests[-1][3]["messages"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "What is this and the weather?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
    ]
    assert messages[2] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": "18 C, sunny"}


async def test_invalid_utf8_is_repaired_and_announced(
    server: OpenAIDouble, provider: OpenAICompatibleProvider
) -> None:
    bad = b'{"choices":[{"index":0,"delta":{"content":"caf\xc3 ok"},"finish_reason":null}]}'
    server.script(SSE([bad, chunk({}, "stop")]))
    events = await collect(provider, ask("hi"))
    notices = [e for e in events if isinstance(e, StreamNotice)]
    assert len(notices) == 1 and notices[0].raw == bad and "U+FFFD" in notices[0].message
    assert text_of(events) == "caf\ufffd ok"


async def test_stream_cut_before_done_marker_is_an_error(
    server: OpenAIDouble, provider: OpenAICompatibleProvider
) -> None:
    server.script(SSE(text_chunks("partial"), done=False))
    error = await failure(provider, ask("hi"))
    assert isinstance(error, BadResponse) and "[DONE]" in str(error)


async def test_non_json_event_is_a_bad_response(
    server: OpenAIDouble, provider: OpenAICompatibleProvider
) -> None:
    server.script(SSE([b"not json"]))
    assert isinstance(await failure(provider, ask("hi")), BadResponse)


# -- errors ---------------------------------------------------------------------------------


async def test_openai_over_length_error_is_context_overflow(
    server: OpenAIDouble, provider: OpenAICompatibleProvider
) -> None:
    server.script(openai_overflow(9000, 8192))
    error = await failure(provider, ask("long"))
    assert isinstance(error, ContextOverflow)
    assert (error.requested, error.limit) == (9000, 8192)


async def test_llama_cpp_over_length_error_is_context_overflow(
    server: OpenAIDouble, provider: OpenAICompatibleProvider
) -> None:
    server.script(llama_overflow(5000, 4096))
    error = await failure(provider, ask("long"))
    assert isinstance(error, ContextOverflow)
    assert (error.requested, error.limit) == (5000, 4096)


async def test_over_length_error_inside_the_stream(
    server: OpenAIDouble, provider: OpenAICompatibleProvider
) -> None:
    body = llama_overflow(5000, 4096).body
    assert isinstance(body, dict)
    server.script(SSE([body]))
    error = await failure(provider, ask("long"))
    assert isinstance(error, ContextOverflow) and error.limit == 4096


async def test_unknown_model_is_model_not_found(provider: OpenAICompatibleProvider) -> None:
    request = ChatRequest(model="gpt-nope", messages=(Message("user", "hi"),))
    error = await failure(provider, request)
    assert isinstance(error, ModelNotFound) and error.model == "gpt-nope"


async def test_rejected_api_key_is_explained(http: httpx.AsyncClient) -> None:
    with OpenAIDouble(models=(MODEL,), api_key="sk-right") as server:
        wrong = OpenAICompatibleProvider(http, server.url, api_key="sk-wrong")
        error = await failure(wrong, ask("hi"))
        assert isinstance(error, KeyRefused) and error.status == 401
        assert "API key for provider 'openai-compatible' was refused" in str(error)
        assert "Settings → Providers" in str(error)
        assert "sk-wrong" not in str(error) and "sk-wrong" not in repr(wrong)
        assert "sk-r" not in str(error)  # not even the masked form the server echoed
        right = OpenAICompatibleProvider(http, server.url, api_key="sk-right")
        assert text_of(await collect(right, ask("hi"))) == server.default_text
        assert server.requests[-1][2]["authorization"] == "Bearer sk-right"


@pytest.mark.parametrize(
    ("status", "expected"), [(429, RateLimited), (503, RateLimited), (500, ServerError)]
)
async def test_status_errors(
    server: OpenAIDouble,
    provider: OpenAICompatibleProvider,
    status: int,
    expected: type[ProviderError],
) -> None:
    headers = {"Retry-After": "7"} if status == 429 else {}
    server.script(Fail(status, {"error": {"message": "busy", "type": "x"}}, headers))
    once = OpenAICompatibleProvider(provider._client, server.url, retry=NO_RETRY)
    error = await failure(once, ask("hi"))
    assert type(error) is expected and "busy" in str(error)
    if status == 429:
        assert isinstance(error, RateLimited) and error.retry_after == 7.0


async def test_nothing_listening_is_unreachable(http: httpx.AsyncClient) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = OpenAICompatibleProvider(http, f"127.0.0.1:{port}")
    assert isinstance(await failure(provider, ask("hi")), Unreachable)
    with pytest.raises(Unreachable):
        await provider.list_models()


# -- models, registry, host -----------------------------------------------------------------


async def test_lists_models(server: OpenAIDouble, http: httpx.AsyncClient) -> None:
    server.models.append("llama-3.2-3b")
    provider = OpenAICompatibleProvider(http, server.url + "/v1/")
    assert isinstance(provider, ModelCatalog)
    assert [m.name for m in await provider.list_models()] == [MODEL, "llama-3.2-3b"]
    assert server.requests[-1][:2] == ("GET", "/v1/models")


async def test_registered_by_name(http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "openai-compatible" in known_providers()
    monkeypatch.delenv("VAK_OPENAI_COMPATIBLE_HOST", raising=False)
    assert default_host("openai-compatible") == "http://127.0.0.1:8080"
    monkeypatch.setenv("VAK_OPENAI_COMPATIBLE_HOST", "gpu-box:8000/v1")
    assert default_host("openai-compatible") == "http://gpu-box:8000"
    provider = open_provider("openai-compatible", http, None)
    assert isinstance(provider, OpenAICompatibleProvider) and isinstance(provider, ChatProvider)
    assert provider.name == "openai-compatible" and provider.host == "http://gpu-box:8000"
    assert not is_local(provider)
    assert is_local(open_provider("openai-compatible", http, "localhost:1234"))
    assert is_local(open_provider("openai-compatible", http, "http://[::1]:8080"))


def test_resolve_host() -> None:
    assert resolve_host(None) == "http://127.0.0.1:8080"
    assert resolve_host("0.0.0.0:8080") == "http://127.0.0.1:8080"
    assert resolve_host("https://api.example.com/v1") == "https://api.example.com"
    assert resolve_host("http://h:11434/v1/") == "http://h:11434"


# -- metadata rung --------------------------------------------------------------------------


async def test_llama_cpp_window_comes_from_props(http: httpx.AsyncClient) -> None:
    # the server was started with -c 8192 for a model trained on 32k: it accepts 8192
    with OpenAIDouble(
        models=("qwen.gguf",), windows={"qwen.gguf": 32_768}, window_field="max_model_len"
    ) as server:
        server.props_n_ctx = 8_192
        provider = OpenAICompatibleProvider(http, server.url)
        assert isinstance(provider, ModelInspector)
        details = await provider.show("qwen.gguf")
        assert details.declared_window == 8_192 and details.configured_num_ctx == 8_192
        # a llama.cpp server answers whatever name it is asked with its one model
        assert (await provider.show("any-name")).declared_window == 8_192
        assert [r[1] for r in server.requests] == ["/v1/models", "/props", "/props"]


async def test_vllm_window_comes_from_the_model_list(http: httpx.AsyncClient) -> None:
    with OpenAIDouble(
        models=("Qwen/Qwen2.5-7B",),
        windows={"Qwen/Qwen2.5-7B": 32_768},
        window_field="max_model_len",
    ) as server:
        provider = OpenAICompatibleProvider(http, server.url)
        details = await provider.show("Qwen/Qwen2.5-7B")
        assert details.declared_window == 32_768 and details.configured_num_ctx is None
        with pytest.raises(ModelNotFound, match=r"Qwen/Qwen2\.5-7B"):
            await provider.show("llama3")  # the error lists what the server does have


async def test_a_metadata_window_feeds_the_capacity_profile(
    server: OpenAIDouble, http: httpx.AsyncClient
) -> None:
    server.windows[MODEL] = 16_384
    binding = await bind_model(OpenAICompatibleProvider(http, server.url), MODEL)
    profile = capacity_profile_for(binding, [], "2026-11-30T10:20:00Z")
    assert profile.declared_window == 16_384 and profile.instruction_horizon.tokens == 16_384
    assert profile.provider == "openai-compatible"


async def test_a_server_still_loading_its_model_is_waited_for(
    server: OpenAIDouble, http: httpx.AsyncClient
) -> None:
    # llama.cpp answers 503 "Loading model" until the weights are in memory
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    loading = Fail(
        503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}
    )
    server.script(loading, loading, SSE(text_chunks("ready")))
    policy = RetryPolicy(base_delay=0.5, sleep=sleep, jitter=lambda: 0.0)
    provider = OpenAICompatibleProvider(http, server.url, retry=policy)
    assert text_of(await collect(provider, ask("hi"))) == "ready"
    assert waits == [1.0, 1.0]  # polled each second while it loads (tests/providers/test_deadlines)
