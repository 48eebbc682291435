"""The runtime: turns, tools and the services the CLI and the window share. Async, no Qt."""

from vak_desktop.runtime.binding import ModelBinding, bind_model
from vak_desktop.runtime.interchange import (
    ConversationFormatError,
    ImportReport,
    export_openai,
    import_openai,
)
from vak_desktop.runtime.recall import RecallTool
from vak_desktop.runtime.tools import Tool, ToolContext, ToolOutput, ToolRegistry
from vak_desktop.runtime.transcripts import (
    SessionSummary,
    session_summaries,
    session_turns,
    turn_to_json,
)
from vak_desktop.runtime.turn import DEFAULT_SYSTEM_PROMPT, TurnRunner


def default_tools() -> ToolRegistry:
    """The tools every session has."""
    return ToolRegistry([RecallTool()])


__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "ConversationFormatError",
    "ImportReport",
    "ModelBinding",
    "RecallTool",
    "SessionSummary",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "ToolRegistry",
    "TurnRunner",
    "bind_model",
    "default_tools",
    "export_openai",
    "import_openai",
    "session_summaries",
    "session_turns",
    "turn_to_json",
]
