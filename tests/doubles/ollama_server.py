"""A loopback Ollama: a real HTTP server in a thread that speaks Ollama's wire format.

Why it exists: the adapter, the capacity probe and the UI must be tested against what Ollama
*does* — silent truncation visible only in `prompt_eval_count`, the nested llama.cpp 400 when
`truncate` is false, tool calls on any chunk, omitted zero metrics, reloads when `num_ctx`
changes — not against what our client guesses. Behaviour follows the wire fact sheet
(design/product.md, "Ollama facts"); every request is recorded in `requests`.

This module is the HTTP half and the import point tests use: `OllamaDouble` routes requests,
decodes their bodies as Go would, streams NDJSON and owns the server thread; `python -m
tests.doubles.ollama_server` serves one from the command line. The route handlers and state
are in `ollama_routes.py`; the token, timing and instruction models tests compute against are
documented and implemented in `ollama_model.py`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import sys
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

from tests.doubles.ollama_model import (
    DEFAULT_KEEP_ALIVE_S,
    FOREVER,
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    OVERFLOW_TEXT,
    Answer,
    Model,
    Reject,
    Reply,
    json_answer,
    keep_alive_seconds,
    llama_overflow,
    ndjson_line,
    rfc3339,
)
from tests.doubles.ollama_routes import OllamaRoutes, normalise

__all__ = [
    "DEFAULT_KEEP_ALIVE_S",
    "FOREVER",
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "OVERFLOW_TEXT",
    "Model",
    "OllamaDouble",
    "Reject",
    "Reply",
    "go_json_error",
    "keep_alive_seconds",
    "llama_overflow",
    "main",
    "normalise",
    "rfc3339",
]


class OllamaDouble(OllamaRoutes):
    """The fake server. `with OllamaDouble() as d: d.add_model("llama3.2"); ... d.url`.

    Keyword settings other than `port` are `OllamaRoutes`'s (chars_per_token, default_num_ctx,
    instruction_horizon, noise, seed, prefill_tps, decode_tps, cold_load_ns, warm_load_ns,
    realtime, version, default_text, default_chunk_chars, default_delay_per_chunk,
    pull_delay_per_line)."""

    def __init__(self, *, port: int = 0, **settings: Any) -> None:
        super().__init__(**settings)
        self._closing = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.double = self
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> OllamaDouble:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and cut open connections (a client mid-stream sees the drop)."""
        if self._thread is not None:
            self._server.shutdown()
        with self._lock:
            self._closing.set()
            connections = list(self._connections)
        for conn in connections:
            _cut(conn)
        self._server.server_close()  # joins the handler threads

    def __enter__(self) -> OllamaDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- routing ----------------------------------------------------------------------------

    ROUTES: ClassVar[dict[str, tuple[str, ...]]] = {
        "/": ("GET", "HEAD"),
        "/api/chat": ("POST",),
        "/api/show": ("POST",),
        "/api/pull": ("POST",),
        "/api/delete": ("DELETE",),
        "/api/tags": ("GET", "HEAD"),
        "/api/ps": ("GET",),
        "/api/version": ("GET", "HEAD"),
    }

    def dispatch(self, method: str, path: str, raw: bytes) -> Answer:
        """Answer one HTTP request (called on the handler's thread)."""
        path = path.split("?", 1)[0]
        body: Any = None
        if raw.strip():
            try:
                body = json.loads(raw)
            except ValueError as exc:
                body = exc
        with self._lock:
            self.requests.append((method, path, None if isinstance(body, Exception) else body))
        if path not in self.ROUTES:
            return Answer(404, b"404 page not found", "text/plain")
        if method not in self.ROUTES[path]:
            return Answer(405, b"405 method not allowed", "text/plain")
        if path == "/":
            return Answer(200, b"Ollama is running", "text/plain; charset=utf-8")
        try:
            if method in ("POST", "DELETE"):
                body = _object_body(body, raw)
            with self._lock:
                answer: Answer = getattr(self, "_" + path.rsplit("/", 1)[1])(body or {})
                return answer
        except Reject as reject:
            answer = json_answer(reject.status, {"error": reject.message})
            if reject.retry_after is not None:
                answer.headers["Retry-After"] = reject.retry_after
            return answer


