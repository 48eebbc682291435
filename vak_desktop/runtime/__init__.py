"""The runtime: turns, tools and the services the CLI and the window share. Async, no Qt."""

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
from vak_desktop.runtime.tools import Tool, ToolContext, ToolOutput, ToolRegistry
from vak_desktop.runtime.tools.cards import add_card_tools
from vak_desktop.runtime.tools.recall import RecallTool
from vak_desktop.runtime.transcripts import (
    SessionSummary,
    session_summaries,
    session_turns,
    turn_to_json,
)
from vak_desktop.runtime.turn import DEFAULT_SYSTEM_PROMPT, TurnRunner


def default_tools() -> ToolRegistry:
    """The tools every session has. The card tools (`add_card_tools`) join them once the tool
    surface loads them only when a request reads as wanting a card: offered to every request
    they would cost ~5k characters of prefix (see ARCHITECTURE.md, "Presentations")."""
    return ToolRegistry([RecallTool()])


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
