"""Issue 13 item 8, for every adapter: a first-byte deadline that allows a cold model load and
says the model is loading, a separate stall deadline mid-answer, each worded by the deadline
that passed. Against the loopback doubles (real HTTP, each provider's wire format)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.doubles.anthropic_server import AnthropicDouble
from tests.doubles.anthropic_server import reply as claude_reply
from tests.doubles.fixtures import double_fixture, http_fixture  # noqa: F401 - fixtures by name
from tests.doubles.ollama_model import Reply
from tests.doubles.ollama_server import OllamaDouble
from tests.doubles.openai_server import SSE, Fail, OpenAIDouble, text_chunks, usage_chunk
from tests.providers.hosted import Sleeps, collect
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Ledger
from vak_desktop.providers import (
    AnthropicProvider,
    BadResponse,
    ChatProvider,
    OllamaProvider,
    OpenAICompatibleProvider,
    RetryPolicy,
    TextDelta,
    Unreachable,
)
from vak_desktop.providers.base import Waiting
from vak_desktop.providers.deadlines import Deadlines
from vak_desktop.providers.retry import NO_RETRY
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.events import Notice, TextChunk, TurnFinished

# first byte 2 s: the stalling doubles send a chunk every 0.8 s, and a 1 s deadline left 0.2 s of
# margin (it failed once on an idle 2-core machine)
QUICK = Deadlines(first_byte=2.0, stall=0.5, waiting_notice=0.2)
Adapter = Callable[[httpx.AsyncClient, str], ChatProvider]
ADAPTERS: dict[str, Adapter] = {
    "ollama": lambda http, url: OllamaProvider(http, url, retry=NO_RETRY, deadlines=QUICK),
    "openai-compatible": lambda http, url: OpenAICompatibleProvider(
        http, url, retry=NO_RETRY, deadlines=QUICK
    ),
    "anthropic": lambda http, url: AnthropicProvider(
        http, url, api_key="sk-ant-test-key-0123", retry=NO_RETRY, deadlines=QUICK
    ),
}
SERVER_NAMES = {"ollama": "Ollama", "openai-compatible": "", "anthropic": "the Anthropic API"}


def ask(model: str) -> ChatRequest:
    return ChatRequest(model=model, messages=(Message("user", "hi"),))


@pytest.fixture
def silent() -> Iterator[str]:
    """A server that accepts the connection and never sends a byte."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


@pytest.mark.parametrize("kind", ADAPTERS)
async def test_a_silent_server_says_it_waits_then_fails_at_the_first_byte_deadline(
    kind: str, silent: str, http: httpx.AsyncClient
) -> None:
    provider = ADAPTERS[kind](http, silent)
    seen: list[object] = []
    with pytest.raises(Unreachable, match=r"accepted the connection but sent nothing for 2 s"):
        async for event in provider.stream(ask("m")):
            seen.append(event)
    assert len(seen) == 1 and isinstance(seen[0], Waiting)
    assert seen[0].message.startswith("waiting for the model:")
    assert SERVER_NAMES[kind] in seen[0].message


def _stalling(kind: str, double: OllamaDouble) -> tuple[str, object]:
    """A double whose answer starts, then pauses longer than the stall deadline."""
    if kind == "ollama":
        double.enqueue(Reply(text="one two three four", chunk_chars=4, delay_per_chunk=0.0))
        double.enqueue(Reply(text="one two three four", chunk_chars=4, delay_per_chunk=0.8))
        return double.url, None
    if kind == "openai-compatible":
        server: OpenAIDouble | AnthropicDouble = OpenAIDouble(models=("m",))
        server.script(SSE([*text_chunks("one two three"), usage_chunk(5, 5)]))
        server.script(SSE([*text_chunks("one two three"), usage_chunk(5, 5)], delay=0.8))
    else:
        server = AnthropicDouble(models={"m": 200_000})
        server.script(claude_reply("m", "one two three"))
        stalled = claude_reply("m", "one two three")
        stalled.delay = 0.8
        server.script(stalled)
    return server.start().url, server


