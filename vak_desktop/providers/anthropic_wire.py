"""The Anthropic Messages wire format, as pure functions: rendering a `ChatRequest`, the cache
breakpoints, usage, errors, and the event stream read back into our events.

Rendering. System messages become top-level `system` text blocks; tools are `{name,
description, input_schema}`; an assistant step is its text block then its `tool_use` blocks; a
tool result is a `tool_result` block in a user message; consecutive messages of one role are
merged into one message, so the results of parallel calls travel together as the API requires.
Thinking is not sent back (the API needs the signature it came with, which we do not keep).

Caching. The API caches nothing unless told where: `cache_control: {"type": "ephemeral"}` on
at most four blocks. The assembler's breakpoints are message indexes; each is placed on the
last block that message became (the system's last block for index 0, which also covers the
tools, since the cached prefix runs tools → system → messages).

Usage. `input_tokens` excludes `cache_read_input_tokens` and `cache_creation_input_tokens`:
the total prompt is all three, which is what our `Usage` keeps apart tier by tier.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from vak_desktop.context.payloads import SignedThinking, ToolCall, Usage
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.providers.base import (
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingSigned,
    ToolCallEvent,
    cut_tool_call,
)
from vak_desktop.providers.errors import (
    BadResponse,
    ContextOverflow,
    ProviderError,
    RateLimited,
    ServerError,
)
from vak_desktop.providers.http_common import int_field
from vak_desktop.providers.openai_wire import cache_points, image_mime

DEFAULT_HOST = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4_096  # the API requires a cap; every current model allows at least this
MIN_THINKING_BUDGET = 1_024  # the API's floor for `thinking.budget_tokens`
EPHEMERAL = {"type": "ephemeral"}
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}
STOP_REASONS["tool_use"] = "tool_calls"

_TOO_LONG = re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum")

Block = dict[str, Any]


def render(request: ChatRequest) -> dict[str, Any]:
    """The JSON body of a streaming `POST /v1/messages` for `request`."""
    system: list[Block] = []
    messages: list[dict[str, Any]] = []
    # where each request message ended up: ("system", block) or (message, block)
    last_block: dict[int, tuple[str | int, int]] = {}
    for index, message in enumerate(request.messages):
        if message.role == "system":
            if message.content:
                system.append({"type": "text", "text": message.content})
            if system:
                last_block[index] = ("system", len(system) - 1)
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = message_blocks(message)
        if blocks:
            if messages and messages[-1]["role"] == role:
                messages[-1]["content"].extend(blocks)
            else:
                messages.append({"role": role, "content": blocks})
        if messages:
            last_block[index] = (len(messages) - 1, len(messages[-1]["content"]) - 1)
    body: dict[str, Any] = {"model": request.model, "messages": messages, "stream": True}
    if system:
        body["system"] = system
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
    max_tokens = request.max_tokens or DEFAULT_MAX_TOKENS
    if request.think:
        budget = max(MIN_THINKING_BUDGET, max_tokens // 2)
        max_tokens = max(max_tokens, budget + MIN_THINKING_BUDGET)
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    elif request.temperature is not None and accepts_sampling(request.model):
        body["temperature"] = request.temperature  # thinking only runs at the default
    body["max_tokens"] = max_tokens
    for index in cache_points(request.cache_breakpoints, len(request.messages)):
        if index in last_block:
            where, block = last_block[index]
            blocks = system if where == "system" else messages[int(where)]["content"]
            blocks[block]["cache_control"] = EPHEMERAL
    return body


def message_blocks(message: Message) -> list[Block]:
    """The content blocks one message becomes (none for an empty one: the API refuses empty
    text blocks)."""
    if message.role == "tool":
        content: str | list[Block] = message.content
        if message.images:  # a tool's images, for a model that sees (the runtime decides)
            content = [{"type": "text", "text": message.content}]
            content += [image_block(i) for i in message.images]
        return [{"type": "tool_result", "tool_use_id": message.tool_call_id, "content": content}]
    blocks: list[Block] = [image_block(i) for i in message.images]
    if message.role == "assistant":  # thinking first, as the model wrote it
        blocks += [thinking_block(t) for t in message.signed_thinking]
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    if message.role == "assistant":
        blocks += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
            for c in message.tool_calls
        ]
    return blocks


def thinking_block(block: SignedThinking) -> Block:
    if block.redacted:
        return {"type": "redacted_thinking", "data": block.redacted}
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


# Claude models that refuse temperature/top_p/top_k on every request ("`temperature` is
# deprecated for this model"): Opus from 4.7, Sonnet and Haiku from 5, and the families that
# never took them. A version cutoff rather than a list, so a newer model is covered on day one.
_SAMPLING_CUTOFF = {"opus": (4, 7), "sonnet": (5, 0), "haiku": (5, 0), "fable": (0, 0)}
_SAMPLING_CUTOFF["mythos"] = (0, 0)
_CLAUDE_VERSION = re.compile(r"claude-([a-z]+)-(\d+)(?:-(\d{1,2})(?!\d))?")


def accepts_sampling(model: str) -> bool:
    """Whether `model` takes sampling parameters (temperature) at all."""
    match = _CLAUDE_VERSION.search(model)
    if match is None or match[1] not in _SAMPLING_CUTOFF:
        return True  # older ids ("claude-3-5-sonnet-…") and other names take them
    version = (int(match[2]), int(match[3] or 0))
    return version < _SAMPLING_CUTOFF[match[1]]


def image_block(image: str) -> Block:
    if image.startswith(("http://", "https://")):
        return {"type": "image", "source": {"type": "url", "url": image}}
    data = image.split(",", 1)[1] if image.startswith("data:") else image
    source = {"type": "base64", "media_type": image_mime(data), "data": data}
    return {"type": "image", "source": source}


def usage_of(value: Any, before: Usage) -> Usage:
    """`before` updated with the counts present in a `usage` object (message_start has them
    all; message_delta repeats the output count and, on newer servers, the input tiers)."""
    if not isinstance(value, dict):
        return before

    def get(key: str, held: int) -> int:
        return int_field(value, key) if key in value else held

    return Usage(
        input_tokens=get("input_tokens", before.input_tokens),
        output_tokens=get("output_tokens", before.output_tokens),
        cache_read_tokens=get("cache_read_input_tokens", before.cache_read_tokens),
        cache_write_tokens=get("cache_creation_input_tokens", before.cache_write_tokens),
    )


def error_of(data: Any) -> tuple[str, str]:
    """(type, message) of an `{"type": "error", "error": {...}}` body."""
    inner = data.get("error") if isinstance(data, dict) else None
    if isinstance(inner, dict):
        return str(inner.get("type") or ""), str(inner.get("message") or json.dumps(inner))
    return "", json.dumps(data) if data is not None else ""


def overflow(message: str) -> ContextOverflow | None:
    """ "prompt is too long: N tokens > M maximum" as ContextOverflow(N, M)."""
    match = _TOO_LONG.search(message)
    if match is None:
        return None
    return ContextOverflow(int(match[1]), int(match[2]), message)


def stream_error(kind: str, message: str) -> ProviderError:
    """An `error` event inside a 200 stream."""
    if (too_long := overflow(message)) is not None:
        return too_long
    if kind == "rate_limit_error":
        return RateLimited(message)
    if kind in ("overloaded_error", "api_error"):
        return ServerError(f"{kind}: {message}")
    return ProviderError(f"Anthropic reported {kind or 'an error'}: {message}")


@dataclass
class _Block:
    kind: str
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    signature: str = ""
    data: str = ""  # a redacted_thinking block's opaque payload


@dataclass
class StreamState:
    """Folds the Messages event stream into our events, one `data:` payload at a time."""

    usage: Usage = field(default_factory=Usage)
    model: str = ""
    stop_reason: str = ""
    finished: bool = False
    blocks: dict[int, _Block] = field(default_factory=dict)
    unparsed: list[tuple[_Block, BadResponse]] = field(default_factory=list)  # see stop

    def feed(self, event: dict[str, Any], number: int, raw: bytes) -> list[StreamEvent]:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            if not isinstance(message, dict):
                raise BadResponse("message_start without a message object", number, raw)
            self.model = str(message.get("model") or self.model)
            self.usage = usage_of(message.get("usage"), self.usage)
        elif kind == "content_block_start":
            block = event.get("content_block") or {}
            if not isinstance(block, dict):
                raise BadResponse("content_block_start without a block", number, raw)
            index = _index(event, number, raw)
            opened = self.blocks[index] = _Block(
                str(block.get("type")),
                str(block.get("id") or ""),
                str(block.get("name") or ""),
                signature=str(block.get("signature") or ""),
                data=str(block.get("data") or ""),
            )
            if opened.kind == "thinking" and block.get("thinking"):
                opened.parts.append(str(block["thinking"]))
            if isinstance(block.get("input"), dict) and block["input"]:  # sent whole
                opened.parts.append(json.dumps(block["input"]))
            return _opening_text(block)
        elif kind == "content_block_delta":
            return self._delta(_index(event, number, raw), event.get("delta"), number, raw)
        elif kind == "content_block_stop":
            block = self.blocks.get(_index(event, number, raw))
            if block is not None and block.kind == "thinking":
                signed = SignedThinking("".join(block.parts), block.signature)
                return [ThinkingSigned(signed)]
            if block is not None and block.kind == "redacted_thinking":
                return [ThinkingSigned(SignedThinking(redacted=block.data))]
            if block is not None and block.kind == "tool_use":
                try:
                    return [ToolCallEvent(_tool_call(block))]
                except BadResponse as exc:  # cut by max_tokens? message_delta says (below)
                    self.unparsed.append((block, exc))
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if isinstance(delta, dict) and delta.get("stop_reason"):
                self.stop_reason = str(delta["stop_reason"])
            self.usage = usage_of(event.get("usage"), self.usage)
        elif kind == "message_stop":
            self.finished = True
            return self._unparsed_calls()
        elif kind == "error":
            raise stream_error(*error_of(event))
        return []  # ping, and event types added after this was written

    def _delta(self, index: int, delta: Any, number: int, raw: bytes) -> list[StreamEvent]:
        if not isinstance(delta, dict):
            raise BadResponse("content_block_delta without a delta object", number, raw)
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [TextDelta(str(delta["text"]))]
        if kind == "thinking_delta" and delta.get("thinking"):
            if (block := self.blocks.get(index)) is not None:
                block.parts.append(str(delta["thinking"]))
            return [ThinkingDelta(str(delta["thinking"]))]
        if kind == "signature_delta" and (block := self.blocks.get(index)) is not None:
            block.signature += str(delta.get("signature") or "")
            return []
        if kind == "input_json_delta":
            block = self.blocks.get(index)
            if block is None:
                raise BadResponse(f"input for block {index}, which never started", number, raw)
            block.parts.append(str(delta.get("partial_json") or ""))
        return []

    def _unparsed_calls(self) -> list[StreamEvent]:
        """Tool calls whose input did not parse: at `max_tokens` the output limit cut them
        (a notice keeping the partial input); any other stop makes them a BadResponse."""
        if self.unparsed and self.stop_reason != "max_tokens":
            raise self.unparsed[0][1]
        return [cut_tool_call(block.name, "".join(block.parts)) for block, _ in self.unparsed]

    def done_reason(self) -> str:
        return STOP_REASONS.get(self.stop_reason, self.stop_reason)


def _index(event: dict[str, Any], number: int, raw: bytes) -> int:
    index = event.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        raise BadResponse(f"{event.get('type')} without a block index", number, raw)
    return index


def _opening_text(block: dict[str, Any]) -> list[StreamEvent]:
    if block.get("type") == "text" and block.get("text"):
        return [TextDelta(str(block["text"]))]
    if block.get("type") == "thinking" and block.get("thinking"):
        return [ThinkingDelta(str(block["thinking"]))]
    return []


def _tool_call(block: _Block) -> ToolCall:
    text = "".join(block.parts).strip() or "{}"
    try:
        arguments = json.loads(text)
    except ValueError as exc:
        raise BadResponse(
            f"input of tool call {block.name!r} is not JSON ({exc}): {text[:120]!r}"
        ) from None
    if not isinstance(arguments, dict):
        raise BadResponse(f"input of tool call {block.name!r} is not a JSON object")
    if not block.name or not block.id:
        raise BadResponse("a tool_use block arrived without its id or name")
    return ToolCall(id=block.id, name=block.name, arguments=arguments)
