"""A scripted provider: a real ChatProvider whose completions come from a queue.

Unit tests of the runtime use it where the wire format is beside the point; everything that
touches HTTP is tested against the loopback Ollama double instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

from vak_desktop.context.payloads import Timings, ToolCall, Usage
from vak_desktop.context.request import ChatRequest
from vak_desktop.providers.base import (
    Done,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
)
from vak_desktop.providers.errors import ProviderError


@dataclass
class Scripted:
    text: str = ""
    thinking: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    chunk: int = 5
    delay: float = 0.0
    raise_after: ProviderError | None = None  # raised after the text has streamed
    raise_before: ProviderError | None = None


class ScriptedProvider:
    name = "scripted"
    host = "scripted://"

    def __init__(self, *replies: Scripted) -> None:
        self.queue = list(replies)
        self.requests: list[ChatRequest] = []

    def enqueue(self, *replies: Scripted) -> None:
        self.queue.extend(replies)

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        self.requests.append(request)
        reply = self.queue.pop(0) if self.queue else Scripted(text="(no script)")
        if reply.raise_before:
            raise reply.raise_before
        if reply.thinking:
            yield ThinkingDelta(reply.thinking)
        for i in range(0, len(reply.text), reply.chunk):
            if reply.delay:
                await asyncio.sleep(reply.delay)
            yield TextDelta(reply.text[i : i + reply.chunk])
        if reply.raise_after:
            raise reply.raise_after
        for n, (name, arguments) in enumerate(reply.calls):
            yield ToolCallEvent(ToolCall(f"call_{len(self.requests)}_{n}", name, arguments))
        chars = request.chars()
        yield Done(
            "stop", Usage(input_tokens=chars // 4, output_tokens=len(reply.text) // 4), Timings()
        )
