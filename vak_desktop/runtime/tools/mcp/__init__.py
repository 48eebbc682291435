"""MCP: the user's configured servers, reached only through the one `mcp` tool.

`connection` holds one server open through the official SDK, `pool` starts servers on first
demand and keeps them, `observed` remembers in the ledger which tools each server offered.
No server is known to the code: every one comes from the user's settings (spec §9).
"""

from vak_desktop.runtime.tools.mcp.connection import (
    McpCallFailed,
    McpConnection,
    McpUnavailable,
    RemoteTool,
)
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
