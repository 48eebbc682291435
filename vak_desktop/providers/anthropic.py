"""The Anthropic adapter: a `ChatRequest` sent to the Messages API (`POST /v1/messages`,
server-sent events), the events read back, and the model catalogue as the metadata rung.

The protocol details (blocks, cache breakpoints, usage tiers, stream events) are in
`anthropic_wire.py`; the event-stream lines are read by the same `sse_data` the OpenAI-shaped
adapters use. Authentication is the `x-api-key` header with an `anthropic-version`. A rate
limit (429), an overload (529) or a server failure is retried before the first event
(`retry.py`); "prompt is too long: N tokens > M maximum" is `ContextOverflow(N, M)`; a refused
key is `KeyRefused`, naming the provider entry and never the key.

`GET /v1/models/{id}` declares `max_input_tokens` (the window) and `max_tokens` (the output
cap); a server that predates those fields leaves the window to the Claude family's 200k.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator
from typing import Any

import httpx

from vak_desktop.context.payloads import Timings
from vak_desktop.context.request import ChatRequest
from vak_desktop.providers import anthropic_wire as wire
from vak_desktop.providers import http_common as http
from vak_desktop.providers import retry
from vak_desktop.providers.base import Done, ModelDetails, ModelSummary, StreamEvent
from vak_desktop.providers.deadlines import DEADLINES, Deadlines, paced
from vak_desktop.providers.errors import (
    BadResponse,
    KeyRefused,
    ModelNotFound,
    ProviderError,
)
from vak_desktop.providers.openai_wire import resolve_host, sse_data
from vak_desktop.providers.retry import RetryPolicy
from vak_desktop.redaction import register_secret

CLAUDE_WINDOW = 200_000  # every Claude model since the 3 family accepts at least this
MODEL_PAGE = 1_000  # the catalogue's largest page


class AnthropicProvider:
    """Streams chat from the Anthropic Messages API and reads its model catalogue.

    Implements `ChatProvider`, `RunsLocally` (never local), `ModelCatalog`, `ModelInspector`.
    """

    name = "anthropic"
    local = False

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
        self.host = resolve_host(host or wire.DEFAULT_HOST)
        self.key_name = key_name or self.name
        self._client = client
        self._api_key = api_key
        register_secret(api_key, f"{key_name or self.name} API key")
        self._retry = retry if retry is not None else RetryPolicy()
        self._deadlines = deadlines  # first byte (a cold model load), stall between reads

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicProvider(host={self.host!r})"

    def render(self, request: ChatRequest) -> dict[str, Any]:
        """The exact JSON body `stream` posts to /v1/messages for `request`."""
        return wire.render(request)

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """Yield deltas as they arrive, each tool call when its block closes, then one `Done`."""
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
        state = wire.StreamState(model=request.model)
        try:
            url = self.host + "/v1/messages"
            async with paced(
                self._client,
                "POST",
                url,
                self._deadlines,
                "the Anthropic API",
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
                async with contextlib.aclosing(sse_data(stream.body())) as lines:
                    async for number, raw in lines:
                        text, notice = http.decode_line(raw, number)
                        if notice is not None:
                            yield notice
                        out = state.feed(http.parse_object(text, number, raw), number, raw)
                        if out and not first_token_ns:
                            first_token_ns = time.perf_counter_ns() - started
                        for event in out:
                            yield event
                        if state.finished:
                            wall_ns = time.perf_counter_ns() - started
                            timings = Timings(first_token_ns=first_token_ns, wall_ns=wall_ns)
                            yield Done(state.done_reason(), state.usage, timings, state.model)
                            return
        except httpx.TransportError as exc:
            raise self._transport_error(exc, responded, number) from exc
        raise BadResponse("stream ended before `message_stop`", number or None)

    # -- models -----------------------------------------------------------------------------

    async def list_models(self) -> list[ModelSummary]:
        """Every model the key can use (GET /v1/models, page by page)."""
        found: list[ModelSummary] = []
        after = ""
        while True:
            query = f"?limit={MODEL_PAGE}" + (f"&after_id={after}" if after else "")
            page = await self._get_json("/v1/models" + query, "")
            if not isinstance(page, dict) or not isinstance(page.get("data"), list):
                raise BadResponse("/v1/models did not answer a model list")
            entries = [m for m in page["data"] if isinstance(m, dict) and m.get("id")]
            found += [
                ModelSummary(name=str(m["id"]), modified_at=str(m.get("created_at") or ""))
                for m in entries
            ]
            if not page.get("has_more") or not entries:
                return found
            after = str(page.get("last_id") or entries[-1]["id"])

    async def show(self, model: str) -> ModelDetails:
        """The metadata rung: `max_input_tokens` of GET /v1/models/{model}."""
        entry = await self._get_json(f"/v1/models/{model}", model)
        if not isinstance(entry, dict):
            raise BadResponse(f"/v1/models/{model} did not answer a model")
        window = http.opt_int(entry.get("max_input_tokens"))
        capabilities = ["completion", "tools", "vision"]
        thinking = (entry.get("capabilities") or {}).get("thinking")
        if isinstance(thinking, dict) and thinking.get("supported"):
            capabilities.append("thinking")
        return ModelDetails(
            name=str(entry.get("id") or model),
            declared_window=window or (CLAUDE_WINDOW if model.startswith("claude") else None),
            capabilities=tuple(capabilities),
        )

    async def _get_json(self, path: str, model: str) -> Any:
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
        headers = {"anthropic-version": wire.API_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def _transport_error(
        self, exc: httpx.TransportError, responded: bool, line: int
    ) -> ProviderError:
        return http.transport_error(
            exc,
            host=self.host,
            responded=responded,
            line=line,
            server="the Anthropic API",
            start_hint="check the network connection",
            stream_end="`message_stop`",
            deadlines=self._deadlines,
        )

    def _status_error(self, response: httpx.Response, model: str) -> ProviderError:
        status = response.status_code
        try:
            kind, message = wire.error_of(response.json())
        except ValueError:
            kind, message = "", response.content.decode("utf-8", errors="replace").strip()
        message = http.redact(message or str(response.reason_phrase), self._api_key)
        if (too_long := wire.overflow(message)) is not None:
            return too_long
        if status in (401, 403):
            return KeyRefused(self.key_name, self.host, status, message, bool(self._api_key))
        if status == 404 and model and kind == "not_found_error":
            return ModelNotFound(model, message)
        return http.status_error(response, f"{kind}: {message}" if kind else message, self.host)
