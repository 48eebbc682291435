"""What each MCP server offered when it was last started, kept in the ledger.

The `mcp` tool's description names every admitted server with the tools it last showed, and
that description is part of the stable prefix, so a fresh process must be able to write it
without starting anything. The observation is stored as an `mcp_tools_observed` Activity in
the session whose call started the server, and read back across sessions with
`entries_of_kind`. Why the ledger and not a cache file beside it: the observation is a fact
about what the model was told, so it belongs with the rest of the record (hash-chained, shown
in the session's provenance, copied with the ledger); a cache file would be a second store
whose loss silently changes the prompt. An Activity is never model-visible, so writing one in
the middle of a turn changes no request.

An observation is matched to a server by its name *and* its target (command line or URL):
pointing a name at another program forgets what the old one offered. The environment is not
recorded; it may hold tokens.
"""

from __future__ import annotations

from collections.abc import Iterable

from vak_desktop.context.payloads import Activity
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.settings import McpServer

MCP_TOOLS_OBSERVED = "mcp_tools_observed"


def server_target(server: McpServer) -> str:
    """What the server is: its URL, or its command line."""
    return server.url or " ".join(server.command)


def observation(server: McpServer, tool_names: Iterable[str]) -> Activity:
    names = sorted(set(tool_names))
    return Activity(
        type=MCP_TOOLS_OBSERVED,
        message=f"MCP server {server.name!r} offers {len(names)} tools: {', '.join(names)}",
        detail={"server": server.name, "target": server_target(server), "tools": names},
    )


def last_observed(ledger: Ledger, servers: Iterable[McpServer]) -> dict[str, tuple[str, ...]]:
    """For each server that was ever observed, the tool names its newest observation lists."""
    wanted = {s.name: server_target(s) for s in servers}
    found: dict[str, tuple[str, ...]] = {}
    for entry in ledger.entries_of_kind(Activity.KIND):  # append order: later wins
        payload = entry.payload
        if not isinstance(payload, Activity) or payload.type != MCP_TOOLS_OBSERVED:
            continue
        name = payload.detail.get("server")
        tools = payload.detail.get("tools")
        if (
            isinstance(name, str)
            and wanted.get(name) == payload.detail.get("target")
            and isinstance(tools, list)
        ):
            found[name] = tuple(str(t) for t in tools)
    return found
