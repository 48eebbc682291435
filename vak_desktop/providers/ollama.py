"""The Ollama adapter: a `ChatRequest` rendered for native `/api/chat`, NDJSON read back.

Why the native API and not `/v1`: the OpenAI-compatible endpoint ignores `num_ctx` and
`keep_alive`, the two settings that stop a local model from silently truncating or unloading.
Every chat request carries `"truncate": false, "shift": false`, so a request longer than the
window comes back as a `ContextOverflow` instead of messages Ollama drops without a word, and
every request carries `keep_alive`, so the model does not unload after Ollama's 5 minutes.

Nothing read from the wire is silently lost: a line that is not JSON raises `BadResponse`
naming the line, a line with invalid UTF-8 is repaired and announced with a `StreamNotice`
carrying the raw bytes, and a stream that stops before its final chunk is an error.
The wire facts relied on are listed in design/product.md ("Ollama facts").
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import httpx

from vak_desktop.context.payloads import ToolCall
from vak_desktop.context.request import ChatRequest
from vak_desktop.providers import http_common as http
from vak_desktop.providers import ollama_wire as wire
from vak_desktop.providers import openai_wire, retry
from vak_desktop.providers.base import (
    LoadedModel,
    ModelDetails,
    ModelSummary,
    PullProgress,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
)
from vak_desktop.providers.deadlines import DEADLINES, Deadlines, paced
from vak_desktop.providers.errors import (
    BadResponse,
    ModelNotFound,
    ProviderError,
    ServerError,
)
from vak_desktop.providers.retry import RetryPolicy


class OllamaProvider:
    """Streams chat from one Ollama server and manages its models.

    Implements `ChatProvider`, `RunsLocally`, `ModelCatalog`, `ModelDigests`, `ModelInspector`,
    `LoadedModels`, `ModelPuller`, `ModelRemover`, `ModelUnloader` and `VersionReporter`.
    """

    name = "ollama"
    local = True  # a runner the user hosts: probing it costs time, not money

    def __init__(
        self,
        client: httpx.AsyncClient,
        host: str,
        *,
        default_keep_alive: str | int = wire.DEFAULT_KEEP_ALIVE,
        retry: RetryPolicy | None = None,
        deadlines: Deadlines = DEADLINES,
    ) -> None:
        self.host = wire.resolve_host(host)
        self.default_keep_alive = default_keep_alive
        self._client = client
        self._retry = retry if retry is not None else RetryPolicy()
        self._deadlines = deadlines  # first byte (a cold model load), stall between reads
        self._call_numbers = itertools.count(1)

    # -- chat -------------------------------------------------------------------------------

    def render(self, request: ChatRequest) -> dict[str, Any]:
        """The exact JSON body `stream` posts to /api/chat for `request`."""
        options: dict[str, Any] = {}
        if request.num_ctx > 0:
            options["num_ctx"] = request.num_ctx
        if request.max_tokens is not None:
            options["num_predict"] = request.max_tokens
        if request.temperature is not None:
            options["temperature"] = request.temperature
        keep_alive = self.default_keep_alive if request.keep_alive is None else request.keep_alive
        body: dict[str, Any] = {
            "model": request.model,
            "messages": [wire.render_message(m) for m in request.messages],
            "stream": True,
            "keep_alive": wire.wire_keep_alive(keep_alive),
            "truncate": False,
            "shift": False,
        }
        if request.tools:
            body["tools"] = openai_wire.function_tools(request.tools)
        if options:
            body["options"] = options
        if request.think is not None:
            body["think"] = request.think
        return body

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """Yield deltas and tool calls as they arrive, then exactly one `Done`; a 429 or 503
        (Ollama's "server busy", with its Retry-After) before the first event is retried."""
        events = retry.stream_with_retry(
            lambda: self._stream_once(request), self._retry, f"Ollama {self.host}"
        )
        async with contextlib.aclosing(events):
            async for event in events:
                yield event

    async def _stream_once(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        body = self.render(request)
        started = time.perf_counter_ns()
        first_token_ns = 0
        number, responded = 0, False
        try:
            url = self.host + "/api/chat"
            async with paced(
                self._client, "POST", url, self._deadlines, "Ollama", json=body
            ) as stream:
                async with contextlib.aclosing(stream.opening()) as opening:
                    async for waiting in opening:
                        yield waiting
                response = stream.response
                if response.status_code >= 400:
                    await response.aread()
                    raise self._status_error(response, request.model, request.num_ctx)
                unexpected = http.not_a_stream(response, "a stream of JSON lines")
                if unexpected is not None:
                    raise unexpected
                responded = True
                async with contextlib.aclosing(wire.numbered_lines(stream.body())) as numbered:
                    async for number, raw in numbered:
                        text, notice = http.decode_line(raw, number)
                        if notice is not None:
                            yield notice
                        chunk = http.parse_object(text, number, raw)
                        if "error" in chunk:
                            raise wire.stream_error(str(chunk["error"]), request.num_ctx)
                        message = chunk.get("message") or {}
                        if not isinstance(message, dict):
                            raise BadResponse("'message' is not an object", number, raw)
                        events = self._message_events(message, number, raw)
                        if events and not first_token_ns:
                            first_token_ns = time.perf_counter_ns() - started
                        for event in events:
                            yield event
                        if chunk.get("done") is True:
                            wall_ns = time.perf_counter_ns() - started
                            yield wire.done_event(chunk, request.model, first_token_ns, wall_ns)
                            return
        except httpx.TransportError as exc:
            raise self._transport_error(exc, responded, number) from exc
        raise BadResponse(
            'stream ended before the final chunk (no line with "done": true)', number or None
        )

    def _message_events(
        self, message: Mapping[str, Any], number: int, raw: bytes
    ) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        thinking, content = message.get("thinking") or "", message.get("content") or ""
        if not isinstance(thinking, str) or not isinstance(content, str):
            raise BadResponse("message content or thinking is not a string", number, raw)
        if thinking:
            events.append(ThinkingDelta(thinking))
        if content:
            events.append(TextDelta(content))
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise BadResponse("'tool_calls' is not a list", number, raw)
        events.extend(ToolCallEvent(self._tool_call(c, number, raw)) for c in calls)
        return events

    def _tool_call(self, value: Any, number: int, raw: bytes) -> ToolCall:
        function = value.get("function") if isinstance(value, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise BadResponse("a tool call without a function name", number, raw)
        arguments = function.get("arguments") or {}
        if isinstance(arguments, str):  # tolerate servers that send the arguments encoded
            try:
                arguments = json.loads(arguments)
            except ValueError:
                raise BadResponse("tool call arguments are not JSON", number, raw) from None
        if not isinstance(arguments, dict):
            raise BadResponse("tool call arguments are not a JSON object", number, raw)
        call_id = value.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = f"call_{next(self._call_numbers)}"
        return ToolCall(id=call_id, name=function["name"], arguments=arguments)

    # -- models -----------------------------------------------------------------------------

    async def list_models(self) -> list[ModelSummary]:
        """The models on the server (/api/tags)."""
        data = await self._json("GET", "/api/tags")
        return [
            ModelSummary(
                name=str(m.get("name") or m.get("model") or ""),
                digest=str(m.get("digest") or ""),
                size=http.int_field(m, "size"),
                modified_at=str(m.get("modified_at") or ""),
                family=str(wire.details_of(m).get("family") or ""),
                parameter_size=str(wire.details_of(m).get("parameter_size") or ""),
                quantisation=str(wire.details_of(m).get("quantization_level") or ""),
            )
            for m in wire.objects(data.get("models"))
        ]

    async def digest(self, model: str) -> str:
        """The digest /api/tags lists for `model` ("" if absent); a bare name means ":latest"."""
        wanted = model if ":" in model.rsplit("/", 1)[-1] else model + ":latest"
        for summary in await self.list_models():
            if summary.name in (model, wanted):
                return summary.digest
        return ""

    async def show(self, model: str) -> ModelDetails:
        """The trained window, Modelfile num_ctx and capabilities of `model` (/api/show)."""
        data = await self._json("POST", "/api/show", {"model": model}, model=model)
        info = data.get("model_info") or {}
        info = info if isinstance(info, dict) else {}
        architecture = str(info.get("general.architecture") or "")
        window = info.get(f"{architecture}.context_length") if architecture else None
        if window is None:  # no architecture key: take any "<arch>.context_length"
            window = next((v for k, v in info.items() if k.endswith(".context_length")), None)
        details = wire.details_of(data)
        return ModelDetails(
            name=model,
            declared_window=window if isinstance(window, int) and window > 0 else None,
            configured_num_ctx=wire.parameter_int(str(data.get("parameters") or ""), "num_ctx"),
            capabilities=tuple(str(c) for c in data.get("capabilities") or ()),
            architecture=architecture,
            family=str(details.get("family") or ""),
            parameter_size=str(details.get("parameter_size") or ""),
            quantisation=str(details.get("quantization_level") or ""),
        )

    async def loaded(self) -> list[LoadedModel]:
        """The models in memory now and until when (/api/ps)."""
        data = await self._json("GET", "/api/ps")
        return [
            LoadedModel(
                name=str(m.get("name") or m.get("model") or ""),
                digest=str(m.get("digest") or ""),
                size=http.int_field(m, "size"),
                size_vram=http.int_field(m, "size_vram"),
                expires_at=str(m.get("expires_at") or ""),
                context_length=http.int_field(m, "context_length") or None,
            )
            for m in wire.objects(data.get("models"))
        ]

    async def pull(self, model: str) -> AsyncGenerator[PullProgress, None]:
        """Download `model`, yielding each progress line; ends after Ollama says "success"."""
        number, responded, finished = 0, False, False
        try:
            async with self._client.stream(
                "POST", self.host + "/api/pull", json={"model": model}, timeout=http.TIMEOUT
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    if "file does not exist" in wire.error_text(response):
                        raise ModelNotFound(model, wire.error_text(response))
                    raise self._status_error(response, model, 0)
                responded = True
                async with contextlib.aclosing(
                    wire.numbered_lines(response.aiter_bytes())
                ) as numbered:
                    async for number, raw in numbered:
                        line = http.parse_object(raw.decode("utf-8", errors="replace"), number, raw)
                        if "error" in line:
                            detail = str(line["error"])
                            if "file does not exist" in detail:
                                raise ModelNotFound(model, detail)
                            raise ServerError(detail)
                        status = str(line.get("status") or "")
                        finished = finished or status == "success"
                        yield PullProgress(
                            status=status,
                            digest=str(line.get("digest") or ""),
                            total=http.int_field(line, "total"),
                            completed=http.int_field(line, "completed"),
                            extra={
                                k: str(v)
                                for k, v in line.items()
                                if k not in ("status", "digest", "total", "completed")
                            },
                        )
        except httpx.TransportError as exc:
            raise self._transport_error(exc, responded, number) from exc
        if not finished:
            raise BadResponse("pull ended before Ollama reported success", number or None)

    async def delete(self, model: str) -> None:
        """Remove `model` from the server's disk (/api/delete)."""
        await self._call("DELETE", "/api/delete", {"model": model}, model=model)

    async def unload(self, model: str) -> None:
        """Free the memory `model` holds now: a chat with no messages and keep_alive 0."""
        body = {"model": model, "messages": [], "keep_alive": 0, "stream": False}
        await self._call("POST", "/api/chat", body, model=model)

    async def version(self) -> str:
        """The server's version string, e.g. "0.33.0"."""
        return str((await self._json("GET", "/api/version")).get("version") or "")

    # -- HTTP plumbing ----------------------------------------------------------------------

    async def _call(
        self, method: str, path: str, body: Any = None, *, model: str = ""
    ) -> httpx.Response:
        try:
            response = await self._client.request(
                method, self.host + path, json=body, timeout=http.TIMEOUT
            )
        except httpx.TransportError as exc:
            raise self._transport_error(exc, False, 0) from exc
        if response.status_code >= 400:
            raise self._status_error(response, model, 0)
        return response

    async def _json(
        self, method: str, path: str, body: Any = None, *, model: str = ""
    ) -> dict[str, Any]:
        response = await self._call(method, path, body, model=model)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise BadResponse(f"{path} did not answer a JSON object", raw=response.content)
        return data

    def _status_error(self, response: httpx.Response, model: str, num_ctx: int) -> ProviderError:
        status, text = response.status_code, wire.error_text(response)
        overflow = wire.overflow(text, num_ctx)
        if overflow is not None:
            return overflow
        missing = wire.MODEL_NOT_FOUND.search(text) if status == 404 else None
        if missing is not None:
            return ModelNotFound(model or missing[1], text)
        # e.g. a tool-less model sent tools, a bad keep_alive
        return http.status_error(response, text, f"Ollama at {self.host}")

    def _transport_error(
        self, exc: httpx.TransportError, responded: bool, line: int
    ) -> ProviderError:
        return http.transport_error(
            exc,
            host=self.host,
            responded=responded,
            line=line,
            server="Ollama",
            start_hint="start it with `ollama serve`",
            stream_end="the final chunk",
            deadlines=self._deadlines,
        )
