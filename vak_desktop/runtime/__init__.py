"""The runtime: turns, tools and the services the CLI and the window share. Async, no Qt.

Rooms, top to bottom (a contract in pyproject.toml keeps the order): `evaluation`;
`providers` and `inspection`; `turn`; `capacity` and `tools`; `sessions`; and the modules every
room shares: `presentations` (card entries and their state), `events` (what a turn tells its
observers), `settings` and `lexicons` (the shipped reading lexicons, loaded once). This
module re-exports what the CLI and the window use most.
"""

from pathlib import Path

from vak_desktop.ledger import Ledger
from vak_desktop.runtime.capacity.binding import ModelBinding, bind_model
from vak_desktop.runtime.capacity.probe import ProbeProgress, ProbeRecord, run_probe
from vak_desktop.runtime.capacity.scheduler import ProbePolicy, ProbeScheduler, probing_capacity
from vak_desktop.runtime.capacity.service import CapacityService, capacity_profile_for
from vak_desktop.runtime.sessions.interchange import (
    ConversationFormatError,
    ImportReport,
    export_openai,
    import_openai,
)
from vak_desktop.runtime.sessions.transcripts import (
    SessionSummary,
    presentations_of,
    session_summaries,
    session_turns,
    turn_to_json,
)
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.tools import (
    FindToolsTool,
    SessionSearchTool,
    SkillTool,
    Tool,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    add_workspace_folder,
    file_tools,
    load_skills,
)
from vak_desktop.runtime.tools.cards import add_card_tools
from vak_desktop.runtime.tools.mcp.tool import McpTool
from vak_desktop.runtime.tools.recall import RecallTool
from vak_desktop.runtime.tools.skill import SKILLS_FOLDER
from vak_desktop.runtime.turn.runner import DEFAULT_SYSTEM_PROMPT, TurnRunner


def default_tools(
    settings: Settings | None = None,
    ledger: Ledger | None = None,
    *,
    data_directory: Path | None = None,
    cards: bool = True,
) -> ToolRegistry:
    """The tools every session has: recall, find_tools, read/glob/grep over the workspace
    folders of `settings` (plus each session's own), session_search; `mcp` when the settings
    admit an MCP server (its description names the tools the ledger last saw each server
    offer); `skill` when `<data_directory>/skills` holds any; the card tools. Without arguments: no folders,
    no servers, no skills. The caller closes the registry (`await registry.aclose()`) at
    shutdown, which stops any server a call started."""
    folders = settings.workspace if settings is not None else ()
    tools: list[Tool] = [RecallTool(), FindToolsTool(), *file_tools(folders), SessionSearchTool()]
    if settings is not None and any(s.enabled for s in settings.mcp_servers):
        tools.append(McpTool(settings.mcp_servers, ledger))
    skills = load_skills([data_directory / SKILLS_FOLDER]) if data_directory else ()
    if skills:
        tools.append(SkillTool(skills))
    registry = ToolRegistry(tools)
    # the emit_<type>_card tools: in the catalogue, loaded when the request reads as a card
    return add_card_tools(registry) if cards else registry


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
    "add_card_tools",
    "add_workspace_folder",
    "bind_model",
    "capacity_profile_for",
    "default_tools",
    "export_openai",
    "import_openai",
    "presentations_of",
    "probing_capacity",
    "run_probe",
    "session_summaries",
    "session_turns",
    "turn_to_json",
]
