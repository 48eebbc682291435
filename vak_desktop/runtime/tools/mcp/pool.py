"""The user's MCP servers: each started on first demand, kept for reuse, closed at shutdown.

Nothing starts when the app does. The first call that names a server starts it (concurrent
first calls share one start); later calls reuse the connection; a connection that died is
replaced by a fresh one on the next demand. `aclose()` stops everything that runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING

from vak_desktop.runtime.settings import McpServer
from vak_desktop.runtime.tools.mcp.errors import McpUnavailable

if TYPE_CHECKING:
    from vak_desktop.runtime.tools.mcp.connection import McpConnection

START_TIMEOUT = 30.0  # a first `npx`/`uvx` run may download its package before it answers


class UnknownServer(Exception):
    """No admitted server has this name; the message lists the ones there are."""


class McpPool:
    """Connections to the admitted (enabled) servers, by name, started lazily."""

    def __init__(self, servers: Iterable[McpServer], *, start_timeout: float = START_TIMEOUT):
        servers = tuple(servers)
        names = [s.name for s in servers]
        if twice := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"two MCP servers share the name {', '.join(map(repr, twice))}")
        self.admitted: tuple[McpServer, ...] = tuple(s for s in servers if s.enabled)
        self._disabled = {s.name for s in servers if not s.enabled}
        self._by_name = {s.name: s for s in self.admitted}
        self._start_timeout = start_timeout
        self._live: dict[str, McpConnection] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def server(self, name: str) -> McpServer:
        server = self._by_name.get(name)
        if server is not None:
            return server
        if name in self._disabled:
            raise UnknownServer(f"MCP server {name!r} is turned off in the settings")
        known = ", ".join(sorted(self._by_name)) or "none are configured"
        raise UnknownServer(f"there is no MCP server named {name!r} (servers: {known})")

    def running(self, name: str) -> McpConnection | None:
        """The live connection to `name`, without starting it."""
        connection = self._live.get(name)
        return connection if connection is not None and connection.alive else None

    async def connection(self, name: str) -> tuple[McpConnection, bool]:
        """The live connection to `name`, starting it if needed; True when this call started it.

        Raises `UnknownServer` or `McpUnavailable`."""
        server = self.server(name)
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            current = self._live.get(name)
            if current is not None and current.alive:
                return current, False
            if current is not None:  # died since its last use: release what is left of it
                del self._live[name]
                await current.aclose()
            from vak_desktop.runtime.tools.mcp.connection import McpConnection  # the SDK, now

            connection = McpConnection(server)
            await connection.open(self._start_timeout)  # McpUnavailable: nothing is kept
            self._live[name] = connection
            return connection, True

    async def discard(self, connection: McpConnection) -> None:
        """Close a connection that failed, so the next demand starts the server again."""
        if self._live.get(connection.server.name) is connection:
            del self._live[connection.server.name]
        await connection.aclose()

    async def aclose(self) -> None:
        """Stop every running server; a later demand would start it again."""
        live, self._live = list(self._live.values()), {}
        await asyncio.gather(*(c.aclose() for c in live))


__all__ = ["McpPool", "McpUnavailable", "UnknownServer"]
