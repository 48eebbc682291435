"""`PacedStream` closes the response of a finished send that `opening()` never took.

The regression: a stream's task was cancelled in the one step between the client's `send`
returning the response (the server had sent its headers) and `opening()` waking up to take
it. `__aexit__` only closed the response it had taken, so this one stayed open: its
connection sat in httpx's pool, ACTIVE with its request queued, until the client closed. A
delay cannot land in a window one loop step wide, so the client here acts at the moment its
`send` returns, in the same step, before the caller's task can run again. The server holds
the body back and says when the client hangs up.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from vak_desktop.providers.cancel_safe import CancelSafeClient
from vak_desktop.providers.client import app_headers
from vak_desktop.providers.deadlines import Deadlines, PacedStream, paced

HEADERS = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
)


class HeldBody:
    """A loopback server that answers one request with a stream's headers, holds the body
    back, and sets `hung_up` when the client closes the connection."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(20)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self.hung_up = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except OSError:  # the test ended before it connected
            return
        with conn:
            conn.settimeout(20)
            try:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += conn.recv(65536)
                conn.sendall(HEADERS)
                while conn.recv(65536):  # the request's body, then nothing until the hang-up
                    pass
            except TimeoutError:  # still open: `hung_up` stays unset
                return
            except OSError:  # reset: hung up as well
                pass
            self.hung_up.set()

    def close(self) -> None:
        self._listener.close()
        self._thread.join(timeout=25)


@pytest.fixture
def held() -> Iterator[HeldBody]:
    server = HeldBody()
    yield server
    server.close()


class ActsWhenSent(CancelSafeClient):
    """The app's client (`http_client`), which calls `when_sent()` as its `send` returns: in
    the same step, so before the task that awaits the send can take the response."""

    def __init__(self, when_sent: Callable[[], None]) -> None:
        super().__init__(headers=app_headers())
        self._when_sent = when_sent

    async def send(self, request: httpx.Request, **options: Any) -> httpx.Response:
        response = await super().send(request, **options)
        self._when_sent()
        return response


class Leaves(Exception):
    """The caller's own error, raised while `opening()` waits."""


@pytest.mark.timeout(30)
@pytest.mark.parametrize("exit_", ["cancelled", "error", "normal"])
async def test_a_response_sent_but_never_taken_is_closed_on_exit(
    exit_: str, held: HeldBody
) -> None:
    sent = asyncio.Event()
    consumer: asyncio.Task[None] | None = None

    def when_sent() -> None:
        sent.set()
        if exit_ == "cancelled":  # lands in `opening()`'s wait for the send
            assert consumer is not None
            consumer.cancel()

    # a cancelled stream waits quietly; the others are told at once that it waits, and leave
    # at the notice once the send has returned, without reading on
    notice = 60.0 if exit_ == "cancelled" else 0.0
    deadlines = Deadlines(first_byte=20.0, stall=20.0, waiting_notice=notice)
    streams: list[PacedStream] = []
    async with ActsWhenSent(when_sent) as client:

        async def consume() -> None:
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
            url = held.url + "/api/chat"
            async with paced(client, "POST", url, deadlines, "Ollama", json=body) as stream:
                streams.append(stream)
                async for _ in stream.opening():
                    await sent.wait()
                    if exit_ == "error":
                        raise Leaves
                    break

        consumer = asyncio.ensure_future(consume())
        if exit_ == "cancelled":
            with pytest.raises(asyncio.CancelledError):
                await consumer
        elif exit_ == "error":
            with pytest.raises(Leaves):
                await consumer
        else:
            await consumer
        assert sent.is_set()
        with pytest.raises(RuntimeError, match="read `opening\\(\\)` to its end first"):
            streams[0].response  # noqa: B018 (`opening()` never took the response)
        pool = client._transport._pool  # type: ignore[attr-defined]
        assert (pool.connections, pool._requests) == ([], [])
        # the server sees the hang-up while the client is still open
        assert await asyncio.to_thread(held.hung_up.wait, 10), "the connection is still open"
