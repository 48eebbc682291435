"""A loopback OpenAI-compatible server: a real HTTP server in a thread that speaks the
`/v1/chat/completions` streaming wire format (server-sent events, `data: [DONE]`), and the
plumbing (`ScriptedServer`, `SSE`, `Fail`) the other SSE doubles (`anthropic_server.py`) share.

Replies are scripted: `double.script(SSE([...]))` queues a stream of chunks, `double.script(
Fail(status, body))` an error answer; an unscripted request gets `default_text` streamed with a
usage chunk counting 4 characters of the request per token, cut at the request's
`max_tokens` / `max_completion_tokens` (4 characters a token) with `finish_reason: "length"`. Helpers build the chunks the way OpenAI, vLLM and the llama.cpp server send them:
text deltas, tool-call deltas keyed by `index` with `arguments` split in pieces, a final usage
chunk with `prompt_tokens_details.cached_tokens`, and the two over-length error bodies.
Every request is recorded in `requests` as (method, path, headers, body).
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl


class Raw(bytes):
    """Lines sent verbatim (an SSE comment such as OpenRouter's `: OPENROUTER PROCESSING`)."""


# a `data:` event (bytes are its payload as they are), (event name, data) for named events,
# or `Raw` lines
Chunk = dict[str, Any] | bytes | tuple[str, dict[str, Any]]


@dataclass
class SSE:
    """A 200 event stream of `chunks`."""

    chunks: list[Chunk]
    done: bool = True  # end the stream properly; False drops the connection mid-stream
    delay: float = 0.0  # seconds before each chunk
    marker: bytes | None = b"[DONE]"  # the closing `data:` event (Anthropic's has none)


@dataclass
class Fail:
    """A non-200 answer with a JSON (dict) or raw (bytes) body."""

    status: int
    body: dict[str, Any] | bytes
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"  # e.g. text/html: a web page where the API was


def chunk(delta: dict[str, Any], finish: str | None = None, model: str = "") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def text_chunks(
    text: str, chunk_chars: int = 4, model: str = "", finish: str = "stop"
) -> list[Chunk]:
    pieces = [text[i : i + chunk_chars] for i in range(0, len(text), chunk_chars)]
    return [
        chunk({"role": "assistant", "content": ""}, model=model),
        *(chunk({"content": p}, model=model) for p in pieces),
        chunk({}, finish, model=model),
    ]


def tool_call_chunks(calls: list[tuple[str, str, str]], pieces: int = 3) -> list[Chunk]:
    """Deltas for (id, name, arguments JSON text) calls: id and name first, arguments split
    into `pieces` parts, the calls interleaved the way parallel calls stream."""
    out: list[Chunk] = [chunk({"role": "assistant", "content": None})]
    for index, (call_id, name, _) in enumerate(calls):
        opener = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        out.append(chunk({"tool_calls": [{"index": index, **opener}]}))
    for step in range(pieces):
        for index, (_, _, arguments) in enumerate(calls):
            size = -(-len(arguments) // pieces)
            part = arguments[step * size : (step + 1) * size]
            if part:
                out.append(
                    chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
                )
    out.append(chunk({}, "tool_calls"))
    return out


def usage_chunk(prompt: int, completion: int, cached: int = 0, **extra: Any) -> dict[str, Any]:
    """The last chunk's usage; `extra` adds fields as OpenRouter does (`cost`, and
    `cache_write_tokens`, which goes into `prompt_tokens_details`)."""
    details = {"cached_tokens": cached}
    if "cache_write_tokens" in extra:
        details["cache_write_tokens"] = extra.pop("cache_write_tokens")
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": details,
            **extra,
        },
    }


def openai_overflow(requested: int, limit: int) -> Fail:
    message = (
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {requested} tokens. Please reduce the length of the messages."
    )
    return Fail(400, _error(message, "invalid_request_error", "context_length_exceeded"))


def llama_overflow(requested: int, limit: int) -> Fail:
    message = (
        f"request ({requested} tokens) exceeds the available context size ({limit} tokens), "
        "try increasing it"
    )
    body = {
        "error": {
            "code": 400,
            "message": message,
            "type": "exceed_context_size_error",
            "n_prompt_tokens": requested,
            "n_ctx": limit,
        }
    }
    return Fail(400, body)


