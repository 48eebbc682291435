"""A loopback Anthropic Messages API: `POST /v1/messages` streamed as named server-sent events
(`message_start`, `content_block_*`, `message_delta`, `message_stop`), and the model catalogue
(`GET /v1/models`, paged, and `GET /v1/models/{id}` with `max_input_tokens`).

It shares its HTTP plumbing with `openai_server.py` (`ScriptedServer`, `SSE`, `Fail`) and
checks what the real API refuses, so an adapter that renders a request wrongly fails here the
way it would there: a missing `x-api-key` / `anthropic-version` / `max_tokens`, a system role
inside `messages`, more than four `cache_control` blocks, empty text blocks, and a
`tool_result` that does not answer a `tool_use` of the assistant message just before it.
"""

from __future__ import annotations

import json
from typing import Any

from tests.doubles.openai_server import SSE, Fail, ScriptedServer

Event = tuple[str, dict[str, Any]]


def usage(
    input_tokens: int, output_tokens: int = 1, read: int = 0, written: int = 0
) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
        "output_tokens": output_tokens,
    }


def start(model: str, counts: dict[str, int]) -> Event:
    message = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": counts,
    }
    return ("message_start", {"type": "message_start", "message": message})


def finish(stop_reason: str, output_tokens: int) -> list[Event]:
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    return [
        (
            "message_delta",
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def block(index: int, content: dict[str, Any], deltas: list[dict[str, Any]]) -> list[Event]:
    """One content block: its start, each delta, its stop."""
    out: list[Event] = [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": content},
        )
    ]
    out += [
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
        for d in deltas
    ]
    out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return out


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def text_block(index: int, text: str, size: int = 4) -> list[Event]:
    deltas = [{"type": "text_delta", "text": p} for p in pieces(text, size)]
    return block(index, {"type": "text", "text": ""}, deltas)


def thinking_block(index: int, text: str, size: int = 6) -> list[Event]:
    deltas: list[dict[str, Any]] = [
        {"type": "thinking_delta", "thinking": p} for p in pieces(text, size)
    ]
    deltas.append({"type": "signature_delta", "signature": "EqQBCgIYAhIM"})
    return block(index, {"type": "thinking", "thinking": "", "signature": ""}, deltas)


def tool_block(index: int, call_id: str, name: str, arguments: str, parts: int = 3) -> list[Event]:
    """A tool_use block whose input JSON arrives in `parts` fragments."""
    size = -(-len(arguments) // parts) or 1
    deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(arguments, size)]
    content = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return block(index, content, deltas)


def reply(
    model: str,
    text: str,
    counts: dict[str, int] | None = None,
    output_tokens: int = 5,
) -> SSE:
    """A whole streamed text answer, with a ping the way the API sends one."""
    events: list[Any] = [start(model, counts or usage(20))]
    events.append(("ping", {"type": "ping"}))
    events += text_block(0, text)
    events += finish("end_turn", output_tokens)
    return SSE(events, marker=None)


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def too_long(requested: int, limit: int) -> Fail:
    message = f"prompt is too long: {requested} tokens > {limit} maximum"
    return Fail(400, error_body("invalid_request_error", message))


class AnthropicDouble(ScriptedServer):
    """`with AnthropicDouble(models={"claude-x": 200_000}) as d: d.script(...); d.url`."""

    key_header = "x-api-key"
    key_prefix = ""

    def __init__(
        self,
        *,
        port: int = 0,
        models: dict[str, int | None] | None = None,
        api_key: str | None = None,
        default_text: str = "Hello from the Claude double.",
        page_size: int = 2,
    ) -> None:
        super().__init__(port=port, api_key=api_key)
        self.models = dict(models or {"claude-sonnet-4-5": 200_000})
        self.default_text = default_text
        self.page_size = page_size

    def refuse_key(self) -> Fail:
        return Fail(401, error_body("authentication_error", "invalid x-api-key"))

    def entry(self, model: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "model",
            "id": model,
            "display_name": model,
            "created_at": "2025-09-29T00:00:00Z",
        }
        if self.models[model] is not None:
            out["max_input_tokens"] = self.models[model]
            out["max_tokens"] = 64_000
            out["capabilities"] = {"thinking": {"supported": True}}
        return out

    def route(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: Any
    ) -> SSE | Fail:
        if "anthropic-version" not in headers:
            return Fail(
                400, error_body("invalid_request_error", "anthropic-version: header is required")
            )
        if method == "GET" and path == "/v1/models":
            return self._page(query.get("after_id", ""))
        if method == "GET" and path.startswith("/v1/models/"):
            model = path.removeprefix("/v1/models/")
            if model not in self.models:
                return Fail(404, error_body("not_found_error", f"model: {model}"))
            return Fail(200, self.entry(model))
        if (method, path) != ("POST", "/v1/messages"):
            return Fail(404, error_body("not_found_error", f"no route {method} {path}"))
        problem = self.invalid(body)
        if problem:
            return Fail(400, error_body("invalid_request_error", problem))
        if body["model"] not in self.models:
            return Fail(404, error_body("not_found_error", f"model: {body['model']}"))
        # unscripted: the default text, its prompt counted at 4 characters of the request's
        # JSON per token (a constant count would look like a silently cut prompt)
        prompt = len(json.dumps([body.get("system"), body["messages"], body.get("tools")])) // 4
        return self.scripted() or reply(body["model"], self.default_text, usage(prompt))

    def _page(self, after: str) -> Fail:
        """One page of `page_size` models (the double's page size, not the `limit` asked)."""
        names = list(self.models)
        offset = names.index(after) + 1 if after in names else 0
        page = names[offset : offset + self.page_size]
        has_more = offset + self.page_size < len(names)
        data = [self.entry(n) for n in page]
        return Fail(
            200,
            {
                "data": data,
                "has_more": has_more,
                "first_id": page[0] if page else None,
                "last_id": page[-1] if page else None,
            },
        )

    @staticmethod
    def invalid(body: Any) -> str:
        """What the real API would refuse in this body ("" when nothing)."""
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return "messages: Field required"
        if not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        blocks: list[dict[str, Any]] = list(body.get("system") or [])
        previous_uses: set[str] = set()
        for n, message in enumerate(body["messages"]):
            if message.get("role") not in ("user", "assistant"):
                return f"messages.{n}.role: Input should be 'user' or 'assistant'"
            content = message.get("content")
            if not isinstance(content, list) or not content:
                return f"messages.{n}: content must be a non-empty list"
            blocks += content
            for item in content:
                if item.get("type") == "text" and not item.get("text"):
                    return f"messages.{n}: text content blocks must be non-empty"
                if (
                    item.get("type") == "tool_result"
                    and item.get("tool_use_id") not in previous_uses
                ):
                    return f"messages.{n}: unexpected `tool_use_id` found in `tool_result` blocks"
            previous_uses = (
                {str(i.get("id")) for i in content if i.get("type") == "tool_use"}
                if message["role"] == "assistant"
                else set()
            )
        blocks += list(body.get("tools") or [])
        marked = sum(1 for b in blocks if isinstance(b, dict) and "cache_control" in b)
        if marked > 4:
            return f"A maximum of 4 blocks with cache_control may be provided. Found {marked}."
        return ""
