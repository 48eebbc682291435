"""The tools every session starts with (`default_tools`), from the settings and the data dir."""

from __future__ import annotations

from pathlib import Path

from vak_desktop.ledger import Ledger
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.tools.cards import add_card_tools
from vak_desktop.runtime.tools.files import file_tools
from vak_desktop.runtime.tools.find_tools import FindToolsTool
from vak_desktop.runtime.tools.mcp.tool import McpTool
from vak_desktop.runtime.tools.recall import RecallTool
from vak_desktop.runtime.tools.registry import Tool, ToolRegistry
from vak_desktop.runtime.tools.session_search import SessionSearchTool
from vak_desktop.runtime.tools.skill import SKILLS_FOLDER, SkillTool, load_skills


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
