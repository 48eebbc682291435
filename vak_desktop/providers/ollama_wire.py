"""Ollama's wire format, as pure functions: host resolution, message rendering, NDJSON line
reading, and the error texts Ollama (and the llama.cpp server behind it) use.

Kept apart from `ollama.py` so the adapter reads as the protocol it speaks and these details
can be tested one by one.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from vak_desktop.context.payloads import Timings, Usage
from vak_desktop.context.request import Message
from vak_desktop.providers.base import Done
from vak_desktop.providers.errors import ContextOverflow, ProviderError, ServerError
from vak_desktop.providers.http_common import int_field, opt_int

DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_PORT = 11434
DEFAULT_KEEP_ALIVE = "30m"

# Texts Ollama (and the llama.cpp server behind it) use for "the prompt does not fit".
_OVERFLOW_MARKERS = (
    "longer than the context length",
    "exceed_context_size_error",
    "exceeds the available context size",
    "exceeds maximum context length",
    "input length exceeds",
)
_LLAMA_SIZES = re.compile(r"\((\d+) tokens\) exceeds the available context size \((\d+) tokens\)")
MODEL_NOT_FOUND = re.compile(r"model ['\"]?(.*?)['\"]? not found")


def resolve_host(value: str | None) -> str:
    """The base URL for an `OLLAMA_HOST`-style value ("", "host", "host:port", "https://h/p").

    No scheme means http; no port means 11434 (an https URL keeps its scheme's default); the
    listen-everywhere addresses 0.0.0.0 and :: are reached through 127.0.0.1.
    """
    text = (value or "").strip()
    if not text:
        return DEFAULT_HOST
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    scheme = parts.scheme.lower() or "http"
    host = parts.hostname or "127.0.0.1"
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    try:
        port = parts.port
    except ValueError:  # a port that is not a number or out of range: Ollama uses its default
        port = None
    if port is None and scheme != "https":
        port = DEFAULT_PORT
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    return f"{scheme}://{netloc}{parts.path}".rstrip("/")


def render_message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.images:
        out["images"] = list(message.images)
    if message.role == "assistant":
        if message.thinking:
            out["thinking"] = message.thinking
        if message.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "function": {"name": c.name, "arguments": c.arguments}}
                for c in message.tool_calls
            ]
    if message.role == "tool":
        if message.tool_name:
            out["tool_name"] = message.tool_name
        if message.tool_call_id:
            out["tool_call_id"] = message.tool_call_id
    return out


def wire_keep_alive(value: str | int) -> str | int:
    # Ollama rejects a unitless string other than "0" ("time: missing unit in duration");
    # a bare number as text means seconds, which is what a JSON number says.
    if isinstance(value, str) and re.fullmatch(r"[-+]?\d+", value.strip()):
        return int(value)
    return value


async def numbered_lines(chunks: AsyncIterable[bytes]) -> AsyncGenerator[tuple[int, bytes], None]:
    """Non-blank lines of an NDJSON body as raw bytes, numbered from 1 (blank lines count).

    Linear however the body is cut: each read is scanned once, and a line still arriving waits
    as its pieces, joined once when it ends (appending each read to one buffer and cutting
    lines off its front copied a long line, or a read of many, once per read or line)."""
    pending: list[bytes] = []  # the pieces of a line still arriving
    number = 0
    async for piece in chunks:
        start = 0
        while (cut := piece.find(b"\n", start)) >= 0:
            line = piece[start:cut]
            if pending:
                line, pending = b"".join(pending) + line, []
            start = cut + 1
            number += 1
            line = line.rstrip(b"\r")
            if line.strip():
                yield number, line
        if start < len(piece):
            pending.append(piece[start:])
    rest = b"".join(pending)
    if rest.strip():
        yield number + 1, rest


def done_event(chunk: Mapping[str, Any], model: str, first_token_ns: int, wall_ns: int) -> Done:
    # Ollama omits every metric whose value is zero.
    return Done(
        done_reason=str(chunk.get("done_reason") or ""),
        usage=Usage(
            input_tokens=int_field(chunk, "prompt_eval_count"),
            output_tokens=int_field(chunk, "eval_count"),
        ),
        timings=Timings(
            total_ns=int_field(chunk, "total_duration"),
            load_ns=int_field(chunk, "load_duration"),
            prompt_eval_ns=int_field(chunk, "prompt_eval_duration"),
            eval_ns=int_field(chunk, "eval_duration"),
            first_token_ns=first_token_ns,
            wall_ns=wall_ns,
        ),
        model=str(chunk.get("model") or model),
    )


def stream_error(text: str, num_ctx: int) -> ProviderError:
    return overflow(text, num_ctx) or ServerError(text)


def overflow(text: str, num_ctx: int) -> ContextOverflow | None:
    """A ContextOverflow when `text` says the prompt does not fit, with the sizes it gives."""
    if not any(marker in text.lower() for marker in _OVERFLOW_MARKERS):
        return None
    requested: int | None = None
    limit: int | None = None
    detail = text
    try:  # truncate:false passes llama.cpp's own JSON body through as the error string
        nested = json.loads(text)
    except ValueError:
        nested = None
    inner = nested.get("error") if isinstance(nested, dict) else None
    if isinstance(inner, dict):
        requested, limit = opt_int(inner.get("n_prompt_tokens")), opt_int(inner.get("n_ctx"))
        detail = str(inner.get("message") or text)
    sizes = _LLAMA_SIZES.search(text)
    if sizes is not None:
        requested = requested if requested is not None else int(sizes[1])
        limit = limit if limit is not None else int(sizes[2])
    if limit is None and num_ctx > 0:  # the window we asked for is the limit we hit
        limit = num_ctx
    return ContextOverflow(requested, limit, detail)


def error_text(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.content.decode("utf-8", errors="replace").strip() or str(
            response.reason_phrase
        )
    if isinstance(data, dict) and "error" in data:
        return str(data["error"])
    return json.dumps(data)


def parameter_int(parameters: str, key: str) -> int | None:
    for line in parameters.splitlines():
        name, _, value = line.strip().partition(" ")
        if name == key:
            return opt_int(value.strip())
    return None


def details_of(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    details = mapping.get("details")
    return details if isinstance(details, dict) else {}


def objects(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