def go_json_error(exc: json.JSONDecodeError, text: str) -> str:
    """The message Go's encoding/json gives for the same malformed body (common cases)."""
    if exc.pos >= len(text.rstrip()):
        return "unexpected EOF"
    where = "looking for beginning of value"
    if exc.msg.startswith("Expecting property name"):
        where = "looking for beginning of object key string"
    elif exc.msg.startswith("Expecting ',' delimiter"):
        where = "after object key:value pair"
    return f"invalid character '{text[exc.pos]}' {where}"


def _object_body(body: Any, raw: bytes) -> dict[str, Any]:
    if body is None:
        raise Reject(400, "missing request body")
    if isinstance(body, json.JSONDecodeError):
        raise Reject(400, go_json_error(body, raw.decode("utf-8", errors="replace")))
    if not isinstance(body, dict):
        kind = "array" if isinstance(body, list) else type(body).__name__
        raise Reject(400, f"json: cannot unmarshal {kind} into Go value of type api.Request")
    return body


def _cut(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    double: OllamaDouble

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that vanished (killed mid-stream, as tests do on purpose) is not an error.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streaming, like Go's net/http
    server_version = "OllamaDouble"
    server: _Server

    def setup(self) -> None:
        super().setup()
        # Without this, Nagle + delayed ACK hold each small write back ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.double._lock:
            self.server.double._connections.add(self.connection)
            if self.server.double._closing.is_set():
                _cut(self.connection)

    def finish(self) -> None:
        with self.server.double._lock:
            self.server.double._connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self.server.double.user_agents.append(self.headers.get("User-Agent") or "")
        answer = self.server.double.dispatch(self.command, self.path, raw)
        try:
            if answer.lines is None:
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(answer.body)))
                for key, value in answer.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(answer.body)
            else:
                self._stream(answer.lines)
        except OSError:  # the client went away
            self.close_connection = True

    do_GET = do_POST = do_DELETE = do_HEAD = _serve

    def _stream(self, lines: list[tuple[dict[str, Any] | bytes, float]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for data, delay in lines:
            if delay > 0 and self.server.double._closing.wait(delay):
                self.close_connection = True
                return
            if isinstance(data, dict):
                if "created_at" in data:
                    data = data | {"created_at": rfc3339(datetime.now(UTC))}
                data = ndjson_line(data)
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")


def main(argv: list[str] | None = None) -> None:
    """Serve until killed; prints `listening http://127.0.0.1:PORT` once ready."""
    parser = argparse.ArgumentParser(description="A loopback Ollama for tests and screenshots.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model", action="append", default=[], help="a model (repeatable)")
    parser.add_argument("--thinking-model", action="append", default=[])
    parser.add_argument("--pullable", action="append", default=[])
    parser.add_argument("--reply", default=None, help="the text of every unscripted reply")
    parser.add_argument("--chunk-chars", type=int, default=8)
    parser.add_argument("--delay-per-chunk", type=float, default=0.0)
    parser.add_argument("--pull-delay-per-line", type=float, default=0.0)
    parser.add_argument("--instruction-horizon", type=int, default=None)
    parser.add_argument("--realtime", action="store_true")
    args = parser.parse_args(argv)
    double = OllamaDouble(
        port=args.port,
        default_text=args.reply,
        default_chunk_chars=args.chunk_chars,
        default_delay_per_chunk=args.delay_per_chunk,
        realtime=args.realtime,
        pull_delay_per_line=args.pull_delay_per_line,
        instruction_horizon=args.instruction_horizon,
    )
    for name in args.model or ([] if args.thinking_model else ["llama3.2"]):
        double.add_model(name)
    for name in args.thinking_model:
        double.add_model(name, capabilities=("completion", "tools", "thinking"), family="qwen3")
    for name in args.pullable:
        double.add_pullable(name)
    with double:
        print(f"listening {double.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
