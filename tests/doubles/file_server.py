"""A loopback download server: a real HTTP server in a thread that serves one file as a model
host does (Content-Length, `Range: bytes=N-` → 206 with Content-Range), and misbehaves on
request the way real hosts and networks do:

- `cut_after`: close the connection after that many body bytes, `cuts` times (a dropped link);
- `ignore_range`: answer every request with 200 and the whole file (a server without ranges);
- `body`: serve other bytes than the file the catalogue describes (a wrong or corrupted file);
- `delay_per_chunk`: sleep between 64 KiB chunks (so a UI can show a download under way);
- `redirect_to`: answer 302 to that URL instead (a model hub sends downloads to its CDN).

`data` may be the bytes or a file's path (read per request: a 491 MB model is not held in
memory). Every request's Range header (or "") is recorded in `ranges`.
"""

from __future__ import annotations

import contextlib
import io
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from random import Random
from typing import Any, BinaryIO

CHUNK = 64 * 1024


def write_gguf(path: Path, size: int, seed: int = 7) -> Path:
    """A small valid GGUF file of exactly `size` bytes: a version-3 header with its metadata
    (architecture, name, alignment) and no tensors, then deterministic filler bytes."""

    def text(value: str) -> bytes:
        raw = value.encode()
        return struct.pack("<Q", len(raw)) + raw

    kvs = [
        (text("general.architecture"), struct.pack("<I", 8) + text("llama")),
        (text("general.name"), struct.pack("<I", 8) + text("vak test download")),
        (text("general.alignment"), struct.pack("<I", 4) + struct.pack("<I", 32)),
    ]
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(k + v for k, v in kvs)
    header += b"\0" * (-len(header) % 32)
    if size < len(header):
        raise ValueError(f"a GGUF header needs {len(header)} bytes")
    path.write_bytes(header + Random(seed).randbytes(size - len(header)))
    return path


class FileServer:
    """Serves `data` at `/<name>` on 127.0.0.1 until closed (use as a context manager)."""

    def __init__(
        self,
        data: bytes | Path,
        name: str = "model.gguf",
        *,
        cut_after: int | None = None,
        cuts: int = 1,
        ignore_range: bool = False,
        body: bytes | None = None,
        delay_per_chunk: float = 0.0,
        redirect_to: str | None = None,
    ) -> None:
        self.data = data
        self.name = name
        self.cut_after = cut_after
        self.cuts_left = cuts if cut_after is not None else 0
        self.ignore_range = ignore_range
        self.body: bytes | Path = body if body is not None else data
        self.delay_per_chunk = delay_per_chunk
        self.redirect_to = redirect_to
        self.ranges: list[str] = []
        self.lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.double = self
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/{self.name}"

    def __enter__(self) -> FileServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def size(self) -> int:
        return self.body.stat().st_size if isinstance(self.body, Path) else len(self.body)

    def opened(self) -> BinaryIO:
        return self.body.open("rb") if isinstance(self.body, Path) else io.BytesIO(self.body)

    def take_cut(self) -> bool:
        with self.lock:
            if self.cuts_left > 0:
                self.cuts_left -= 1
                return True
            return False


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    double: FileServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        double = self.server.double
        asked = self.headers.get("Range", "")
        double.ranges.append(asked)
        if double.redirect_to is not None:
            self.send_response(302)
            self.send_header("Location", double.redirect_to)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.lstrip("/") != double.name:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        total = double.size()
        start = 0
        if asked and not double.ignore_range:
            start = int(asked.removeprefix("bytes=").split("-")[0])
            if start >= total:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{total}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{total - 1}/{total}")
        else:
            self.send_response(200)
        self.send_header("Accept-Ranges", "none" if double.ignore_range else "bytes")
        self.send_header("Content-Length", str(total - start))
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        limit = total
        if double.cut_after is not None and double.take_cut():
            limit = min(total, start + double.cut_after)
        position = start
        with contextlib.suppress(OSError), double.opened() as source:
            source.seek(start)
            while position < limit:
                end = min(limit, position + CHUNK)
                self.wfile.write(source.read(end - position))
                position = end
                if double.delay_per_chunk:
                    time.sleep(double.delay_per_chunk)
            self.wfile.flush()
            if limit < total:  # the link drops mid-body
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
