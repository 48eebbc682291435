"""The `mcp` tool: the one door to every MCP server the user configured.

MCP servers are user configuration, never part of the product (spec §9): their tools are not
added to the model's tool list one by one. The model calls `mcp` with a server, a tool and its
arguments, or with a server alone to see what it offers. A server is started only when a call
names it, and kept for the next call.

The description sits in the stable prefix, so it is written once, when the tool is made, from
the tools each admitted server showed the last time it ran (read from the ledger, see
`runtime/tools/mcp/observed.py`). Starting a server mid-session records what it offers but does not
change the description; the next process names the new tools.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.settings import McpServer
from vak_desktop.runtime.tools.mcp.errors import McpCallFailed, McpUnavailable
from vak_desktop.runtime.tools.mcp.observed import last_observed, observation
from vak_desktop.runtime.tools.mcp.pool import START_TIMEOUT, McpPool, UnknownServer
from vak_desktop.runtime.tools.mcp.results import result_blobs, result_text, tool_listing
from vak_desktop.runtime.tools.registry import ToolContext, ToolFailure, ToolOutput

if TYPE_CHECKING:
    from vak_desktop.runtime.tools.mcp.connection import McpConnection

log = logging.getLogger(__name__)

CALL_TIMEOUT = 120.0  # seconds a call may go without an answer or a progress report


def mcp_description(servers: Iterable[McpServer], observed: Mapping[str, tuple[str, ...]]) -> str:
    """The tool's description: how to call it and each server with its last-seen tools."""
    named = []
    for server in servers:
        tools = observed.get(server.name)
        if tools:
            named.append(f"{server.name} (tools: {', '.join(sorted(tools))})")
        else:
            named.append(f"{server.name} (not used yet: list its tools first)")
    return (
        "Use a tool on one of the user's MCP servers. "
        '{"server": S, "tool": T, "arguments": {...}} calls tool T on server S; '
        '{"server": S} lists S\'s tools with their arguments. '
        f"Servers: {'; '.join(named)}."
    )


class McpTool:
    """`mcp({server, tool?, arguments?})` over a pool of lazily started servers."""

    always_loaded = True  # the spec's list of always-loaded tools includes `mcp`
    # a server's tool reads a world outside the ledger, as it is now: a successful call is an
    # observation for the live-data check (spec §7)
    observes_now = True

    def __init__(
        self,
        servers: Iterable[McpServer],
        ledger: Ledger | None = None,
        *,
        call_timeout: float | None = None,  # None: each server's own (`timeout`, settings)
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.pool = McpPool(servers, start_timeout=start_timeout)
        self.call_timeout = call_timeout
        admitted = self.pool.admitted
        self._observed = dict(last_observed(ledger, admitted)) if ledger is not None else {}
        self.spec = ToolSpec(
            name="mcp",
            description=mcp_description(admitted, self._observed),
            parameters={
                "type": "object",
                "properties": {
                    "server": {"type": "string", "enum": [s.name for s in admitted]},
                    "tool": {"type": "string", "description": "the server's tool to call"},
                    "arguments": {"type": "object", "description": "the tool's arguments"},
                },
                "required": ["server"],
            },
        )

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        name = arguments.get("server")
        if not isinstance(name, str) or not name.strip():
            servers = ", ".join(s.name for s in self.pool.admitted)
            raise ToolFailure(f"`server` must name one of the MCP servers: {servers}")
        tool = arguments.get("tool")
        if tool is not None and (not isinstance(tool, str) or not tool.strip()):
            raise ToolFailure(f"`tool` must be a tool name, got {tool!r}")
        call_arguments = arguments.get("arguments", {})
        if call_arguments is None:
            call_arguments = {}
        if not isinstance(call_arguments, dict):
            raise ToolFailure(f"`arguments` must be an object, got {call_arguments!r}")
        connection = await self._connect(name.strip(), context)
        if tool is None:
            return ToolOutput(tool_listing(connection.server.name, connection.tools))
        return await self._call(connection, tool.strip(), call_arguments, context)

    async def aclose(self) -> None:
        """Stop every server this tool started."""
        await self.pool.aclose()

    async def _connect(self, name: str, context: ToolContext) -> McpConnection:
        try:
            connection, started = await self.pool.connection(name)
        except (UnknownServer, McpUnavailable) as exc:
            log.info("%s", exc)
            raise ToolFailure(str(exc)) from None
        if started:
            self._record(connection, context)
        return connection

    def _record(self, connection: McpConnection, context: ToolContext) -> None:
        """Write what a freshly started server offers, when it differs from the last record."""
        names = tuple(sorted({t.name for t in connection.tools}))
        server = connection.server
        if self._observed.get(server.name) == names:
            return
        context.ledger.append(context.session, observation(server, names))
        self._observed[server.name] = names  # the description keeps what it said at the start

    async def _call(
        self, connection: McpConnection, tool: str, arguments: dict[str, Any], context: ToolContext
    ) -> ToolOutput:
        server = connection.server.name
        task_only = {t.name for t in connection.tools if t.task_support == "required"}
        if tool in task_only:
            raise ToolFailure(
                f"{server}/{tool} runs only as an MCP task, which this app does not start; "
                "use another of the server's tools"
            )
        offered = sorted(t.name for t in connection.tools if t.name not in task_only)
        if tool not in offered:
            raise ToolFailure(
                f"MCP server {server!r} has no tool {tool!r} (its tools: "
                f"{', '.join(offered) or 'none'})"
            )

        def report(progress: float, total: float | None, message: str | None) -> None:
            if context.progress is None:
                return
            share = f"{progress:g} of {total:g}" if total else f"{progress:g}"
            percent = f" ({100 * progress / total:.0f}%)" if total else ""
            context.progress(
                f"{server}/{tool}: {share}{percent}" + (f" — {message}" if message else "")
            )

        answer_within = self.call_timeout or connection.server.call_timeout
        try:
            result = await connection.call(
                tool,
                arguments,
                answer_within,
                ceiling=max(connection.server.progress_ceiling, answer_within),
                on_progress=report,
            )
        except McpUnavailable as exc:
            log.info("%s", exc)
            await self.pool.discard(connection)
            again = "connects to it" if connection.server.url else "starts it"
            raise ToolFailure(f"{exc}. The next call {again} again.") from None
        except McpCallFailed as exc:
            raise ToolFailure(str(exc)) from None
        text = result_text(result)
        if result.is_error:
            raise ToolFailure(f"{server}/{tool} reported an error: {text}")
        return ToolOutput(text, blobs=result_blobs(result))
