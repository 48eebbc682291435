"""The OpenAI chat-completions wire format, as pure functions: host resolution, message
rendering, server-sent-event reading, usage, and the error bodies OpenAI-compatible servers
(OpenAI, llama.cpp server, vLLM, LM Studio, Ollama's `/v1`) send.

Kept apart from `openai_compatible.py` so the adapter reads as the protocol it speaks.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from vak_desktop.context.payloads import ToolCall, Usage
from vak_desktop.context.request import Message, ToolSpec
from vak_desktop.providers.base import StreamNotice, cut_tool_call
from vak_desktop.providers.errors import BadResponse, ContextOverflow
from vak_desktop.providers.http_common import int_field, opt_int
from vak_desktop.providers.sse import server_sent_events

DEFAULT_HOST = "http://127.0.0.1:8080"  # llama.cpp server's default address
DONE_MARKER = b"[DONE]"

_MAX_CONTEXT = re.compile(r"maximum context length is (\d+)")
_REQUESTED = re.compile(
    r"(?:requested|resulted in|prompt (?:has|contains))(?: about)? (\d+) tokens"
)  # OpenAI, vLLM; OpenRouter says "you requested about N tokens"
_IMAGE_MIME = (("iVBOR", "image/png"), ("/9j/", "image/jpeg"), ("R0lGOD", "image/gif"))


def resolve_host(value: str | None) -> str:
    """The base URL of a server ("host:port", "http://h:p", "http://h:p/v1" all work).

    No scheme means http; a trailing `/v1` is dropped because every path appended starts with
    it; the listen-everywhere addresses 0.0.0.0 and :: are reached through 127.0.0.1.
    """
    text = (value or "").strip()
    if not text:
        return DEFAULT_HOST
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    host = parts.hostname or "127.0.0.1"
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    netloc = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None:
        netloc += f":{port}"
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return f"{(parts.scheme or 'http').lower()}://{netloc}{path}"


def is_loopback(base_url: str) -> bool:
    """True when the server runs on this machine (localhost or a loopback address)."""
    host = urlsplit(base_url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def image_mime(image: str) -> str:
    """The media type of a base64 image, read from its first bytes (PNG when unknown)."""
    if image.startswith("UklGR"):
        return "image/webp"
    return next((m for prefix, m in _IMAGE_MIME if image.startswith(prefix)), "image/png")


def image_url(image: str) -> str:
    """A data URL for a base64 image (kept as it is when it already is a URL)."""
    if image.startswith(("data:", "http://", "https://")):
        return image
    return f"data:{image_mime(image)};base64,{image}"


def function_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tool schemas in the function shape (`/v1/chat/completions`; Ollama's `/api/chat` takes
    the same shape)."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def function_calls(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    """An assistant message's tool calls in the function shape (arguments as a JSON string)."""
    return [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
        }
        for c in calls
    ]


def render_message(message: Message) -> dict[str, Any]:
    content: Any = message.content
    if message.images and message.role != "tool":  # a tool message carries text only
        parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
        parts += [{"type": "image_url", "image_url": {"url": image_url(i)}} for i in message.images]
        content = parts
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.role == "assistant" and message.tool_calls:
        out["tool_calls"] = function_calls(message.tool_calls)
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
    return out


async def sse_data(chunks: AsyncIterable[bytes]) -> AsyncGenerator[tuple[int, bytes], None]:
    """The data of each event of an event stream (`providers/sse.py`: CR, LF or CRLF line
    ends, multi-line data, comments, `retry`), as raw bytes, with the line it started on.
    Events whose data is blank are skipped."""
    async for event in server_sent_events(chunks):
        if event.data.strip():
            yield event.line, event.data


def usage_of(value: Any) -> Usage:
    """OpenAI's `prompt_tokens` includes `cached_tokens` (and, on OpenRouter, the tokens
    written to the cache, `cache_write_tokens`); our `input_tokens` is the fresh rest, so that
    `Usage.prompt_tokens()` is the provider's `prompt_tokens` again."""
    if not isinstance(value, dict):
        return Usage()
    prompt, output = int_field(value, "prompt_tokens"), int_field(value, "completion_tokens")
    prompt_details = value.get("prompt_tokens_details")
    details = prompt_details if isinstance(prompt_details, dict) else {}
    cached, written = int_field(details, "cached_tokens"), int_field(details, "cache_write_tokens")
    output_details = value.get("completion_tokens_details")
    reasoning = (
        int_field(output_details, "reasoning_tokens") if isinstance(output_details, dict) else 0
    )
    return Usage(
        input_tokens=max(prompt - cached - written, 0),
        output_tokens=output,
        cache_read_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=reasoning,
    )


# Where servers put a model's window in a `/v1/models` entry: OpenRouter `context_length`,
# vLLM `max_model_len`, LM Studio `max_context_length`, some gateways `context_window`.
_WINDOW_FIELDS = ("context_length", "max_model_len", "max_context_length", "context_window")


def declared_window(entry: Mapping[str, Any]) -> int | None:
    """The context window a `/v1/models` entry declares, or None when it declares none."""
    for key in _WINDOW_FIELDS:
        if (value := opt_int(entry.get(key))) and value > 0:
            return value
    for nested, key in (("top_provider", "context_length"), ("meta", "n_ctx_train")):
        inner = entry.get(nested)
        if isinstance(inner, dict) and (value := opt_int(inner.get(key))) and value > 0:
            return value
    return None


def server_window(props: Any) -> int | None:
    """The llama.cpp server's per-slot window from `/props` (`default_generation_settings.
    n_ctx`): the most it accepts, often far below the model's trained window."""
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    value = opt_int(settings.get("n_ctx")) if isinstance(settings, dict) else None
    value = value or opt_int(props.get("n_ctx"))
    return value if value and value > 0 else None


