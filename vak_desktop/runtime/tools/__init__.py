"""The tools a model can call: the registry that runs them, and each tool in its own module."""

from vak_desktop.runtime.tools.recall import RECALL_SPEC, RecallTool
from vak_desktop.runtime.tools.registry import (
    Tool,
    ToolContext,
    ToolFailure,
    ToolOutput,
    ToolRegistry,
    run_tool_calls,
)

__all__ = [
    "RECALL_SPEC",
    "RecallTool",
    "Tool",
    "ToolContext",
    "ToolFailure",
    "ToolOutput",
    "ToolRegistry",
    "run_tool_calls",
]
