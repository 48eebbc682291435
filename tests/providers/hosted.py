"""What the hosted-adapter tests share: an in-memory keyring, a retry policy whose sleeps are recorded instead of
slept, stream collection, and a real assembled request (a session of tool-using turns in a
real ledger, planned and assembled by the engine) to check cache hints against."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from tests.context.sessions import Call, SessionBuilder, TurnScript, profile, search_result
from vak_desktop.context.planning.assemble import TailContext, assemble
from vak_desktop.context.request import ChatRequest
from vak_desktop.ledger import Ledger
from vak_desktop.providers import ChatProvider, ProviderError, RetryPolicy, StreamEvent, TextDelta
from vak_desktop.runtime import DEFAULT_SYSTEM_PROMPT, default_tools
from vak_desktop.runtime.turn.projection import plan_turn

TAIL = TailContext(utc="2026-11-30T10:20:00Z", local="2026-11-30 11:20 (Monday)", timezone="CET")


@dataclass
class Sleeps:
    """Stands in for `asyncio.sleep` in a `RetryPolicy`: records each wait, returns at once."""

    waits: list[float] = field(default_factory=list)

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def fast_retry(sleeps: Sleeps, attempts: int = 4) -> RetryPolicy:
    """Backoff 1 s, 2 s, 4 s … with the jitter fixed at its midpoint (¾ of each)."""
    return RetryPolicy(attempts=attempts, base_delay=1.0, sleep=sleeps, jitter=lambda: 0.5)


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in events]


async def failure(provider: ChatProvider, request: ChatRequest) -> ProviderError:
    with pytest.raises(ProviderError) as raised:
        await collect(provider.stream(request))
    return raised.value


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def assembled_request(ledger: Ledger, model: str, history_turns: int = 3) -> ChatRequest:
    """The request the runtime would send for a running turn that already made one tool call,
    after `history_turns` closed search turns: system, history, directive, the step and its
    result, with the assembler's cache breakpoints and the session as the cache key."""
    session = SessionBuilder(ledger)
    for n in range(1, history_turns + 1):
        session.turn(
            TurnScript(
                f"Turn {n}: what does the search say about topic {n}?",
                ((Call("search", {"query": f"topic {n}"}, search_result(f"t{n}", 600)),),),
                f"Topic {n} is covered by ten sources.",
            )
        )
    session.pending(
        "Compare topic 1 with the latest one.",
        ((Call("search", {"query": "topic 1 vs 3"}, search_result("cmp", 400)),),),
    )
    index = session.index()
    tools = default_tools().specs()
    projection = plan_turn(
        index,
        profile(100_000, model=model),
        system=DEFAULT_SYSTEM_PROMPT,
        tools=tools,
        tail_context=TAIL,
        pending=True,
    )
    assembled = assemble(
        index,
        projection.plan,
        index.turns[-1],
        system=DEFAULT_SYSTEM_PROMPT,
        tools=tools,
        tail=projection.tail,
        ratio=projection.ratio,
    )
    return ChatRequest(
        model=model,
        messages=assembled.messages,
        tools=assembled.tools,
        session_key=session.session,
        cache_breakpoints=assembled.cache_breakpoints,
    )