@pytest.mark.parametrize("kind", ADAPTERS)
async def test_a_stream_that_stops_mid_answer_fails_at_the_stall_deadline_not_the_first_byte(
    kind: str, double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    """Each chunk 0.8 s apart: within the 2 s first-byte deadline, past the 0.5 s stall one."""
    url, server = _stalling(kind, double)
    try:
        provider = ADAPTERS[kind](http, url)
        model = "llama3.2" if kind == "ollama" else "m"
        if kind == "ollama":
            double.add_model(model)
        quick = await collect(provider.stream(ask(model)))  # the same answer without the pauses
        assert "".join(e.text for e in quick if isinstance(e, TextDelta)) == "one two three" + (
            " four" if kind == "ollama" else ""
        )
        with pytest.raises(
            BadResponse, match=r"stopped sending mid-answer: nothing arrived for 0.5 s"
        ):
            await collect(provider.stream(ask(model)))
    finally:
        if server is not None:
            server.close()  # type: ignore[attr-defined]


async def test_a_cold_ollama_load_is_announced_and_the_answer_still_arrives(
    http: httpx.AsyncClient,
) -> None:
    """The double loads for 0.6 s before its first byte, as a cold Ollama does: past the
    notice, within the first-byte deadline."""
    with OllamaDouble(realtime=True, cold_load_ns=600_000_000) as double:
        double.add_model("llama3.2")
        provider = OllamaProvider(http, double.url, retry=NO_RETRY, deadlines=QUICK)
        events = await collect(provider.stream(ask("llama3.2")))
    assert (
        isinstance(events[0], Waiting) and "Ollama has not started answering" in events[0].message
    )
    assert any(isinstance(e, TextDelta) for e in events)
    assert sum(isinstance(e, Waiting) for e in events) == 1


async def test_a_llama_cpp_server_loading_its_model_is_waited_for_with_a_notice(
    http: httpx.AsyncClient,
) -> None:
    """The llama.cpp server answers 503 "Loading model" until the model is in memory: asked
    again every second (outside the retry count), with one notice, then the answer."""
    loading = Fail(
        503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}
    )
    sleeps = Sleeps()
    with OpenAIDouble(models=("m",)) as server:
        server.script(*[loading] * 6, SSE([*text_chunks("ready now"), usage_chunk(5, 5)]))
        policy = RetryPolicy(attempts=2, sleep=sleeps)
        provider = OpenAICompatibleProvider(http, server.url, retry=policy, deadlines=QUICK)
        events = await collect(provider.stream(ask("m")))
    assert isinstance(events[0], Waiting) and "Loading model" in events[0].message
    assert sum(isinstance(e, Waiting) for e in events) == 1
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "ready now"
    assert sleeps.waits == [1.0] * 6  # six loading answers, none counted against 2 attempts


async def test_the_turn_carries_the_loading_notice_to_its_observers(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    """What the CLI prints and the window shows: a `Notice` event of the turn, before the text."""
    with OllamaDouble(
        realtime=True, cold_load_ns=600_000_000, default_text="Hello there."
    ) as double:
        double.add_model("llama3.2")
        patient = Deadlines(first_byte=30.0, stall=10.0, waiting_notice=0.2)  # prefill is paced too
        provider = OllamaProvider(http, double.url, retry=NO_RETRY, deadlines=patient)
        runner = TurnRunner(ledger, provider, default_tools())
        session = ledger.create_session().id
        binding = ModelBinding(provider="ollama", model="llama3.2", details=None)
        events = [e async for e in runner.run(session, "hi", binding)]
    notices = [e for e in events if isinstance(e, Notice)]
    assert [n.message.split(":")[0] for n in notices] == ["waiting for the model"]
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextChunk))
    assert events.index(notices[0]) < first_text
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
