"""MCP: the user's configured servers, reached only through the one `mcp` tool.

`connection` holds one server open through the official SDK, `pool` starts servers on first
demand and keeps them, `observed` remembers in the ledger which tools each server offered.
No server is known to the code: every one comes from the user's settings (spec §9).
The `mcp` SDK is imported only when a server is first started (`errors.py` says why).
"""

from typing import Any

from vak_desktop.runtime.tools.mcp.errors import McpCallFailed, McpUnavailable, RemoteTool
from vak_desktop.runtime.tools.mcp.observed import MCP_TOOLS_OBSERVED, last_observed, observation
from vak_desktop.runtime.tools.mcp.pool import McpPool, UnknownServer

__all__ = [
    "MCP_TOOLS_OBSERVED",
    "McpCallFailed",
    "McpConnection",
    "McpPool",
    "McpUnavailable",
    "RemoteTool",
    "UnknownServer",
    "last_observed",
    "observation",
]


def __getattr__(name: str) -> Any:
    """`McpConnection` imports the `mcp` SDK (~0.7 s): only when asked for (errors.py)."""
    if name == "McpConnection":
        from vak_desktop.runtime.tools.mcp.connection import McpConnection

        return McpConnection
    raise AttributeError(name)
