"""The runtime: turns, tools and the services the CLI and the window share. Async, no Qt.

Rooms, top to bottom (a contract in pyproject.toml keeps the order): `evaluation`;
`providers` and `inspection`; `turn`; `capacity` and `tools`; `sessions`; and the modules every
room shares: `presentations` (card entries and their state), `events` (what a turn tells its
observers), `settings` and `lexicons` (the shipped reading lexicons, loaded once). This
module re-exports what the CLI and the window use most.

The names are imported on first use (`__getattr__`): importing one module of a room — the
settings, say — does not import every room, which keeps the window's cold start short.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vak_desktop.lazy_exports import lazy_exports

if TYPE_CHECKING:
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
    from vak_desktop.runtime.tools import (
        Tool,
        ToolContext,
        ToolOutput,
        ToolRegistry,
        add_workspace_folder,
    )
    from vak_desktop.runtime.tools.cards import add_card_tools
    from vak_desktop.runtime.tools.defaults import default_tools
    from vak_desktop.runtime.tools.recall import RecallTool
    from vak_desktop.runtime.turn.runner import DEFAULT_SYSTEM_PROMPT, TurnRunner

_WHERE = {
    "ModelBinding": "vak_desktop.runtime.capacity.binding",
    "bind_model": "vak_desktop.runtime.capacity.binding",
    "ProbeProgress": "vak_desktop.runtime.capacity.probe",
    "ProbeRecord": "vak_desktop.runtime.capacity.probe",
    "run_probe": "vak_desktop.runtime.capacity.probe",
    "ProbePolicy": "vak_desktop.runtime.capacity.scheduler",
    "ProbeScheduler": "vak_desktop.runtime.capacity.scheduler",
    "probing_capacity": "vak_desktop.runtime.capacity.scheduler",
    "CapacityService": "vak_desktop.runtime.capacity.service",
    "capacity_profile_for": "vak_desktop.runtime.capacity.service",
    "ConversationFormatError": "vak_desktop.runtime.sessions.interchange",
    "ImportReport": "vak_desktop.runtime.sessions.interchange",
    "export_openai": "vak_desktop.runtime.sessions.interchange",
    "import_openai": "vak_desktop.runtime.sessions.interchange",
    "SessionSummary": "vak_desktop.runtime.sessions.transcripts",
    "presentations_of": "vak_desktop.runtime.sessions.transcripts",
    "session_summaries": "vak_desktop.runtime.sessions.transcripts",
    "session_turns": "vak_desktop.runtime.sessions.transcripts",
    "turn_to_json": "vak_desktop.runtime.sessions.transcripts",
    "Tool": "vak_desktop.runtime.tools",
    "ToolContext": "vak_desktop.runtime.tools",
    "ToolOutput": "vak_desktop.runtime.tools",
    "ToolRegistry": "vak_desktop.runtime.tools",
    "add_workspace_folder": "vak_desktop.runtime.tools",
    "add_card_tools": "vak_desktop.runtime.tools.cards",
    "default_tools": "vak_desktop.runtime.tools.defaults",
    "RecallTool": "vak_desktop.runtime.tools.recall",
    "DEFAULT_SYSTEM_PROMPT": "vak_desktop.runtime.turn.runner",
    "TurnRunner": "vak_desktop.runtime.turn.runner",
}


__getattr__ = lazy_exports(__name__, _WHERE, globals())


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
