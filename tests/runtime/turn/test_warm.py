"""Prefill while the user types (`runtime/turn/warm.py`): the warm request is exactly the next
turn's request, its tail too — the same messages, tools and num_ctx, one output token — and
nothing reaches the ledger; a hosted model is never warmed; a turn waits for a warm in flight.

Against the Ollama double over real HTTP: it records every /api/chat body as sent.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re

import httpx
import pytest

from tests.context.sessions import profile
from tests.doubles.ollama_server import OllamaDouble
from tests.runtime.turn.test_first_answer import ASK, MODEL, SMALL, conversation
from vak_desktop.context.payloads import Reset
from vak_desktop.ledger import Ledger
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime import TurnRunner, default_tools
from vak_desktop.runtime.capacity.binding import bind_model
from vak_desktop.runtime.inspection.preview import preview_next
from vak_desktop.runtime.sessions.interchange import import_openai
from vak_desktop.runtime.turn.projection import tail_context_now
from vak_desktop.runtime.turn.runner import DEFAULT_SYSTEM_PROMPT

# a horizon the compact prefix and the new turn fill: the turn resets with a handoff first
TINY = dataclasses.replace(SMALL, instruction_horizon=profile(800).instruction_horizon)


def chats(server: OllamaDouble) -> list[dict[str, object]]:
    return [body for _, path, body in server.requests if path == "/api/chat"]


@pytest.mark.parametrize("measured", [SMALL, TINY], ids=["packet", "reset"])
async def test_the_warm_request_is_the_next_turns_request(ledger: Ledger, measured: object) -> None:
    session = import_openai(ledger, conversation(), title="imported").session
    ledger.append(session, measured)  # type: ignore[arg-type]
    with OllamaDouble(default_text="Searching now.") as server:
        server.add_model(MODEL, trained_window=32_768)
        async with httpx.AsyncClient(timeout=30) as client:
            ollama = OllamaProvider(client, server.url)
            binding = await bind_model(ollama, MODEL)
            runner = TurnRunner(ledger, ollama, default_tools())
            written = len(ledger.chain_to_root(session))
            foreseen = preview_next(
                ledger,
                session,
                measured,  # type: ignore[arg-type]
                directive=ASK,
                system=DEFAULT_SYSTEM_PROMPT,
                tools=runner.tools,
            ).reset
            task = runner.warm(session, ASK, binding)
            assert task is not None
            warmed = await asyncio.wait_for(task, 30)
            assert warmed is not None and warmed.prompt_tokens > 0
            assert len(ledger.chain_to_root(session)) == written  # a warm writes nothing
            async for _ in runner.run(session, ASK, binding):
                pass
            warm, turn = chats(server)[:2]
    assert warm["options"]["num_predict"] == 1  # type: ignore[index]
    assert turn["options"]["num_predict"] > 1  # type: ignore[index,operator]
    assert warm["options"]["num_ctx"] == turn["options"]["num_ctx"]  # type: ignore[index]
    assert warm["tools"] == turn["tools"]
    sent, warmed_messages = turn["messages"], warm["messages"]
    assert isinstance(sent, list) and isinstance(warmed_messages, list)
    assert warmed_messages[:-1] == sent[:-1]
    # the tail too: the time (its minute may have turned since), the passages, the draft.
    # Before, the tail was left out, and the turn prefilled all of it after Enter (122-267
    # tokens on the real models' planted-fact cases)
    warm_tail, tail = (str(m["content"]).splitlines() for m in (warmed_messages[-1], sent[-1]))
    assert warm_tail[1:] == tail[1:] and tail[-1].endswith(ASK)
    resets = [e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, Reset)]
    assert bool(resets) == (measured is TINY)  # the turn wrote the Reset the warm request foresaw
    # `vak request` and the inspector foresee it too: the request they show is the one sent
    assert (foreseen.handoff if foreseen else None) == (resets[0].handoff if resets else None)
    if resets:
        assert any(str(m["content"]).startswith("<handoff>") for m in warm["messages"])  # type: ignore[index,union-attr]


async def test_a_hosted_model_is_never_warmed(ledger: Ledger) -> None:
    session = import_openai(ledger, conversation(), title="imported").session
    ledger.append(session, SMALL)
    with OllamaDouble() as server:
        server.add_model(MODEL, trained_window=32_768)
        async with httpx.AsyncClient(timeout=30) as client:
            ollama = OllamaProvider(client, server.url)
            binding = await bind_model(ollama, MODEL)
            ollama.local = False  # as a hosted provider says of itself: a warm would be billed
            runner = TurnRunner(ledger, ollama, default_tools())
            assert runner.warm(session, ASK, binding) is None
    assert chats(server) == []


async def test_a_turn_waits_for_the_warm_request_in_flight_and_one_runs_at_a_time(
    ledger: Ledger,
) -> None:
    session = import_openai(ledger, conversation(), title="imported").session
    ledger.append(session, SMALL)
    with OllamaDouble(default_text="a slow answer " * 4, default_delay_per_chunk=0.1) as server:
        server.add_model(MODEL, trained_window=32_768)
        async with httpx.AsyncClient(timeout=30) as client:
            ollama = OllamaProvider(client, server.url)
            binding = await bind_model(ollama, MODEL)
            runner = TurnRunner(ledger, ollama, default_tools())
            task = runner.warm(session, ASK, binding)
            assert task is not None
            assert runner.warm(session, ASK + " now", binding) is None  # single-flight
            async for _ in runner.run(session, ASK, binding):
                assert task.done()  # the turn's events come after the warm request ended
            assert task.result() is not None  # it finished; the turn did not cancel it
            warm, turn = chats(server)[:2]
    assert warm["options"]["num_predict"] == 1  # type: ignore[index]
    assert turn["messages"][:-1] == warm["messages"][:-1]  # type: ignore[index]


def test_the_tails_clock_reads_to_the_minute() -> None:
    """Before: the tail's UTC time read to the second, so the turn's tail never was the warm
    request's and the real 0.5B prefilled 229 of 1,471 tokens again after a warm-up of the
    very draft it was sent."""
    context = tail_context_now()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\dZ", context.utc)
