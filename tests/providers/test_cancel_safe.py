"""A request of the app's client can be cancelled at any point without leaving a connection
open (`providers/cancel_safe.py`).

The regression: Ollama goes away and leaves the client two idle keep-alive connections that
have expired. A model look-up then starts (the onboarding panel's re-check), and the pool
closes both before it connects. The look-up's task is cancelled (the window closing) while the
first of them is being closed. httpcore shields that clean-up with anyio, but asyncio's own
cancellation went through the shield, and the second connection stayed open with nothing
left to close it. Its socket was found later by the garbage collector (flaky in
tests/ui/test_onboarding.py). These tests reach into httpx's pool (`_transport._pool`) only
to cancel at exactly that moment and to see what was closed.
"""

from __future__ import annotations

import asyncio
import gc
import socket
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx
import pytest

from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.providers import OllamaProvider, http_client
from vak_desktop.providers.cancel_safe import with_anyio_cancellation


def _pool_connections(client: httpx.AsyncClient) -> list[Any]:
    return list(client._transport._pool.connections)  # type: ignore[attr-defined]


async def _until(condition: Callable[[], bool], what: str, within: float = 5.0) -> None:
    """Let the loop run, a step at a time, until `condition()` holds."""
    try:
        async with asyncio.timeout(within):
            while not condition():  # noqa: ASYNC110 (the pool has no event to await)
                await asyncio.sleep(0)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


@contextmanager
def _resource_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """The ResourceWarnings a full collection raises (an unclosed socket or transport)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        yield caught
        gc.collect()
    caught[:] = [w for w in caught if issubclass(w.category, ResourceWarning)]


async def test_a_look_up_cancelled_while_stale_connections_close_leaves_none_open() -> None:
    with _resource_warnings() as leaked, OllamaDouble() as double:
        async with http_client() as client:
            provider = OllamaProvider(client, double.url)
            await asyncio.gather(provider.list_models(), provider.list_models())
            stale: list[Any] = _pool_connections(client)
            assert len(stale) == 2  # two idle keep-alive connections
            double.close()  # Ollama goes away: the server cuts both
            await _until(lambda: all(c.has_expired() for c in stale), "both to expire")
            look_up = asyncio.ensure_future(provider.list_models())
            # the pool closes the stale connections before it connects: cancel the look-up as
            # soon as it is closing the first, while the second is still open
            await _until(lambda: any(c.is_closed() for c in stale), "the closing to start")
            assert sum(c.is_closed() for c in stale) == 1
            look_up.cancel()
            with pytest.raises(asyncio.CancelledError):
                await look_up
            assert all(c.is_closed() for c in stale)
            stale.clear()  # the collection below sees only what the pool let go
    assert not leaked, [str(w.message) for w in leaked]


async def test_a_look_up_cancelled_mid_connect_leaves_no_socket() -> None:
    """A listener that never accepts and whose backlog is full: the connect hangs (Linux drops
    the SYN) until the look-up is cancelled."""
    with _resource_warnings() as leaked:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = []
        try:
            for _ in range(4):  # fill the accept queue
                filler = socket.socket()
                filler.setblocking(False)
                filler.connect_ex(("127.0.0.1", port))
                fillers.append(filler)
            async with http_client() as client:
                look_up = asyncio.ensure_future(
                    OllamaProvider(client, f"http://127.0.0.1:{port}").list_models()
                )
                await asyncio.sleep(0.2)
                if look_up.done():  # refused at once: nothing to cancel mid-connect
                    look_up.exception()  # retrieved, so it is not reported as never retrieved
                    pytest.skip("this system refuses a connection to a full backlog at once")
                look_up.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await look_up
        finally:
            for filler in fillers:
                filler.close()
            listener.close()
    assert not leaked, [str(w.message) for w in leaked]


async def test_a_native_cancellation_waits_for_a_shielded_section() -> None:
    finished = []
    inside = asyncio.Event()

    async def closing() -> None:
        with anyio.CancelScope(shield=True):
            inside.set()
            for _ in range(3):
                await asyncio.sleep(0)
            finished.append(True)

    task = asyncio.ensure_future(with_anyio_cancellation(closing))
    await inside.wait()
    task.cancel()  # asyncio's own cancellation, as TaskSet.cancel_all and gather send it
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished == [True]


async def test_the_call_s_result_and_error_come_back_as_they_are() -> None:
    async def answer() -> int:
        return 42

    async def fail() -> int:
        raise httpx.ConnectError("refused")

    assert await with_anyio_cancellation(answer) == 42
    with pytest.raises(httpx.ConnectError, match="refused"):
        await with_anyio_cancellation(fail)


async def test_a_timeout_around_the_call_is_still_a_timeout() -> None:
    """`asyncio.timeout` cancels natively and counts on `uncancel`: the caller gets its
    TimeoutError, and the call was cancelled, not left running."""
    ended = []

    async def slow() -> None:
        try:
            await asyncio.sleep(5)
        finally:
            ended.append(True)

    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await with_anyio_cancellation(slow)
    assert ended == [True]
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]
