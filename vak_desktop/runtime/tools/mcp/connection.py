"""One live connection to a user-configured MCP server, through the official `mcp` SDK.

The SDK's transports (`stdio_client`, `streamable_http_client`) and its `ClientSession` are
anyio context managers: the task that enters them must be the task that leaves them. Tool calls,
though, run in whatever task the turn gives them. So every connection has an owner task that
opens the transport and the session, lists the server's tools, says it is ready, and then holds
both open until it is told to close. Calls from other tasks go through the session; the SDK's
dispatcher pairs each answer with its request.

Everything that can go wrong becomes one of two exceptions whose message a model can read:
`McpUnavailable` (the server could not be started or reached, or it went away — the connection
is then dead and the pool starts a new one on the next demand) and `McpCallFailed` (the server
is fine but this call did not produce a result: a timeout, an unknown tool, bad arguments).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import IO, Any

import httpx2
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
    CallToolResult,
    Implementation,
    PaginatedRequestParams,
)

from vak_desktop.providers.client import app_headers, app_version, trust_context
from vak_desktop.runtime.settings import McpServer
from vak_desktop.runtime.tools.mcp.errors import McpCallFailed, McpUnavailable, RemoteTool

log = logging.getLogger(__name__)

CLIENT_INFO = Implementation(name="vak-desktop", version=app_version())
STDERR_TAIL = 600  # characters of a stdio server's stderr quoted when it fails
# the SDK's own client timeouts: 30 s to connect, write or wait for the pool; 300 s between two
# reads, since a server may hold an event stream open
HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
CLOSE_WAIT = 10.0  # the SDK bounds its own stdio shutdown at about 6 s (close stdin, TERM, KILL)
# Closing a stdio server does not wait out the SDK's 2 s + 2 s: once its stdin is closed it has
# STOP_GRACE seconds to exit, then its process group gets SIGTERM, and SIGKILL KILL_GRACE seconds
# later. `mcp-server-time` needs 0.4-0.6 s to exit on its own on a loaded 2-core machine and
# about 0.02 s on SIGTERM; an `npx`/`sh` wrapper whose leader outlives the server waited the
# full 2 s before.
STOP_GRACE = 0.15
KILL_GRACE = 0.25


_closing: set[asyncio.Task[None]] = set()  # owners cancelled without waiting, kept until done


class McpConnection:
    """A started MCP server: its session, its tool listing, and the task that holds them open."""

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self.tools: tuple[RemoteTool, ...] = ()
        self.in_flight = 0  # calls sent and not yet answered (tests wait on it; so may a UI)
        self._session: ClientSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._close = asyncio.Event()
        self._stderr: IO[str] | None = None
        self._process: Any = None  # a stdio server's process (anyio), once spawned
        self._dead = False

    @property
    def alive(self) -> bool:
        return self._session is not None and not self._dead

    async def open(self, start_within: float) -> None:
        """Start the server (or reach it), initialise the session and list its tools."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._hold(ready), name=f"mcp:{self.server.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), start_within)
        except TimeoutError:
            note = self._stderr_note()
            await self.aclose()
            raise McpUnavailable(
                f"MCP server {self.server.name!r} did not answer within {start_within:g} s "
                "of starting" + note
            ) from None
        except McpUnavailable:
            await self.aclose()
            raise
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # the turn stopped while it started
                self._abandon()
                raise
            raise McpUnavailable(  # aclose() from elsewhere ended the start
                f"MCP server {self.server.name!r} was closed while starting"
            ) from None
        finally:
            if ready.done() and not ready.cancelled():
                ready.exception()  # retrieved, so asyncio never reports it as lost

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        answer_within: float,
        *,
        ceiling: float | None = None,
        on_progress: Callable[[float, float | None, str | None], None] | None = None,
    ) -> CallToolResult:
        """Call `tool` on the server; the result may itself be an error (`is_error`).

        Progress is requested (a progress token goes with the call): each report the server
        sends goes to `on_progress` and moves the deadline to `answer_within` seconds after it,
        but never past `ceiling` seconds after the call began (default: `answer_within`)."""
        session = self._session
        if session is None or self._dead:
            raise McpUnavailable(f"MCP server {self.server.name!r} is not running")
        loop = asyncio.get_running_loop()
        began = loop.time()
        hard = began + max(ceiling or answer_within, answer_within)
        deadline = min(began + answer_within, hard)

        reports = 0

        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            nonlocal deadline, reports
            reports += 1
            deadline = min(loop.time() + answer_within, hard)
            if on_progress is not None:
                on_progress(progress, total, message)

        self.in_flight += 1
        call = asyncio.ensure_future(
            self._call_tool(session, tool, arguments, hard - began, progressed)
        )
        try:
            while True:
                done, _ = await asyncio.wait({call}, timeout=max(0.0, deadline - loop.time()))
                if done:
                    return call.result()
                if loop.time() >= deadline:
                    ceiling_hit = deadline >= hard and reports > 0
                    raise McpCallFailed(self._late(tool, answer_within, hard - began, ceiling_hit))
        finally:
            if not call.done():
                call.cancel()
                with contextlib.suppress(asyncio.CancelledError, McpCallFailed, McpUnavailable):
                    await call
            self.in_flight -= 1

    def _late(self, tool: str, answer_within: float, ceiling: float, ceiling_hit: bool) -> str:
        where = f"{self.server.name}/{tool}"
        if ceiling_hit:
            return (
                f"{where} was still reporting progress at the {ceiling:g} s ceiling for one "
                "call (progress_ceiling in the server's settings); it was stopped there"
            )
        return f"{where} gave no answer within {answer_within:g} s"

    async def _call_tool(
        self,
        session: ClientSession,
        tool: str,
        arguments: dict[str, Any],
        answer_within: float,
        progressed: Any,
    ) -> CallToolResult:
        try:
            result = await session.call_tool(
                tool, arguments, read_timeout_seconds=answer_within, progress_callback=progressed
            )
            if not isinstance(result, CallToolResult):
                raise McpCallFailed(
                    f"{self.server.name}/{tool} answered with a {type(result).__name__}, "
                    "not a tool result"
                )
            return result
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._dead = True
                what = "connection to" if self.server.url else "process of"
                raise McpUnavailable(
                    f"the {what} MCP server {self.server.name!r} ended during the call to "
                    f"{tool!r}; no result came back" + self._stderr_note()
                ) from None
            if exc.code == REQUEST_TIMEOUT:
                raise McpCallFailed(
                    f"{self.server.name}/{tool} gave no answer within {answer_within:g} s"
                ) from None
            raise McpCallFailed(
                f"{self.server.name}/{tool} refused the call: {exc.message}"
            ) from None
        except (OSError, RuntimeError) as exc:  # the transport broke under the call
            self._dead = True
            raise McpUnavailable(
                f"MCP server {self.server.name!r} failed during the call to {tool!r}: "
                f"{_describe(exc)}" + self._stderr_note()
            ) from None

    async def aclose(self) -> None:
        """Close the session and the transport (a stdio server is stopped); idempotent."""
        self._close.set()
        owner, self._owner = self._owner, None
        if owner is not None and not owner.done():
            if self._session is None:  # still starting: it is not waiting to be told
                owner.cancel()
            stopper = asyncio.ensure_future(_stop_process(self._process))
            try:
                _, pending = await asyncio.wait({owner}, timeout=CLOSE_WAIT)
                if pending:
                    owner.cancel()
                    await asyncio.wait({owner})
            finally:
                stopper.cancel()
        self._close_stderr()

    def _abandon(self) -> None:
        """Cancel the owner without waiting (the SDK's shutdown runs shielded inside it)."""
        self._close.set()
        owner, self._owner = self._owner, None
        if owner is not None and not owner.done():
            owner.cancel()
            _closing.add(owner)
            owner.add_done_callback(_closing.discard)
            owner.add_done_callback(lambda _: self._close_stderr())
        else:
            self._close_stderr()

    def _close_stderr(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- the owner task -------------------------------------------------------------------

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        try:
            async with AsyncExitStack() as stack:
                transport = self._transport()
                read, write = await stack.enter_async_context(transport)
                self._process = _spawned_process(transport)
                session = await stack.enter_async_context(
                    ClientSession(read, write, client_info=CLIENT_INFO)
                )
                await session.initialize()
                self.tools = await _list_all(session)
                self._session = session
                ready.set_result(None)
                await self._close.wait()
        except Exception as exc:  # anything the SDK raised: the connection is over
            reason = self._start_failure(exc)
            if ready.done():
                log.info("MCP server %r went away: %s", self.server.name, reason)
            else:
                ready.set_exception(McpUnavailable(reason))
        finally:
            self._dead = True
            self._session = None
            if not ready.done():  # cancelled while starting; nobody may be waiting any more
                ready.cancel()

    def _transport(self) -> AbstractAsyncContextManager[Any]:
        server = self.server
        if server.url:
            return _http_transport(server.url)
        # kept open for the connection's life (its tail explains a failure); closed in aclose()
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        parameters = StdioServerParameters(
            command=server.command[0], args=list(server.command[1:]), env=dict(server.env) or None
        )
        return stdio_client(parameters, errlog=self._stderr)

    def _start_failure(self, exc: BaseException) -> str:
        name = self.server.name
        leaves = list(_leaves(exc))
        for leaf in leaves:
            if isinstance(leaf, FileNotFoundError) and not self.server.url:
                return (
                    f"could not start MCP server {name!r}: command "
                    f"{self.server.command[0]!r} was not found"
                )
            if isinstance(leaf, PermissionError) and not self.server.url:
                return (
                    f"could not start MCP server {name!r}: command "
                    f"{self.server.command[0]!r} is not executable"
                )
            if isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED:
                return (
                    f"MCP server {name!r} closed the connection before it finished starting"
                    + self._stderr_note()
                )
        where = self.server.url or " ".join(self.server.command)
        detail = "; ".join(_describe(leaf) for leaf in leaves) or _describe(exc)
        return f"could not reach MCP server {name!r} ({where}): {detail}" + self._stderr_note()

    def _stderr_note(self) -> str:
        if self._stderr is None or self._stderr.closed:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read().strip()
        except (OSError, ValueError):
            return ""
        if not text:
            return ""
        return f". Its stderr ended with:\n{text[-STDERR_TAIL:]}"


def _spawned_process(transport: AbstractAsyncContextManager[Any]) -> Any:
    """The process the SDK's `stdio_client` spawned, or None (an HTTP transport; an SDK that
    keeps it elsewhere: closing then takes the SDK's own bounded path).

    The SDK offers no handle on it; `stdio_client` is an async generator context manager, and
    its frame holds the process as `process` for as long as the transport is open."""
    frame = getattr(getattr(transport, "gen", None), "ag_frame", None)
    process = frame.f_locals.get("process") if frame is not None else None
    if isinstance(getattr(process, "pid", None), int) and hasattr(process, "returncode"):
        return process
    return None


async def _stop_process(process: Any) -> None:
    """Stop a stdio server whose stdin the SDK is closing: STOP_GRACE seconds to exit by itself,
    then SIGTERM to its process group, then SIGKILL (on Windows: terminate, then kill)."""
    if process is None:
        return
    loop = asyncio.get_running_loop()
    for send, wait in ((None, STOP_GRACE), (signal.SIGTERM, KILL_GRACE), (_KILL, KILL_GRACE)):
        if send is not None:
            _signal_tree(process, send)
        deadline = loop.time() + wait
        while process.returncode is None and loop.time() < deadline:  # noqa: ASYNC110 (returncode has no event)
            await asyncio.sleep(0.01)
        if process.returncode is not None:
            return


_KILL = getattr(signal, "SIGKILL", signal.SIGTERM)


def _signal_tree(process: Any, send: signal.Signals) -> None:
    """`send` to the server and what it started: the SDK starts it as a process group leader."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if sys.platform == "win32":  # the SDK's job object takes the children with it
            process.kill() if send is _KILL else process.terminate()
        elif process.returncode is None:
            os.killpg(process.pid, send)


async def _list_all(session: ClientSession) -> tuple[RemoteTool, ...]:
    """Every tool the server offers, following pagination cursors."""
    tools: list[RemoteTool] = []
    cursor: str | None = None
    while True:
        params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
        page = await session.list_tools(params=params)
        tools += [
            RemoteTool(
                t.name,
                t.description or "",
                dict(t.input_schema),
                (t.execution.task_support if t.execution else None) or "forbidden",
            )
            for t in page.tools
        ]
        cursor = page.next_cursor
        if not cursor:
            return tuple(tools)


@contextlib.asynccontextmanager
async def _http_transport(url: str) -> AsyncIterator[Any]:
    """The SDK's streamable HTTP transport on a client that sends the app's User-Agent and
    trusts the app's one trust store (the SDK builds its own httpx2 client otherwise; a client
    passed in is ours to close)."""
    async with (
        mcp_http_client() as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


def mcp_http_client() -> httpx2.AsyncClient:
    """The HTTP client of MCP's streamable HTTP transport: the SDK's timeouts, redirects left to
    the transport (it follows them within the server's origin), the app's headers and trust."""
    return httpx2.AsyncClient(headers=app_headers(), timeout=HTTP_TIMEOUT, verify=trust_context())


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions inside (nested) exception groups, or the exception itself."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def _describe(exc: BaseException) -> str:
    if isinstance(exc, MCPError):
        return exc.message
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
