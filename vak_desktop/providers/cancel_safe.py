"""Cancelling a task that is doing HTTP without cutting httpx's own clean-up short.

httpcore closes connections in sections it shields from cancellation with anyio
(`AsyncShieldCancellation`, an anyio `CancelScope(shield=True)`). An anyio cancellation waits
until such a section has ended. asyncio's `Task.cancel()` does not wait: it lands at whichever
`await` the task is suspended on, shielded or not. Closing a connection suspends the task once
(anyio's `SocketStream.aclose`). So a task cancelled while the pool closes its expired
connections stops after the first one. The pool has already taken the others off its list,
and nothing closes them until the garbage collector finds their sockets (`ResourceWarning:
unclosed transport`). That was the onboarding test's flaky leak: the window closed, its
service cancelled a model look-up, and the cancellation landed while the look-up's response
was being closed, when the Ollama double had just gone away and left two idle connections
expired.

`CancelSafeClient` is the client every part of the app sends through (`client.http_client`).
Its `send` runs in a child task of an anyio task group, and so does each streamed response's
close. The caller's task may then be cancelled natively (a service closing, a stopped turn,
`asyncio.gather`, a paused probe): the task group passes that on to the child as an anyio
cancellation, which lets httpcore's shielded clean-up finish first. Reading a streamed body is
not moved into a child: a task per chunk would cost more than the stream. A read that is
cancelled closes the connection in httpcore's own exception path, and only a second
cancellation, arriving inside that path, could interrupt it.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import Any, TypeVar

import anyio
import httpx

T = TypeVar("T")


async def with_anyio_cancellation(call: Callable[[], Awaitable[T]]) -> T:
    """`await call()` in a child task, so that cancelling this task reaches the call as an
    anyio cancellation (which waits for shielded sections to end); its result, or its
    exception as raised (not wrapped in an exception group)."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    async def run() -> None:
        try:
            outcome.append(await call())
        except BaseException as exc:  # handed back to the caller below, unwrapped
            failure.append(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(run)
    if failure:
        raise failure[0]
    return outcome[0]


class _ClosedInChild(httpx.AsyncByteStream):
    """A streamed response's body, closed through `with_anyio_cancellation`."""

    def __init__(self, stream: httpx.AsyncByteStream) -> None:
        self._stream = stream

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._stream.__aiter__()

    async def aclose(self) -> None:
        await with_anyio_cancellation(self._stream.aclose)


class CancelSafeClient(httpx.AsyncClient):
    """An `httpx.AsyncClient` whose requests, responses and closing can be cancelled at any
    point without leaving a connection open (see the module docstring)."""

    async def send(self, request: httpx.Request, **options: Any) -> httpx.Response:
        sent: list[httpx.Response] = []

        async def send() -> httpx.Response:
            response = await super(CancelSafeClient, self).send(request, **options)
            sent.append(response)
            return response

        try:
            response = await with_anyio_cancellation(send)
        except BaseException:
            if sent:  # cancelled just as the response came: it is closed, not dropped
                await with_anyio_cancellation(sent[0].aclose)
            raise
        if options.get("stream") and isinstance(response.stream, httpx.AsyncByteStream):
            response.stream = _ClosedInChild(response.stream)
        return response

    async def aclose(self) -> None:
        await with_anyio_cancellation(super().aclose)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        exit_ = functools.partial(super().__aexit__, exc_type, exc_value, traceback)
        await with_anyio_cancellation(exit_)
