"""How long a streamed request may stay silent, and telling the user while it is.

One read timeout used to serve two waits that differ a hundredfold: the wait for the first
byte, which on a local server includes loading the model from disk (measured: a 30 GB model
from a spinning disk, ~4 min), and a stall mid-answer, where a model that generates at all
sends a token every fraction of a second. Both were 300 s, so a server that stopped mid-answer
cost five minutes, and a cold load was a silent five-minute wait. Every adapter (Ollama,
OpenAI-compatible, Anthropic) now reads its stream through `PacedStream` under `Deadlines`:

- `first_byte`: until the response's headers and its first body byte (a server may send its
  headers at once and load the model after, or load first);
- `stall`: between two reads once the body has started;
- after `waiting_notice` seconds without the response starting, one `Waiting` event says the
  model is probably loading, so the CLI and the window show it instead of a silent wait.

A deadline that passes raises `Silent` (nothing ever came) or `Stalled` (the body stopped), both
`httpx.ReadTimeout`s, so each adapter words them with the rest of its transport failures
(`http_common.transport_error`) and names the deadline that passed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from vak_desktop.providers.base import Waiting


@dataclass(frozen=True)
class Deadlines:
    """Seconds a streamed request may wait, by phase (see the module)."""

    connect: float = 5.0  # a local server is there at once or not at all
    first_byte: float = 300.0  # allows for a cold model load
    stall: float = 60.0  # mid-answer: a model that runs sends far more often than this
    waiting_notice: float = 3.0  # silence before the user is told the model may be loading

    def httpx_timeout(self) -> httpx.Timeout:
        """httpx's own timeouts: connect, and a read timeout as a backstop only (ours fire
        first; it covers reads outside `PacedStream`, such as an error body)."""
        return httpx.Timeout(self.first_byte + 5.0, connect=self.connect)


DEADLINES = Deadlines()


class Silent(httpx.ReadTimeout):
    """The server accepted the connection and sent nothing within `first_byte`."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"nothing arrived within {seconds:g} s")
        self.seconds = seconds


class Stalled(httpx.ReadTimeout):
    """The body started, then nothing arrived for `stall` seconds."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"nothing arrived for {seconds:g} s mid-stream")
        self.seconds = seconds


def loading_message(server: str, seconds: float) -> str:
    return (
        f"waiting for the model: {server} has not started answering after {seconds:g} s "
        "(loading a model from disk can take minutes, and reading a long prompt takes a while)"
    )


class PacedStream:
    """One streamed request read under `deadlines`:

        async with PacedStream(client, request, deadlines, "Ollama") as paced:
            async for waiting in paced.opening():
                yield waiting  # the `Waiting` notice, at most once
            response = paced.response
            async for piece in paced.body(): ...

    `opening` waits for the response's headers and, for a success, its first body byte (the
    Ollama double, like a server that sends its headers at once, is silent only after them).
    """

    def __init__(
        self, client: httpx.AsyncClient, request: httpx.Request, deadlines: Deadlines, server: str
    ) -> None:
        self._client, self._request = client, request
        self.deadlines, self.server = deadlines, server
        self._response: httpx.Response | None = None
        self._send: asyncio.Future[httpx.Response] | None = None
        self._waits: list[asyncio.Future[Any]] = []
        self._pieces: AsyncIterator[bytes] | None = None
        self._head = b""
        self._told = False

    @property
    def response(self) -> httpx.Response:
        if self._response is None:
            raise RuntimeError("read `opening()` to its end first")
        return self._response

    async def __aenter__(self) -> PacedStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        for wait in self._waits:
            if not wait.done():
                wait.cancel()
                with contextlib.suppress(BaseException):
                    await wait
        response = self._response  # or one `send` returned that `opening` never took (`_sent`)
        if response is None and self._send is not None and self._send.done():
            response = _sent(self._send)
        if response is not None:
            await response.aclose()

    async def opening(self) -> AsyncGenerator[Waiting, None]:
        """Send the request and wait for the answer to start, saying so once if it is slow."""
        started = asyncio.get_running_loop().time()
        send = self._send = asyncio.ensure_future(self._client.send(self._request, stream=True))
        async for waiting in self._within_first_byte(send, started):
            yield waiting
        self._response = send.result()
        if self._response.status_code >= 400:
            return  # the adapter reads the error body
        self._pieces = self._response.aiter_bytes()
        first = asyncio.ensure_future(anext(self._pieces, b""))
        async for waiting in self._within_first_byte(first, started):
            yield waiting
        self._head = first.result()

    async def _within_first_byte(
        self, wait: asyncio.Future[Any], started: float
    ) -> AsyncGenerator[Waiting, None]:
        self._waits.append(wait)
        loop = asyncio.get_running_loop()
        if not self._told:
            notice = self.deadlines.waiting_notice - (loop.time() - started)
            done, _ = await asyncio.wait({wait}, timeout=max(0.0, notice))
            if not done:
                self._told = True
                yield Waiting(loading_message(self.server, self.deadlines.waiting_notice))
        left = self.deadlines.first_byte - (loop.time() - started)
        done, _ = await asyncio.wait({wait}, timeout=max(0.0, left))
        if not done:
            raise Silent(self.deadlines.first_byte)

    async def body(self) -> AsyncIterator[bytes]:
        """The body's bytes, each read within `stall` of its start (`_StallWatch`)."""
        if self._pieces is None:
            raise RuntimeError("read `opening()` to its end first")
        if not self._head:
            return
        yield self._head
        watch = _StallWatch(self.deadlines.stall)
        try:
            while True:
                watch.reading = True
                watch.since = watch.loop.time()
                try:
                    piece = await anext(self._pieces)
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if watch.fired and watch.task.uncancel() == 0:
                        raise Stalled(self.deadlines.stall) from None
                    raise
                watch.reading = False
                yield piece
        finally:
            watch.stop()


def _sent(send: asyncio.Future[httpx.Response]) -> httpx.Response | None:
    """The response a finished `send` returned, which `opening` may never have taken: the exit
    (a cancellation, an error, the caller leaving) can come in the step between the send
    finishing and `opening` waking up to take it. `__aexit__` closes it all the same, or its
    connection would stay in the pool, ACTIVE with its request queued, until the client closes.
    None if the send failed or was cancelled (its error is read, so asyncio does not report
    it as never retrieved)."""
    if send.cancelled() or send.exception() is not None:
        return None
    return send.result()


class _StallWatch:
    """The stall deadline, as one timer per `stall` seconds rather than one per read (a 10,000-
    chunk answer armed and cancelled 10,000 `asyncio.timeout`s, a fifth of its streaming cost).
    Only a read counts: time the consumer spends with a piece is not a stall."""

    def __init__(self, stall: float) -> None:
        self.loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self.task, self.stall = task, stall
        self.reading, self.since, self.fired = False, self.loop.time(), False
        self._handle = self.loop.call_later(stall, self._check)

    def _check(self) -> None:
        now = self.loop.time()
        if self.reading and now - self.since >= self.stall:
            self.fired = True
            self.task.cancel()
            return
        due = self.since + self.stall if self.reading else now + self.stall
        self._handle = self.loop.call_at(due, self._check)

    def stop(self) -> None:
        self._handle.cancel()


def paced(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    deadlines: Deadlines,
    server: str,
    **request: Any,
) -> PacedStream:
    """A `PacedStream` of `method url` (`request`: json, headers …), with httpx's backstop."""
    built = client.build_request(method, url, timeout=deadlines.httpx_timeout(), **request)
    return PacedStream(client, built, deadlines, server)