def template_abilities(props: Any) -> tuple[str, ...]:
    """What a llama.cpp server's chat template (`/props` `chat_template`) lets a request
    switch: "thinking" when the template reads `enable_thinking` (Qwen3 and its kin)."""
    template = props.get("chat_template") if isinstance(props, dict) else None
    return ("thinking",) if isinstance(template, str) and "enable_thinking" in template else ()


def mark_cache_points(messages: list[dict[str, Any]], indexes: Sequence[int]) -> None:
    """Put `cache_control: {"type": "ephemeral"}` on the message at each index (its content
    as text parts), at most `MAX_CACHE_POINTS` of them: what OpenRouter forwards to models
    that cache only where told (Anthropic's)."""
    for index in cache_points(indexes, len(messages)):
        message = messages[index]
        content = message.get("content")
        if isinstance(content, str) and content:
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list) or not content:
            continue  # an assistant step with only tool calls has no text part to mark
        content[-1] = {**content[-1], "cache_control": {"type": "ephemeral"}}
        message["content"] = content


MAX_CACHE_POINTS = 4  # Anthropic's limit on cache_control blocks per request


def cache_points(indexes: Sequence[int], count: int) -> list[int]:
    """The breakpoints to mark, in range and at most four: the first (the stable prefix,
    shared by every turn) and the last three (the newest prefixes)."""
    valid = sorted({i for i in indexes if 0 <= i < count})
    if len(valid) <= MAX_CACHE_POINTS:
        return valid
    return [valid[0], *valid[-(MAX_CACHE_POINTS - 1) :]]


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class ToolCallAssembler:
    """Tool calls streamed as deltas: keyed by `index`, id and name first, then `arguments`
    as a JSON string in pieces. `finish()` parses each call once the stream is over."""

    calls: dict[int, _PartialCall] = field(default_factory=dict)

    def add(self, deltas: Any, number: int, raw: bytes) -> None:
        if not isinstance(deltas, list):
            raise BadResponse("'tool_calls' is not a list", number, raw)
        for delta in deltas:
            if not isinstance(delta, dict):
                raise BadResponse("a tool call delta is not an object", number, raw)
            index = delta.get("index")
            if not isinstance(index, int) or isinstance(index, bool):
                # no index (some servers send whole calls): a new id opens a new call
                known = [i for i, c in self.calls.items() if c.id and c.id == delta.get("id")]
                index = known[0] if known else len(self.calls)
            call = self.calls.setdefault(index, _PartialCall())
            function = delta.get("function") or {}
            if not isinstance(function, dict):
                raise BadResponse("a tool call's 'function' is not an object", number, raw)
            if isinstance(delta.get("id"), str) and delta["id"]:
                call.id = delta["id"]
            if isinstance(function.get("name"), str) and not call.name:
                call.name = function["name"]
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                call.arguments.append(arguments)
            elif isinstance(arguments, dict):  # a server that sends them decoded
                call.arguments.append(json.dumps(arguments))

    def finish(
        self, make_id: Callable[[], str], *, cut: bool = False
    ) -> list[ToolCall | StreamNotice]:
        """The calls; with `cut` (the stream stopped at its output limit) a call whose
        arguments are not whole JSON becomes a `cut_tool_call` notice instead of an error."""
        out: list[ToolCall | StreamNotice] = []
        for index in sorted(self.calls):
            call = self.calls[index]
            if not call.name and not cut:
                raise BadResponse(f"tool call {index} arrived without a function name")
            text = "".join(call.arguments).strip() or "{}"
            try:
                arguments = json.loads(text) if call.name else None
            except ValueError as exc:
                if cut:
                    out.append(cut_tool_call(call.name, "".join(call.arguments)))
                    continue
                raise BadResponse(
                    f"arguments of tool call {call.name!r} are not JSON ({exc}): {text[:120]!r}"
                ) from None
            if arguments is None:  # cut before its name arrived
                out.append(cut_tool_call("", "".join(call.arguments)))
                continue
            if not isinstance(arguments, dict):
                raise BadResponse(f"arguments of tool call {call.name!r} are not a JSON object")
            out.append(ToolCall(id=call.id or make_id(), name=call.name, arguments=arguments))
        return out


def error_body(response: httpx.Response) -> tuple[str, dict[str, Any]]:
    """The error's message and its `error` object ({} when the body has none)."""
    try:
        data = response.json()
    except ValueError:
        text = response.content.decode("utf-8", errors="replace").strip()
        return text or str(response.reason_phrase), {}
    return error_of(data)


def error_of(data: Any) -> tuple[str, dict[str, Any]]:
    inner = data.get("error") if isinstance(data, dict) else None
    if isinstance(inner, dict):
        return str(inner.get("message") or json.dumps(inner)), inner
    if inner is not None:
        return str(inner), {}
    return json.dumps(data), {}


def overflow(text: str, error: Mapping[str, Any]) -> ContextOverflow | None:
    """A ContextOverflow for OpenAI's `context_length_exceeded`, llama.cpp's
    `exceed_context_size_error` and vLLM's "maximum context length" message."""
    code, kind = str(error.get("code") or ""), str(error.get("type") or "")
    if kind == "exceed_context_size_error":
        requested, limit = opt_int(error.get("n_prompt_tokens")), opt_int(error.get("n_ctx"))
        return ContextOverflow(requested, limit, text)
    if code == "context_length_exceeded" or _MAX_CONTEXT.search(text):
        limit_match, requested_match = _MAX_CONTEXT.search(text), _REQUESTED.search(text)
        return ContextOverflow(
            int(requested_match[1]) if requested_match else None,
            int(limit_match[1]) if limit_match else None,
            text,
        )
    return None
