"""The OpenAI chat-completions wire format, as pure functions: host resolution, message
rendering, server-sent-event reading, usage, and the error bodies OpenAI-compatible servers
(OpenAI, llama.cpp server, vLLM, LM Studio, Ollama's `/v1`) send.

Kept apart from `openai_compatible.py` so the adapter reads as the protocol it speaks.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from vak_desktop.context.payloads import ToolCall, Usage
from vak_desktop.context.request import Message
from vak_desktop.providers.errors import BadResponse, ContextOverflow
from vak_desktop.providers.http_common import int_field, opt_int

DEFAULT_HOST = "http://127.0.0.1:8080"  # llama.cpp server's default address
DONE_MARKER = b"[DONE]"

_MAX_CONTEXT = re.compile(r"maximum context length is (\d+)")
_REQUESTED = re.compile(r"(?:requested|resulted in|prompt (?:has|contains)) (\d+) tokens")
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


def image_url(image: str) -> str:
    """A data URL for a base64 image (kept as it is when it already is a URL)."""
    if image.startswith(("data:", "http://", "https://")):
        return image
    mime = next((m for prefix, m in _IMAGE_MIME if image.startswith(prefix)), "image/png")
    if image.startswith("UklGR"):
        mime = "image/webp"
    return f"data:{mime};base64,{image}"


def render_message(message: Message) -> dict[str, Any]:
    content: Any = message.content
    if message.images:
        parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
        parts += [{"type": "image_url", "image_url": {"url": image_url(i)}} for i in message.images]
        content = parts
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.role == "assistant" and message.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in message.tool_calls
        ]
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
    return out


async def sse_data(response: httpx.Response) -> AsyncGenerator[tuple[int, bytes], None]:
    """The payload of each `data:` line of an event stream, as raw bytes, with its line number.

    Comments (`: ...`), `event:`/`id:`/`retry:` fields and blank lines are skipped.
    """
    buffer, number = b"", 0

    def payload(line: bytes) -> bytes | None:
        if not line.startswith(b"data:"):
            return None
        data = line[len(b"data:") :]
        return data[1:] if data.startswith(b" ") else data

    async for piece in response.aiter_bytes():
        buffer += piece
        while (cut := buffer.find(b"\n")) >= 0:
            line, buffer = buffer[:cut].rstrip(b"\r"), buffer[cut + 1 :]
            number += 1
            if (data := payload(line)) is not None and data.strip():
                yield number, data
    if (data := payload(buffer.rstrip(b"\r"))) is not None and data.strip():
        yield number + 1, data


def usage_of(value: Any) -> Usage:
    """OpenAI's `prompt_tokens` includes `cached_tokens`; our `input_tokens` does not."""
    if not isinstance(value, dict):
        return Usage()
    prompt, output = int_field(value, "prompt_tokens"), int_field(value, "completion_tokens")
    prompt_details = value.get("prompt_tokens_details")
    cached = int_field(prompt_details, "cached_tokens") if isinstance(prompt_details, dict) else 0
    output_details = value.get("completion_tokens_details")
    reasoning = (
        int_field(output_details, "reasoning_tokens") if isinstance(output_details, dict) else 0
    )
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=output,
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )


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

    def finish(self, make_id: Callable[[], str]) -> list[ToolCall]:
        out: list[ToolCall] = []
        for index in sorted(self.calls):
            call = self.calls[index]
            if not call.name:
                raise BadResponse(f"tool call {index} arrived without a function name")
            text = "".join(call.arguments).strip() or "{}"
            try:
                arguments = json.loads(text)
            except ValueError as exc:
                raise BadResponse(
                    f"arguments of tool call {call.name!r} are not JSON ({exc}): {text[:120]!r}"
                ) from None
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
