"""Providers around the loopback Ollama double that behave like runners the probe must survive.

Each is a real `ChatProvider` delegating to `OllamaProvider` on the double, changing one thing:
a model that writes its tool calls as text, a llama.cpp server whose window is smaller than
the model's, a runner held busy until the test lets it go, a hosted provider, and an older
Ollama that ignores `truncate` and `num_ctx` and cuts the prompt without a word.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from typing import Any

import httpx

from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.context.request import ChatRequest
from vak_desktop.providers.base import (
    ModelDetails,
    ModelSummary,
    StreamEvent,
    TextDelta,
    ToolCallEvent,
)
from vak_desktop.providers.errors import ContextOverflow
from vak_desktop.providers.ollama import OllamaProvider

PROBE_MARK = "[probe "  # every probe request's system text opens with it (ProbeHistory)


def is_probe_body(body: dict[str, Any]) -> bool:
    """Whether a chat body the double received is a capacity-probe sample."""
    messages = body.get("messages") or [{}]
    return str(messages[0].get("content") or "").startswith(PROBE_MARK)


def is_probe_request(request: ChatRequest) -> bool:
    return bool(request.messages) and request.messages[0].content.startswith(PROBE_MARK)


class _Wrapper:
    """Delegates everything to an OllamaProvider on the double."""

    name = "ollama"
    local = True

    def __init__(self, client: httpx.AsyncClient, double: OllamaDouble) -> None:
        self.inner = OllamaProvider(client, double.url)
        self.double = double
        self.host = self.inner.host
        self.requests: list[ChatRequest] = []

    async def show(self, model: str) -> ModelDetails:
        return await self.inner.show(model)

    async def digest(self, model: str) -> str:
        return await self.inner.digest(model)

    async def list_models(self) -> list[ModelSummary]:
        return await self.inner.list_models()

    def prompt_tokens(self, request: ChatRequest) -> int:
        body = self.inner.render(request)
        return self.double.prompt_tokens(body["messages"], body.get("tools"))

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        self.requests.append(request)
        async for event in self.inner.stream(request):
            yield event


class TextFormModel(_Wrapper):
    """A small model that answers a tool instruction with the call written in its text
    (measured: Qwen2.5-Coder 0.5B/1.5B) — as JSON, or as `name(args)`."""

    def __init__(self, client: httpx.AsyncClient, double: OllamaDouble, style: str) -> None:
        super().__init__(client, double)
        self.style = style

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        self.requests.append(request)
        async for event in self.inner.stream(request):
            if isinstance(event, ToolCallEvent):
                call = event.call
                if self.style == "json":
                    text = json.dumps({"name": call.name, "arguments": call.arguments})
                    yield TextDelta(f"```json\n{text}\n```")
                else:
                    yield TextDelta(f"{call.name}()")
            else:
                yield event


class SmallWindowServer(_Wrapper):
    """A llama.cpp server whose `n_ctx` is below the model's trained window: over it, a 400
    `exceed_context_size_error` with both sizes, whatever num_ctx we ask for."""

    def __init__(self, client: httpx.AsyncClient, double: OllamaDouble, n_ctx: int) -> None:
        super().__init__(client, double)
        self.n_ctx = n_ctx

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        self.requests.append(request)
        tokens = self.prompt_tokens(request)
        if tokens > self.n_ctx:
            raise ContextOverflow(tokens, self.n_ctx, "exceed_context_size_error")
        async for event in self.inner.stream(request):
            yield event


class GatedRunner(_Wrapper):
    """Probe requests (system text opening "[probe ") wait at a gate the test opens; every other
    request goes straight through. `probe_waiting` is set once a probe request is held."""

    def __init__(self, client: httpx.AsyncClient, double: OllamaDouble) -> None:
        super().__init__(client, double)
        self.gate = asyncio.Event()
        self.probe_waiting = asyncio.Event()

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        if is_probe_request(request):
            self.probe_waiting.set()
            await self.gate.wait()
        self.requests.append(request)
        async for event in self.inner.stream(request):
            yield event


class HeldAfter(_Wrapper):
    """The first `allowed` probe requests go through; every later one waits at `gate` (and
    sets `probe_waiting`), so a test can pause or stop a probe a known number of samples in."""

    def __init__(self, client: httpx.AsyncClient, double: OllamaDouble, allowed: int) -> None:
        super().__init__(client, double)
        self.allowed = allowed
        self.gate = asyncio.Event()
        self.probe_waiting = asyncio.Event()

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        if is_probe_request(request):
            if self.allowed <= 0:
                self.probe_waiting.set()
                await self.gate.wait()
            self.allowed -= 1
        self.requests.append(request)
        async for event in self.inner.stream(request):
            yield event


class HostedModel(_Wrapper):
    """The double presented as a hosted provider: probing it would cost money."""

    name = "hosted"
    local = False


class LegacyOllama(OllamaProvider):
    """An older Ollama (or a proxy) that ignores `truncate`, `shift` and `num_ctx`: it runs at
    its default window and drops the oldest messages to fit, saying nothing."""

    def render(self, request: ChatRequest) -> dict[str, Any]:
        body = super().render(request)
        body.pop("truncate", None)
        body.pop("shift", None)
        options = body.get("options") or {}
        options.pop("num_ctx", None)
        return body


class CoinModel(_Wrapper):
    """A sampling model near its limit, like the real Qwen2.5-Coder 0.5B there (2-3 of 5 at a
    size): its probe samples follow or not in the order `pattern` gives (cycled), whatever the
    size; a sample that does not follow gets prose instead of the double's call."""

    def __init__(self, client: httpx.AsyncClient, double: OllamaDouble, pattern: str) -> None:
        super().__init__(client, double)
        self.pattern = pattern  # "y" follows, "n" does not: "ynyn" alternates
        self.samples = 0

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        follows = True
        if is_probe_request(request):
            follows = self.pattern[self.samples % len(self.pattern)] == "y"
            self.samples += 1
        self.requests.append(request)
        async for event in self.inner.stream(request):
            if isinstance(event, ToolCallEvent) and not follows:
                yield TextDelta("I looked, but there is nothing like that in your files.")
            else:
                yield event
