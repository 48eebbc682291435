"""The runtime: turns, tools and the services the CLI and the window share. Async, no Qt."""

from vak_desktop.ledger import Ledger
from vak_desktop.runtime.binding import ModelBinding, bind_model
from vak_desktop.runtime.capacity import CapacityService, capacity_profile_for
from vak_desktop.runtime.interchange import (
    ConversationFormatError,
    ImportReport,
    export_openai,
    import_openai,
)
from vak_desktop.runtime.probe import ProbeProgress, ProbeRecord, run_probe
from vak_desktop.runtime.scheduler import ProbePolicy, ProbeScheduler, probing_capacity
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.tools import Tool, ToolContext, ToolOutput, ToolRegistry
from vak_desktop.runtime.tools.mcp import McpTool
from vak_desktop.runtime.tools.recall import RecallTool
from vak_desktop.runtime.transcripts import (
    SessionSummary,
    session_summaries,
    session_turns,
    turn_to_json,
)
from vak_desktop.runtime.turn import DEFAULT_SYSTEM_PROMPT, TurnRunner


def default_tools(settings: Settings | None = None, ledger: Ledger | None = None) -> ToolRegistry:
    """The tools every session has; `mcp` when the settings admit an MCP server (its
    description names the tools the ledger last saw each server offer). The caller closes the
    registry (`await registry.aclose()`) at shutdown, which stops any server a call started."""
    tools: list[Tool] = [RecallTool()]
    if settings is not None and any(s.enabled for s in settings.mcp_servers):
        tools.append(McpTool(settings.mcp_servers, ledger))
    return ToolRegistry(tools)


__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "CapacityService",
    "ConversationFormatError",
    "ImportReport",
    "ModelBinding",
    "ProbePolicy",
    "ProbeProgress",
    "ProbeRecord",
    "ProbeScheduler",
    "RecallTool",
    "SessionSummary",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "ToolRegistry",
    "TurnRunner",
    "bind_model",
    "capacity_profile_for",
    "default_tools",
    "export_openai",
    "import_openai",
    "probing_capacity",
    "run_probe",
    "session_summaries",
    "session_turns",
    "turn_to_json",
]
