"""The tools a model can call: the registry that runs them, the surface that decides which are
loaded, and each tool in its own module."""

from vak_desktop.runtime.tools.files import GlobTool, GrepTool, ReadTool, file_tools
from vak_desktop.runtime.tools.find_tools import FIND_TOOLS, FindToolsTool
from vak_desktop.runtime.tools.recall import RECALL_SPEC, RecallTool
from vak_desktop.runtime.tools.registry import (
    Tool,
    ToolContext,
    ToolFailure,
    ToolOutput,
    ToolRegistry,
    ToolTraits,
    record_results,
    run_tool_calls,
    traits_of,
)
from vak_desktop.runtime.tools.session_search import SessionSearchTool
from vak_desktop.runtime.tools.skill import Skill, SkillTool, load_skills
from vak_desktop.runtime.tools.surface import ToolSurface, catalogue_text, tool_surface
from vak_desktop.runtime.tools.workspace import (
    WORKSPACE_ADDED,
    Workspace,
    WorkspaceError,
    add_workspace_folder,
)

__all__ = [
    "FIND_TOOLS",
    "RECALL_SPEC",
    "WORKSPACE_ADDED",
    "FindToolsTool",
    "GlobTool",
    "GrepTool",
    "ReadTool",
    "RecallTool",
    "SessionSearchTool",
    "Skill",
    "SkillTool",
    "Tool",
    "ToolContext",
    "ToolFailure",
    "ToolOutput",
    "ToolRegistry",
    "ToolSurface",
    "ToolTraits",
    "Workspace",
    "WorkspaceError",
    "add_workspace_folder",
    "catalogue_text",
    "file_tools",
    "load_skills",
    "record_results",
    "run_tool_calls",
    "tool_surface",
    "traits_of",
]
