"""The OpenAI-compatible adapter: a `ChatRequest` rendered for `/v1/chat/completions`, the
server-sent events read back.

One adapter for every server that speaks the chat-completions dialect: the llama.cpp server,
LM Studio, vLLM, Ollama's `/v1`, gateways. Usage is asked for with `stream_options`, so the
last chunk carries it; OpenAI's `prompt_tokens` includes `cached_tokens`, which we keep apart
as the cache-read tier. Tool calls arrive as deltas keyed by `index` and are emitted whole,
arguments parsed, when the stream ends. Rate limits and server failures are retried before
the first event (`retry.py`); a refused key is a `KeyRefused` naming the provider entry, with
the key (or anything key-shaped the server echoed) taken out of every message.

Nothing read from the wire is silently lost: an event that is not JSON raises `BadResponse`
naming the line, a line with invalid UTF-8 is repaired and announced with a `StreamNotice`
carrying the raw bytes, and a stream that stops before `data: [DONE]` is an error.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import AsyncGenerator
from typing import Any

import httpx

from vak_desktop.context.payloads import Timings, Usage
from vak_desktop.context.request import ChatRequest
from vak_desktop.providers import http_common as http
from vak_desktop.providers import openai_wire as wire
from vak_desktop.providers import retry
from vak_desktop.providers.base import (
    Done,
    ModelDetails,
    ModelSummary,
    StreamEvent,
    StreamNotice,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
)
from vak_desktop.providers.deadlines import DEADLINES, Deadlines, paced
from vak_desktop.providers.errors import (
    BadResponse,
    KeyRefused,
    ModelNotFound,
    ProviderError,
    RateLimited,
    ServerError,
    Unreachable,
)
from vak_desktop.providers.retry import RetryPolicy
from vak_desktop.redaction import register_secret

CATALOGUE_TTL_S = 60.0


class OpenAICompatibleProvider:
    """Streams chat from one OpenAI-compatible server, lists its models and reads their windows.

    Implements `ChatProvider`, `RunsLocally` (local when the host is a loopback address),
    `ChoosesTools`, `ModelCatalog` and `ModelInspector`. The hosted adapters (`openai.py`, `openrouter.py`)
    are this class with their own cache hints, metadata rung and wording.
    """

    name = "openai-compatible"
    server = "the server"  # how the messages call it
    start_hint = "start it (e.g. `llama-server`)"
    token_limit_field = "max_tokens"
    reads_props = True  # ask llama.cpp's `/props` for the server's window
    chooses_tools = True  # `tool_choice` is sent as given ("none", "required")
    local: bool

    def __init__(
        self,
        client: httpx.AsyncClient,
        host: str,
        *,
        api_key: str | None = None,
        key_name: str | None = None,
        retry: RetryPolicy | None = None,
        deadlines: Deadlines = DEADLINES,
    ) -> None:
        self.host = wire.resolve_host(host)
        self.local = self._runs_locally()
        self.key_name = key_name or self.name  # the provider entry the key belongs to
        self._client = client
        self._api_key = api_key
        register_secret(api_key, f"{key_name or self.name} API key")
        self._retry = retry if retry is not None else RetryPolicy()
        self._deadlines = deadlines  # first byte (a cold model load), stall between reads
        self._call_numbers = itertools.count(1)
        self._entries: tuple[list[dict[str, Any]] | None, float] = (None, 0.0)

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}(host={self.host!r})"

    def _runs_locally(self) -> bool:
        return wire.is_loopback(self.host)  # on this machine: probing costs time, not money

    # -- chat -------------------------------------------------------------------------------

    def render(self, request: ChatRequest) -> dict[str, Any]:
        """The exact JSON body `stream` posts to /v1/chat/completions for `request`."""
        body: dict[str, Any] = {
            "model": request.model,
            "messages": [wire.render_message(m) for m in request.messages],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = wire.function_tools(request.tools)
            if request.tool_choice:
                body["tool_choice"] = request.tool_choice
        if request.max_tokens is not None:
            body[self.token_limit_field] = request.max_tokens
        if request.temperature is not None and self.accepts_sampling(request.model):
            body["temperature"] = request.temperature
        if request.think is not None:
            body.update(self.think_fields(request.model, request.think))
        body.update(self.cache_hints(request, body))
        return body

    def accepts_sampling(self, model: str) -> bool:
        """Whether `model` takes `temperature` (OpenAI's reasoning models refuse it)."""
        return True

    def think_fields(self, model: str, think: bool) -> dict[str, Any]:
        """The server's own thinking switch. llama.cpp (and vLLM) pass `chat_template_kwargs`
        to the model's chat template, whose `enable_thinking` turns a Qwen3-style model's
        thinking on or off; `reasoning_format: "deepseek"` has llama.cpp return the thinking
        apart, as `reasoning_content`. A server without them ignores unknown fields."""
        fields: dict[str, Any] = {"chat_template_kwargs": {"enable_thinking": think}}
        if think:
            fields["reasoning_format"] = "deepseek"
        return fields

    def cache_hints(self, request: ChatRequest, body: dict[str, Any]) -> dict[str, Any]:
        """Fields that tell the provider where its cache is (none: a runner on this kind of
        server caches every prefix on its own; byte-stable requests are all it needs)."""
        return {}

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """Yield deltas as they arrive, then each tool call, then exactly one `Done`; a rate
        limit or a server failure before the first event is retried (`retry.py`)."""
        events = retry.stream_with_retry(
            lambda: self._stream_once(request), self._retry, f"{self.key_name} {self.host}"
        )
        async with contextlib.aclosing(events):
            async for event in events:
                yield event

    async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        body = self.render(request)
        started = time.perf_counter_ns()
        first_token_ns = 0
        number, responded = 0, False
        calls = wire.ToolCallAssembler()
        usage, timings, finish, model = Usage(), Timings(), "", request.model
        try:
            url = self.host + "/v1/chat/completions"
            async with paced(
                self._client,
                "POST",
                url,
                self._deadlines,
                self.server,
                json=body,
                headers=self._headers(),
            ) as stream:
                async with contextlib.aclosing(stream.opening()) as opening:
                    async for waiting in opening:
                        yield waiting
                response = stream.response
                if response.status_code >= 400:
                    await response.aread()
                    raise self._status_error(response, request.model)
                unexpected = http.not_a_stream(response, "an event stream")
                if unexpected is not None:
                    raise unexpected
                responded = True
                async with contextlib.aclosing(wire.sse_data(stream.body())) as events:
                    async for number, raw in events:
                        if raw.strip() == wire.DONE_MARKER:
                            cut = finish == "length"
                            for call in calls.finish(self._next_call_id, cut=cut):
                                yield (
                                    call if isinstance(call, StreamNotice) else ToolCallEvent(call)
                                )
                            wall_ns = time.perf_counter_ns() - started
                            timings = Timings(
                                prompt_eval_ns=timings.prompt_eval_ns,
                                eval_ns=timings.eval_ns,
                                first_token_ns=first_token_ns,
                                wall_ns=wall_ns,
                            )
                            yield Done(finish, usage, timings, model)
                            return
                        text, notice = http.decode_line(raw, number)
                        if notice is not None:
                            yield notice
                        chunk = http.parse_object(text, number, raw)
                        if "error" in chunk:
                            message, error = wire.error_of(chunk)
                            message = http.redact(message, self._api_key)
                            raise wire.overflow(message, error) or ServerError(message)
                        model = str(chunk.get("model") or model)
                        if chunk.get("usage"):
                            usage = wire.usage_of(chunk["usage"])
                        if isinstance(chunk.get("timings"), dict):  # llama.cpp's own
                            timings = _llama_timings(chunk["timings"])
                        for choice in _choices(chunk, number, raw):
                            finish = str(choice.get("finish_reason") or finish)
                            delta = choice.get("delta") or {}
                            if not isinstance(delta, dict):
                                raise BadResponse("'delta' is not an object", number, raw)
                            out = _delta_events(delta, number, raw)
                            if delta.get("tool_calls") is not None:
                                calls.add(delta["tool_calls"], number, raw)
                            if (out or delta.get("tool_calls")) and not first_token_ns:
                                first_token_ns = time.perf_counter_ns() - started
                            for event in out:
                                yield event
        except httpx.TransportError as exc:
            raise self._transport_error(exc, responded, number) from exc
        raise BadResponse("stream ended before `data: [DONE]`", number or None)

    def _next_call_id(self) -> str:
        return f"call_{next(self._call_numbers)}"

    # -- models -----------------------------------------------------------------------------

    async def list_models(self) -> list[ModelSummary]:
        """The models the server serves (GET /v1/models)."""
        return [
            ModelSummary(name=str(m["id"]), modified_at=str(m.get("created") or ""))
            for m in await self._model_entries()
        ]

    async def show(self, model: str) -> ModelDetails:
        """The metadata rung: the window `/v1/models` declares for `model` (OpenRouter
        `context_length`, vLLM `max_model_len` …) and, on a llama.cpp server, the window the
        server was started with (`/props`), which is what it will accept."""
        entries = await self._model_entries()
        entry = next((e for e in entries if e["id"] == model), None)
        props = await self._props() if self.reads_props else None
        served = wire.server_window(props) if props is not None else None
        if entry is None and entries and served is None:
            names = ", ".join(str(e["id"]) for e in entries[:10])
            raise ModelNotFound(model, f"{self.host} serves {names}")
        declared = wire.declared_window(entry or {})
        return ModelDetails(
            name=model,
            declared_window=served or declared,
            configured_num_ctx=served,
            capabilities=self.capabilities_of(entry or {}) + wire.template_abilities(props),
        )

    def capabilities_of(self, entry: dict[str, Any]) -> tuple[str, ...]:
        """What a `/v1/models` entry says the model can do (generic servers say nothing)."""
        return ()

    def _fresh_entries(self) -> list[dict[str, Any]] | None:
        """The model list read less than a minute ago, if there is one."""
        held, at = self._entries
        return held if held is not None and time.monotonic() - at < CATALOGUE_TTL_S else None

    def _listed(self, model: str) -> dict[str, Any] | None:
        return next((e for e in self._fresh_entries() or [] if e["id"] == model), None)

    async def _model_entries(self) -> list[dict[str, Any]]:
        """The `/v1/models` entries, read again when the last read is older than a minute
        (`vak models` shows every listed model: OpenRouter's catalogue is hundreds long)."""
        if (held := self._fresh_entries()) is not None:
            return held
        data = await self._get_json("/v1/models")
        if not isinstance(data, dict) or not isinstance(data.get("data"), list):
            raise BadResponse("/v1/models did not answer a model list")
        entries = [m for m in data["data"] if isinstance(m, dict) and m.get("id")]
        self._entries = (entries, time.monotonic())
        return entries

    async def _props(self) -> Any:
        try:
            return await self._get_json("/props")
        except (ServerError, RateLimited, Unreachable, KeyRefused):
            raise
        except ProviderError:
            return None  # not a llama.cpp server (a 404, a page that is not JSON …)

    async def _get_json(self, path: str, model: str = "") -> Any:
        """GET `path` as JSON, retried like a stream (`model`: the one a 404 is about)."""

        async def once() -> Any:
            return await http.get_json(
                self._client,
                self.host + path,
                self._headers(),
                on_transport=lambda exc: self._transport_error(exc, False, 0),
                on_status=lambda response: self._status_error(response, model),
            )

        return await retry.call_with_retry(once, self._retry, f"{self.key_name} {self.host}")

    # -- HTTP plumbing ----------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def _status_error(self, response: httpx.Response, model: str) -> ProviderError:
        status = response.status_code
        text, error = wire.error_body(response)
        text = http.redact(text, self._api_key)
        overflow = wire.overflow(text, error)
        if overflow is not None:
            return overflow
        if status in (401, 403):
            return KeyRefused(self.key_name, self.host, status, text, bool(self._api_key))
        if status == 429 and error.get("code") == "insufficient_quota":  # waiting cannot help
            return ProviderError(
                f"the account behind the API key for {self.key_name!r} has no quota left "
                f"(HTTP 429): {text}"
            )
        if status == 404 and "model" in text.lower():
            return ModelNotFound(model or text, text)
        return http.status_error(response, text, self.host)

    def _transport_error(
        self, exc: httpx.TransportError, responded: bool, line: int
    ) -> ProviderError:
        return http.transport_error(
            exc,
            host=self.host,
            responded=responded,
            line=line,
            server=self.server,
            start_hint=self.start_hint,
            stream_end="`data: [DONE]`",
            deadlines=self._deadlines,
        )


def _choices(chunk: dict[str, Any], number: int, raw: bytes) -> list[dict[str, Any]]:
    choices = chunk.get("choices") or []
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise BadResponse("'choices' is not a list of objects", number, raw)
    return choices


def _delta_events(delta: dict[str, Any], number: int, raw: bytes) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    thinking = delta.get("reasoning_content") or delta.get("reasoning") or ""
    content = delta.get("content") or ""
    if not isinstance(thinking, str) or not isinstance(content, str):
        raise BadResponse("delta content or reasoning is not a string", number, raw)
    if thinking:
        events.append(ThinkingDelta(thinking))
    if content:
        events.append(TextDelta(content))
    return events


def _llama_timings(value: dict[str, Any]) -> Timings:
    def ns(key: str) -> int:
        ms = value.get(key)
        return int(ms * 1_000_000) if isinstance(ms, int | float) and ms > 0 else 0

    return Timings(prompt_eval_ns=ns("prompt_ms"), eval_ns=ns("predicted_ms"))
