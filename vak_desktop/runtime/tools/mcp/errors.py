"""What the MCP room says without the SDK: its two failures and a listed tool.

Kept apart from `connection.py` so that importing the `mcp` tool (every start of the app and of
`vak` does) does not import the `mcp` SDK, which costs ~0.7 s; the SDK is imported when a server
is first started (`pool.McpPool.connection`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class McpUnavailable(Exception):
    """The server could not be started or reached, or it went away; the message says which."""


class McpCallFailed(Exception):
    """The server is up, but this call produced no result (timeout, unknown tool, bad input)."""


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server listed it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    task_support: str = "forbidden"  # MCP `execution.taskSupport`: forbidden, optional, required
