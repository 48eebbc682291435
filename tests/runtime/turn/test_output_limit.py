"""An answer cut at the output limit is said, not silent (issue #17 item 6, spec §1).

Every turn request sends a max output (Ollama `num_predict`, OpenAI `max_tokens`) from the
profile's measured `output_reserve`, which starts small (512 on a new model). When a step stops
because it reached that limit (Ollama `done_reason: "length"`, OpenAI `finish_reason: "length"`)
the stored step keeps the reason, an `output_limit` Activity and a Notice say so, and the
reserve grows for that model, so the next answer has more room. Both doubles speak the real
wire format and stop generating at the limit the request named.
"""

from __future__ import annotations

import httpx

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.doubles.openai_server import OpenAIDouble
from vak_desktop.context.capacity.feedback import OUTPUT_LIMIT
from vak_desktop.context.capacity.profile import DEFAULT_OUTPUT_RESERVE, metadata_profile
from vak_desktop.context.payloads import Activity, AssistantStep, Timings, Usage
from vak_desktop.context.request import ChatRequest
from vak_desktop.ledger import Ledger
from vak_desktop.providers.base import Done
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.providers.openai_compatible import OpenAICompatibleProvider
from vak_desktop.runtime import ModelBinding, TurnRunner, bind_model, default_tools
from vak_desktop.runtime.events import Notice, TurnEvent, TurnFinished
from vak_desktop.runtime.turn.step import output_limit_activity

MODEL = "llama3.2"
LONG = "A long answer that keeps going and going. " * 120  # ~1,300 tokens at 4 chars each


async def _turn(runner: TurnRunner, session: str, binding: ModelBinding) -> list[TurnEvent]:
    return [event async for event in runner.run(session, "Tell me everything.", binding)]


def _limits(ledger: Ledger, session: str) -> list[Activity]:
    chain = ledger.chain_to_root(session)
    return [
        e.payload
        for e in chain
        if isinstance(e.payload, Activity) and e.payload.type == OUTPUT_LIMIT
    ]


def _steps(ledger: Ledger, session: str) -> list[AssistantStep]:
    chain = ledger.chain_to_root(session)
    return [e.payload for e in chain if isinstance(e.payload, AssistantStep)]


async def test_an_ollama_answer_cut_at_num_predict_is_said_and_the_next_gets_more_room(
    ledger: Ledger,
) -> None:
    with OllamaDouble() as double:
        double.add_model(MODEL)
        double.enqueue(Reply(text=LONG), Reply(text=LONG), Reply(text="Short this time."))
        async with httpx.AsyncClient(timeout=30) as client:
            ollama = OllamaProvider(client, double.url)
            binding = await bind_model(ollama, MODEL)
            runner = TurnRunner(ledger, ollama, default_tools())
            session = ledger.create_session().id
            events = await _turn(runner, session, binding)
            sent = [b["options"]["num_predict"] for b in double.chat_bodies()]
            assert sent == [DEFAULT_OUTPUT_RESERVE]
            [step] = _steps(ledger, session)
            assert step.done_reason == "length" and step.text and len(step.text) < len(LONG)
            notices = [e.message for e in events if isinstance(e, Notice)]
            assert any(
                "stopped at the 512-token output limit" in n and "continue" in n for n in notices
            ), notices
            [limit] = _limits(ledger, session)
            assert limit.detail["limit"] == 512 and limit.detail["model"] == MODEL
            assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
            # the reserve grew for this model: the next answer may be twice as long
            await _turn(runner, session, binding)
            second = double.chat_bodies()[-1]["options"]["num_predict"]
            assert second == 2 * DEFAULT_OUTPUT_RESERVE
            assert len(_limits(ledger, session)) == 2  # cut again, at the larger limit
            assert "1,024-token" in _limits(ledger, session)[-1].message
            # an answer that ends on its own says nothing
            events = await _turn(runner, session, binding)
            assert not any(isinstance(e, Notice) for e in events)
            assert _steps(ledger, session)[-1].done_reason == "stop"
            assert len(_limits(ledger, session)) == 2


async def test_an_openai_answer_cut_at_max_tokens_is_said_and_the_next_gets_more_room(
    ledger: Ledger,
) -> None:
    with OpenAIDouble(models=("tiny",), default_text=LONG, windows={"tiny": 32_768}) as server:
        async with httpx.AsyncClient(timeout=30) as client:
            provider = OpenAICompatibleProvider(client, server.url)
            binding = await bind_model(provider, "tiny")
            runner = TurnRunner(ledger, provider, default_tools())
            session = ledger.create_session().id
            events = await _turn(runner, session, binding)
            bodies = [b for _, p, _, b in server.requests if p == "/v1/chat/completions"]
            assert [b["max_tokens"] for b in bodies] == [DEFAULT_OUTPUT_RESERVE]
            [step] = _steps(ledger, session)
            assert step.done_reason == "length"
            assert any(
                isinstance(e, Notice) and "512-token output limit" in e.message for e in events
            )
            await _turn(runner, session, binding)
            bodies = [b for _, p, _, b in server.requests if p == "/v1/chat/completions"]
            assert bodies[-1]["max_tokens"] == 2 * DEFAULT_OUTPUT_RESERVE


def _cut(prompt: int, written: int, *, num_ctx: int = 8_192, limit: int = 512) -> str:
    binding = ModelBinding("ollama", MODEL, None, num_ctx=num_ctx)
    request = ChatRequest(model=MODEL, messages=(), num_ctx=num_ctx, max_tokens=limit)
    done = Done("length", Usage(input_tokens=prompt, output_tokens=written), Timings())
    activity = output_limit_activity(
        binding, request, done, metadata_profile("ollama", MODEL, num_ctx), 0
    )
    assert activity is not None
    return activity.message


def test_the_reason_named_is_the_limit_the_counts_show_was_reached() -> None:
    """A 27-token answer under a 512-token cap with the window far from full stopped at the
    output limit (thinking, or the server's own count), not at the context window (#25 item 4);
    the window is named only when prompt + answer reach it."""
    assert "512-token output limit" in _cut(prompt=1_478, written=27)
    assert "context window" not in _cut(prompt=1_478, written=27)
    assert "512-token output limit" in _cut(prompt=1_478, written=512)
    full = _cut(prompt=8_100, written=90)
    assert "8,192-token context window was full" in full and "8,100 prompt" in full
