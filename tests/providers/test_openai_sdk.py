"""The OpenAI-shaped adapters checked against the official `openai` SDK: request bodies against
its `CompletionCreateParamsStreaming` (strictly, `sdk_types.py`) with Think on and off, and
chunks in its published shape replayed through the SDK's own `ChatCompletionStreamState` and
through our adapter on the loopback double, which must agree — also when the output limit cuts
a tool call off.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

from tests.doubles.openai_server import SSE, OpenAIDouble, chunk, tool_call_chunks, usage_chunk
from tests.providers.hosted import assembled_request, collect
from tests.providers.sdk_types import sdk_errors
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Ledger
from vak_desktop.providers import (
    OpenAICompatibleProvider,
    OpenAIProvider,
    OpenRouterProvider,
    StreamNotice,
    ToolCallEvent,
)

ASK = (Message("user", "hi"),)


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def sdk_completion(chunks: list[dict[str, Any]]) -> Any:
    state = ChatCompletionStreamState()
    for data in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(data))
    return state.current_completion_snapshot


@pytest.mark.parametrize("think", [None, True, False])
def test_openai_bodies_match_the_sdk_request_type(
    ledger: Ledger, http: httpx.AsyncClient, think: bool | None
) -> None:
    request = assembled_request(ledger, "o3")
    for model in ("o3", "gpt-5", "gpt-4.1"):
        provider = OpenAIProvider(http, "https://api.openai.com", api_key="sk-test")
        body = provider.render(
            ChatRequest(**{**request.__dict__, "model": model, "think": think, "temperature": 0.3})
        )
        assert sdk_errors(CompletionCreateParamsStreaming, body) == [], model
        reasoning = model != "gpt-4.1"
        if think is not None and reasoning:
            assert body["reasoning_effort"] == ("high" if think else "low")
        else:
            assert "reasoning_effort" not in body
        assert ("temperature" in body) is not reasoning  # reasoning models refuse it


def test_openrouter_and_llama_cpp_carry_their_own_thinking_switch(http: httpx.AsyncClient) -> None:
    router = OpenRouterProvider(http, "https://openrouter.ai/api", api_key="sk-or-test")
    body = router.render(ChatRequest(model="qwen/qwen3-32b", messages=ASK, think=False))
    assert body["reasoning"] == {"enabled": False}
    llama = OpenAICompatibleProvider(http, "http://127.0.0.1:8080")
    body = llama.render(ChatRequest(model="qwen3", messages=ASK, think=True))
    assert body["chat_template_kwargs"] == {"enable_thinking": True}
    assert body["reasoning_format"] == "deepseek"
    assert "reasoning_format" not in llama.render(
        ChatRequest(model="qwen3", messages=ASK, think=False)
    )
    assert "chat_template_kwargs" not in llama.render(ChatRequest(model="qwen3", messages=ASK))


async def test_tool_call_deltas_are_read_as_the_sdk_reads_them(http: httpx.AsyncClient) -> None:
    chunks = tool_call_chunks(
        [("call_a", "read", '{"path": "notes.txt"}'), ("call_b", "grep", '{"pattern": "x"}')]
    )
    with OpenAIDouble(models=("m",)) as server:
        server.script(SSE([*chunks, usage_chunk(10, 5)]))
        out = await collect(
            OpenAICompatibleProvider(http, server.url).stream(ChatRequest(model="m", messages=ASK))
        )
    ours = [(e.call.id, e.call.name, e.call.arguments) for e in out if isinstance(e, ToolCallEvent)]
    theirs = sdk_completion(chunks).choices[0].message.tool_calls
    assert ours == [(c.id, c.function.name, json.loads(c.function.arguments)) for c in theirs]


async def test_a_tool_call_cut_at_the_length_limit_is_a_notice_with_its_partial_arguments(
    http: httpx.AsyncClient,
) -> None:
    partial = '{"path": "notes/2026-'
    chunks = tool_call_chunks([("call_a", "read", partial)])
    chunks[-1] = chunk({}, "length")  # the output limit, not the end of the call
    with OpenAIDouble(models=("m",)) as server:
        server.script(SSE(chunks))
        out = await collect(
            OpenAICompatibleProvider(http, server.url).stream(ChatRequest(model="m", messages=ASK))
        )
    snapshot = sdk_completion(chunks).choices[0]
    assert snapshot.finish_reason == "length"
    assert snapshot.message.tool_calls[0].function.arguments == partial  # the SDK keeps it too
    notices = [e for e in out if isinstance(e, StreamNotice)]
    assert [n.kind for n in notices] == ["tool_call_cut"]
    assert notices[0].raw.decode() == partial and "`read`" in notices[0].message
    assert not any(isinstance(e, ToolCallEvent) for e in out)


QWEN3_TEMPLATE = "{%- if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>{%- endif %}"


async def test_a_llama_cpp_template_with_a_thinking_switch_makes_think_apply(
    http: httpx.AsyncClient,
) -> None:
    with OpenAIDouble(models=("qwen3",), props_n_ctx=8192, chat_template=QWEN3_TEMPLATE) as server:
        details = await OpenAICompatibleProvider(http, server.url).show("qwen3")
    assert "thinking" in details.capabilities  # so the window's Think switch applies
    with OpenAIDouble(
        models=("qwen2.5",), props_n_ctx=8192, chat_template="{{ messages }}"
    ) as plain:
        details = await OpenAICompatibleProvider(http, plain.url).show("qwen2.5")
    assert "thinking" not in details.capabilities  # the switch says it has no effect