def _error(message: str, kind: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class ScriptedServer:
    """The plumbing every loopback SSE double shares: a real HTTP server in a thread, the
    request log, the API-key check and the queue of scripted replies. A subclass says how a
    key travels (`key_header`, `key_prefix`), how a refused key is answered, and routes the
    rest (`route`)."""

    key_header = "authorization"
    key_prefix = "Bearer "

    def __init__(self, *, port: int = 0, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []
        self._script: deque[SSE | Fail] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.double = self
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def script(self, *replies: SSE | Fail) -> None:
        with self._lock:
            self._script.extend(replies)

    def scripted(self) -> SSE | Fail | None:
        """The next scripted reply, if one is queued."""
        with self._lock:
            return self._script.popleft() if self._script else None

    def start(self) -> Any:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        if self._thread is not None:
            self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def dispatch(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> SSE | Fail:
        path, _, query = target.partition("?")
        try:
            body: Any = json.loads(raw) if raw.strip() else None
        except ValueError:
            body = None
        with self._lock:
            self.requests.append((method, path, headers, body))
        expected = f"{self.key_prefix}{self.api_key}"
        if self.api_key is not None and headers.get(self.key_header) != expected:
            return self.refuse_key()
        return self.route(method, path, dict(parse_qsl(query)), headers, body)

    def refuse_key(self) -> Fail:
        raise NotImplementedError

    def route(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: Any
    ) -> SSE | Fail:
        raise NotImplementedError


class OpenAIDouble(ScriptedServer):
    """`with OpenAIDouble(models=("m",)) as d: d.script(SSE(...)); ... d.url`.

    Speaks what OpenAI, OpenRouter (under `/api`), vLLM and the llama.cpp server share.
    `windows` gives models a context window, listed in `/v1/models` under `window_field`
    (OpenRouter `context_length`, vLLM `max_model_len` …); `props_n_ctx` makes it a llama.cpp
    server whose `/props` reports that per-slot window.
    """

    def __init__(
        self,
        *,
        port: int = 0,
        models: tuple[str, ...] = ("qwen2.5-coder-0.5b",),
        api_key: str | None = None,
        default_text: str = "Hello from the double.",
        windows: dict[str, int] | None = None,
        window_field: str = "context_length",
        props_n_ctx: int | None = None,
        chat_template: str = "",
    ) -> None:
        super().__init__(port=port, api_key=api_key)
        self.chat_template = chat_template  # what llama.cpp's `/props` says the template is
        self.models = list(models)
        self.default_text = default_text
        self.windows = dict(windows or {})
        self.window_field = window_field
        self.props_n_ctx = props_n_ctx

    def refuse_key(self) -> Fail:
        # OpenAI echoes a masked form of the key it refused
        shown = f"{self.api_key[:3]}***" if self.api_key else ""
        message = f"Incorrect API key provided: {shown}. You can find your API key online."
        return Fail(401, _error(message, "invalid_request_error", "invalid_api_key"))

    def entry(self, model: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"id": model, "object": "model", "created": 0, "owned_by": "me"}
        if model in self.windows:
            entry[self.window_field] = self.windows[model]
        return entry

    def route(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: Any
    ) -> SSE | Fail:
        path = path.removeprefix("/api")  # OpenRouter's base URL ends in /api
        if (method, path) == ("GET", "/v1/models"):
            data = [self.entry(m) for m in self.models]
            return Fail(200, {"object": "list", "data": data})
        if method == "GET" and path.startswith("/v1/models/"):
            model = path.removeprefix("/v1/models/")
            if model not in self.models:
                message = f"The model '{model}' does not exist"
                return Fail(404, _error(message, "invalid_request_error", "model_not_found"))
            return Fail(200, self.entry(model))
        if (method, path) == ("GET", "/props") and self.props_n_ctx is not None:
            settings = {"n_ctx": self.props_n_ctx, "params": {"n_predict": -1}}
            props = {"default_generation_settings": settings, "total_slots": 1}
            return Fail(
                200, props | ({"chat_template": self.chat_template} if self.chat_template else {})
            )
        if (method, path) != ("POST", "/v1/chat/completions"):
            return Fail(404, _error(f"no route {method} {path}", "not_found_error", None))
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return Fail(400, _error("'messages' is required", "invalid_request_error", None))
        if body.get("model") not in self.models:
            message = (
                f"The model `{body.get('model')}` does not exist or you do not have access to it."
            )
            return Fail(404, _error(message, "invalid_request_error", "model_not_found"))
        scripted = self.scripted()
        if scripted is not None:
            return scripted
        # a tokenizer's count, roughly: 4 characters of the request's JSON per token
        prompt = len(json.dumps([body["messages"], body.get("tools", [])])) // 4
        text, finish = self.default_text, "stop"
        completion = -(-len(text) // 4)
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        if isinstance(limit, int) and completion > limit:  # generation stops at the limit
            text, finish, completion = text[: limit * 4], "length", limit
        chunks = text_chunks(text, model=body["model"], finish=finish)
        return SSE([*chunks, usage_chunk(prompt, completion)])


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    double: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "OpenAIDouble"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        answer = self.server.double.dispatch(self.command, self.path, headers, raw)
        try:
            if isinstance(answer, Fail):
                body = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body)
                data = body.encode() if isinstance(body, str) else body
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(data)))
                for key, value in answer.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            else:
                self._stream(answer)
        except OSError:
            self.close_connection = True

    do_GET = do_POST = _serve

    def _stream(self, answer: SSE) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = [_event(c) for c in answer.chunks]
        if answer.done and answer.marker is not None:
            events.append(_event(answer.marker))
        for event in events:
            if answer.delay > 0 and self.server.double._closing.wait(answer.delay):
                break
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
        if not answer.done:  # drop the connection mid-stream
            self.close_connection = True
            self.wfile.flush()
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(b"0\r\n\r\n")


def _event(chunk: Chunk) -> bytes:
    if isinstance(chunk, Raw):
        return bytes(chunk) + b"\n\n"
    if isinstance(chunk, tuple):
        name, data = chunk
        return f"event: {name}\n".encode() + b"data: " + json.dumps(data).encode() + b"\n\n"
    data = chunk if isinstance(chunk, bytes) else json.dumps(chunk).encode()
    return b"data: " + data + b"\n\n"
