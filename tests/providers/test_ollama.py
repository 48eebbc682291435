"""The Ollama adapter against the loopback double (real HTTP), plus MockTransport edge cases."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from tests.doubles.fixtures import (  # noqa: F401 - fixtures are found by name
    PLAIN_MODEL,
    THINKING_MODEL,
    TOOL_MODEL,
    collect,
    double_fixture,
    double_process_fixture,
    http_fixture,
    ollama_fixture,
)
from tests.doubles.ollama_server import OllamaDouble, Reply
from vak_desktop.context.payloads import ToolCall
from vak_desktop.context.request import ChatRequest, Message, ToolSpec
from vak_desktop.providers import (
    BadResponse,
    ChatProvider,
    ContextOverflow,
    Done,
    LoadedModels,
    ModelCatalog,
    ModelInspector,
    ModelNotFound,
    ModelPuller,
    ModelRemover,
    ModelUnloader,
    ProviderError,
    RateLimited,
    ServerError,
    StreamEvent,
    StreamNotice,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    Unreachable,
    VersionReporter,
    default_host,
    open_provider,
)
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.providers.ollama_wire import resolve_host
from vak_desktop.providers.retry import NO_RETRY, RetryPolicy

WEATHER = ToolSpec(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def ask(text: str, model: str = TOOL_MODEL, **kwargs: Any) -> ChatRequest:
    return ChatRequest(model=model, messages=(Message("user", text),), **kwargs)


async def events_then_error(
    stream: AsyncIterator[StreamEvent],
) -> tuple[list[StreamEvent], ProviderError]:
    events: list[StreamEvent] = []
    with pytest.raises(ProviderError) as raised:
        async for event in stream:
            events.append(event)
    return events, raised.value


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


# -- streaming ------------------------------------------------------------------------------


async def test_text_streams_in_pieces_and_ends_with_one_done(
    double: OllamaDouble, ollama: OllamaProvider
) -> None:
    double.enqueue(Reply(text="The sky is blue because of Rayleigh scattering.", chunk_chars=6))
    request = ask("Why is the sky blue?", num_ctx=8192)

    events = await collect(ollama.stream(request))

    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 3
    assert text_of(events) == "The sky is blue because of Rayleigh scattering."
    assert isinstance(events[-1], Done) and sum(isinstance(e, Done) for e in events) == 1
    done = events[-1]
    assert done.done_reason == "stop"
    assert done.usage.input_tokens == double.prompt_tokens(double.chat_bodies()[-1]["messages"])
    assert done.usage.output_tokens > 0
    assert done.timings.load_ns == double.cold_load_ns
    assert done.timings.prompt_eval_ns > 0 and done.timings.eval_ns > 0
    assert done.timings.total_ns >= done.timings.load_ns + done.timings.prompt_eval_ns
    assert 0 < done.timings.first_token_ns <= done.timings.wall_ns


async def test_thinking_arrives_as_thinking_deltas(
    double: OllamaDouble, ollama: OllamaProvider
) -> None:
    double.enqueue(Reply(thinking="The user greets me.", text="Hello!", chunk_chars=5))

    events = await collect(ollama.stream(ask("hi", model=THINKING_MODEL, think=True)))

    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thinking == "The user greets me."
    assert text_of(events) == "Hello!"
    assert double.chat_bodies()[-1]["think"] is True


@pytest.mark.parametrize("on_final_chunk", [False, True], ids=["middle-chunk", "final-chunk"])
async def test_tool_calls_are_read_from_any_chunk(
    double: OllamaDouble, ollama: OllamaProvider, on_final_chunk: bool
) -> None:
    double.enqueue(
        Reply(
            text="Let me check.",
            tool_calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})],
            tool_calls_on_final_chunk=on_final_chunk,
        )
    )

    events = await collect(ollama.stream(ask("Weather?", tools=(WEATHER,))))

    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Oslo"}),
    ]
    assert all(c.id.startswith("call_") and len(c.id) == 13 for c in calls)
    assert isinstance(events[-1], Done) and events[-1].done_reason == "stop"


async def test_omitted_zero_metrics_read_as_zero(
    double: OllamaDouble, ollama: OllamaProvider
) -> None:
    # num_predict 0: nothing is generated, so Ollama leaves eval_count and eval_duration out.
    events = await collect(ollama.stream(ask("hello", max_tokens=0)))

    done = events[-1]
    assert isinstance(done, Done)
    assert done.done_reason == "length"
    assert done.usage.output_tokens == 0 and done.timings.eval_ns == 0
    assert done.usage.input_tokens > 0


async def test_every_request_pins_keep_alive_num_ctx_and_disables_truncation(
    double: OllamaDouble, ollama: OllamaProvider
) -> None:
    history = (
        Message("system", "You are terse."),
        Message("user", "Weather in Paris?"),
        Message(
            "assistant",
            thinking="I should look it up.",
            tool_calls=(ToolCall("call_ab12cd34", "get_weather", {"city": "Paris"}),),
        ),
        Message("tool", "18°C, clear", tool_call_id="call_ab12cd34", tool_name="get_weather"),
    )
    await collect(ollama.stream(ChatRequest(TOOL_MODEL, history, (WEATHER,), num_ctx=8192)))
    await collect(ollama.stream(ask("again", keep_alive="2h", temperature=0.2, max_tokens=64)))

    first, second = double.chat_bodies()
    assert first["keep_alive"] == "30m" and second["keep_alive"] == "2h"
    assert first["options"] == {"num_ctx": 8192}
    assert second["options"] == {"num_predict": 64, "temperature": 0.2}
    assert all(b["truncate"] is False and b["shift"] is False for b in (first, second))
    assert "think" not in first
    assert first["tools"][0] == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": WEATHER.description,
            "parameters": WEATHER.parameters,
        },
    }
    assert first["messages"][2] == {
        "role": "assistant",
        "content": "",
        "thinking": "I should look it up.",
        "tool_calls": [
            {
                "id": "call_ab12cd34",
                "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
            }
        ],
    }
    assert first["messages"][3] == {
        "role": "tool",
        "content": "18°C, clear",
        "tool_name": "get_weather",
        "tool_call_id": "call_ab12cd34",
    }


# -- failures -------------------------------------------------------------------------------


async def test_unknown_model_is_model_not_found_naming_it(ollama: OllamaProvider) -> None:
    with pytest.raises(ModelNotFound) as raised:
        await collect(ollama.stream(ask("hi", model="nope")))
    assert raised.value.model == "nope"
    assert "nope" in str(raised.value)


async def test_nothing_listening_is_unreachable_naming_the_host(http: httpx.AsyncClient) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again before we connect: nothing listens
    provider = OllamaProvider(http, f"127.0.0.1:{port}")

    with pytest.raises(Unreachable) as raised:
        await collect(provider.stream(ask("hi")))
    assert raised.value.host == f"http://127.0.0.1:{port}"
    assert "Ollama is not running" in str(raised.value)
    with pytest.raises(Unreachable):
        await provider.version()


async def test_over_long_request_is_context_overflow_with_sizes(
    double: OllamaDouble, ollama: OllamaProvider
) -> None:
    request = ask("x" * 4000, num_ctx=512)

    with pytest.raises(ContextOverflow) as raised:
        await collect(ollama.stream(request))

    expected = double.prompt_tokens(double.chat_bodies()[-1]["messages"])
    assert (raised.value.requested, raised.value.limit) == (expected, 512)
    assert "exceeds the available context size" in str(raised.value)


async def test_mid_stream_error_raises_after_the_text_already_streamed(
    double: OllamaDouble, ollama: OllamaProvider
) -> None:
    double.enqueue(Reply(text="abcdefgh" * 4, error_after_chunks=2, error_text="runner crashed"))

    events, error = await events_then_error(ollama.stream(ask("hi")))

    assert text_of(events) == "abcdefgh" * 2
    assert isinstance(error, ServerError) and "runner crashed" in str(error)


async def test_malformed_line_is_bad_response_naming_the_line(
    double: OllamaDouble, ollama: OllamaProvider
) -> None:
    broken = b'{"model":"llama3.2","message":{"role":"assistant","content":"x"'
    double.enqueue(Reply(text="abcdefghijklmnop", raw_lines=[broken], raw_after_chunks=2))

    events, error = await events_then_error(ollama.stream(ask("hi")))

    assert text_of(events) == "abcdefghijklmnop"
    assert isinstance(error, BadResponse)
    assert error.line == 3 and "line 3" in str(error)
    assert error.raw == broken


async def test_invalid_utf8_is_announced_then_replaced(
    double: OllamaDouble, ollama: OllamaProvider
) -> None:
    raw = b'{"model":"llama3.2","message":{"role":"assistant","content":"caf\xe9!"},"done":false}'
    double.enqueue(Reply(text="abcdefgh", raw_lines=[raw], raw_after_chunks=1))

    events = await collect(ollama.stream(ask("hi")))

    notice_at = next(i for i, e in enumerate(events) if isinstance(e, StreamNotice))
    notice = events[notice_at]
    assert isinstance(notice, StreamNotice)
    assert notice.raw == raw
    offset = raw.index(b"\xe9")
    assert "line 2" in notice.message and f"byte {offset}" in notice.message
    assert events[notice_at + 1] == TextDelta("caf\ufffd!")
    assert text_of(events) == "abcdefghcaf\ufffd!"
    assert isinstance(events[-1], Done)


async def test_tools_on_a_model_without_tools_is_a_plain_provider_error(
    ollama: OllamaProvider,
) -> None:
    with pytest.raises(ProviderError) as raised:
        await collect(ollama.stream(ask("hi", model=PLAIN_MODEL, tools=(WEATHER,))))
    assert type(raised.value) is ProviderError
    assert "HTTP 400" in str(raised.value) and "does not support tools" in str(raised.value)


@pytest.mark.parametrize(
    ("status", "error", "expected"),
    [
        (503, "server busy, please try again.  maximum pending requests exceeded", RateLimited),
        (429, "too many requests", RateLimited),
        (500, "llama runner process has terminated: exit status 2", ServerError),
    ],
)
async def test_http_status_maps_to_the_error_tree(
    double: OllamaDouble,
    http: httpx.AsyncClient,
    status: int,
    error: str,
    expected: type[ProviderError],
) -> None:
    for _ in range(4):  # every attempt of the retry policy
        double.fail_next(status, error)
    with pytest.raises(expected, match=r"busy|too many|terminated"):
        await collect(OllamaProvider(http, double.url, retry=NO_RETRY).stream(ask("hi")))


async def test_a_busy_ollama_is_retried_after_the_pause_it_asks_for(
    double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    """Issue 13 item 8: the Ollama adapter honours Retry-After like the others."""
    waited: list[float] = []

    async def sleep(seconds: float) -> None:
        waited.append(seconds)

    double.fail_next(503, "server busy, please try again.", retry_after="7")
    double.fail_next(429, "too many requests")
    provider = OllamaProvider(http, double.url, retry=RetryPolicy(sleep=sleep, jitter=lambda: 0))
    events = await collect(provider.stream(ask("hi")))
    assert isinstance(events[-1], Done)
    assert waited == [7.0, 1.0]  # the asked-for pause, then the backoff


@pytest.mark.slow
async def test_server_killed_mid_stream_is_bad_response(
    http: httpx.AsyncClient, double_process: tuple[subprocess.Popen[bytes], str]
) -> None:
    process, url = double_process
    provider = OllamaProvider(http, url)
    events: list[StreamEvent] = []

    with pytest.raises(BadResponse, match="stream ended before the final chunk"):
        async for event in provider.stream(ask("hi")):
            events.append(event)
            if len(events) == 2:
                process.kill()

    assert 2 <= len(events) < 40


# -- model management -----------------------------------------------------------------------


async def test_show_reads_window_num_ctx_and_capabilities(
    double: OllamaDouble, ollama: OllamaProvider
) -> None:
    double.add_model("tiny:1b", trained_window=32768, num_ctx_param=8192, family="qwen2")

    details = await ollama.show("tiny:1b")
    plain = await ollama.show(PLAIN_MODEL)

    assert (details.declared_window, details.configured_num_ctx) == (32768, 8192)
    assert details.architecture == "qwen2" and details.quantisation == "Q4_K_M"
    assert plain.configured_num_ctx is None and plain.capabilities == ("completion",)
    with pytest.raises(ModelNotFound):
        await ollama.show("nope")


async def test_tags_ps_and_unload(double: OllamaDouble, ollama: OllamaProvider) -> None:
    names = {m.name for m in await ollama.list_models()}
    assert names == {"llama3.2:latest", "qwen3:0.6b", "gemma:2b"}
    assert await ollama.loaded() == []

    await collect(ollama.stream(ask("hi", num_ctx=8192)))
    (loaded,) = await ollama.loaded()
    assert loaded.name == "llama3.2:latest" and loaded.context_length == 8192
    assert loaded.expires_at and loaded.size_vram > 0

    await ollama.unload(TOOL_MODEL)
    assert await ollama.loaded() == []
    assert double.chat_bodies()[-1] == {
        "model": TOOL_MODEL,
        "messages": [],
        "keep_alive": 0,
        "stream": False,
    }


async def test_pull_reports_progress_then_the_model_exists(
    double: OllamaDouble, ollama: OllamaProvider
) -> None:
    double.add_pullable("phi4-mini", total=2_000_000)

    progress = [p async for p in ollama.pull("phi4-mini")]

    assert progress[0].status == "pulling manifest" and progress[-1].status == "success"
    layer = [p for p in progress if p.total == 2_000_000 - 96]
    assert layer[-1].completed == layer[-1].total and layer[0].completed == 0
    assert "phi4-mini:latest" in {m.name for m in await ollama.list_models()}


async def test_pull_of_an_unknown_model_is_model_not_found(ollama: OllamaProvider) -> None:
    with pytest.raises(ModelNotFound, match="file does not exist"):
        async for _ in ollama.pull("no-such-model"):
            pass


async def test_delete_and_version(double: OllamaDouble, ollama: OllamaProvider) -> None:
    await ollama.delete(PLAIN_MODEL)

    assert "gemma:2b" not in {m.name for m in await ollama.list_models()}
    with pytest.raises(ModelNotFound):
        await ollama.delete(PLAIN_MODEL)
    assert await ollama.version() == "0.33.0"


# -- MockTransport edge cases ---------------------------------------------------------------


def mock(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def ndjson(*objects: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objects)


async def test_a_stream_without_a_final_chunk_is_bad_response() -> None:
    body = ndjson({"message": {"role": "assistant", "content": "Hel"}, "done": False})
    async with mock(lambda _: httpx.Response(200, content=body)) as client:
        events, error = await events_then_error(OllamaProvider(client, "").stream(ask("hi")))
    assert text_of(events) == "Hel"
    assert isinstance(error, BadResponse)
    assert "stream ended before the final chunk" in str(error)


async def test_bare_final_chunk_gives_zero_metrics_and_generated_call_ids() -> None:
    call = {"function": {"name": "f", "arguments": {"x": 1}}}
    body = ndjson(
        {"message": {"role": "assistant", "content": "", "tool_calls": [call, call]}},
        {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
    )
    async with mock(lambda _: httpx.Response(200, content=body)) as client:
        events = await collect(OllamaProvider(client, "").stream(ask("hi")))
    ids = [e.call.id for e in events if isinstance(e, ToolCallEvent)]
    assert ids == ["call_1", "call_2"]
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.usage.input_tokens, done.usage.output_tokens, done.timings.total_ns) == (0, 0, 0)


@pytest.mark.parametrize(
    ("status", "error", "requested", "limit"),
    [
        (
            400,
            "the prompt is longer than the context length currently available to the model; "
            "shorten the prompt, adjust the context length in settings, or use a model with a "
            "longer context length",
            None,
            2048,
        ),
        (
            400,
            '{"error":{"code":400,"message":"request (5000 tokens) exceeds the available context '
            'size (4096 tokens), try increasing it","type":"exceed_context_size_error",'
            '"n_prompt_tokens":5000,"n_ctx":4096}}',
            5000,
            4096,
        ),
        (200, "the prompt is longer than the context length currently available", None, 2048),
    ],
    ids=["shift-false-text", "llama-cpp-json", "mid-stream"],
)
async def test_overflow_texts_become_context_overflow(
    status: int, error: str, requested: int | None, limit: int | None
) -> None:
    async with mock(lambda _: httpx.Response(status, json={"error": error})) as client:
        with pytest.raises(ContextOverflow) as raised:
            await collect(OllamaProvider(client, "").stream(ask("hi", num_ctx=2048)))
    assert (raised.value.requested, raised.value.limit) == (requested, limit)


async def test_unknown_route_404_is_not_model_not_found() -> None:
    reply = httpx.Response(404, text="404 page not found")
    async with mock(lambda _: reply) as client:
        with pytest.raises(ProviderError) as raised:
            await OllamaProvider(client, "").version()
    assert type(raised.value) is ProviderError and "404 page not found" in str(raised.value)


async def test_unitless_keep_alive_text_is_sent_as_seconds() -> None:
    async with mock(lambda _: httpx.Response(200)) as client:
        body = OllamaProvider(client, "").render(ask("hi", keep_alive="-1", think=False))
    assert body["keep_alive"] == -1 and body["think"] is False


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "http://127.0.0.1:11434"),
        ("", "http://127.0.0.1:11434"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:8080", "http://127.0.0.1:8080"),
        (":11500", "http://127.0.0.1:11500"),
        ("gpu-box", "http://gpu-box:11434"),
        ("http://gpu-box:9000/", "http://gpu-box:9000"),
        ("https://ollama.example.com", "https://ollama.example.com"),
        ("https://example.com/ollama/", "https://example.com/ollama"),
        ("[::1]:11434", "http://[::1]:11434"),
        ("  localhost  ", "http://localhost:11434"),
    ],
)
def test_resolve_host_follows_ollama_host_rules(value: str | None, expected: str) -> None:
    assert resolve_host(value) == expected


async def test_open_provider_by_name(
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box:9000")
    assert default_host("ollama") == "http://gpu-box:9000"

    provider = open_provider("ollama", http, None)

    assert isinstance(provider, ChatProvider) and provider.host == "http://gpu-box:9000"
    abilities = (ModelCatalog, ModelInspector, LoadedModels, ModelPuller, ModelRemover)
    assert all(isinstance(provider, a) for a in (*abilities, ModelUnloader, VersionReporter))
    assert open_provider("ollama", http, "other:1").host == "http://other:1"
    with pytest.raises(ValueError, match="known providers: anthropic, ollama"):
        open_provider("nope", http, None)
