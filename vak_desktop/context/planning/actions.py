"""Asked-for actions: a directive that asks for an action on the user's things names a tool.

"Search my files for …", "read notes.md", "which files mention …": the user asked for the
action, not for the model's memory of it. When such a step ends without the matching tool call,
the turn rules treat it as a failed explicit instruction (spec §1 feedback, §7): one repair
nudge naming the tool, then a degraded outcome — never an invented result presented as found.
The cue words are a small list kept here, in one place, so the reading's lexicons (issue #16)
can take them over as data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

ACTION_CHECK = "action-check"
_OBJECT = r"(my|the|our|these|those|this)\s+(\w+\s+)?(files?|folders?|notes|documents?|docs|code|project|repo|repository|workspace|logs?)"
# (pattern, the tools that perform it, most fitting first)
_ACTIONS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(rf"\b(search|grep|look\s+through|scan)\b.*\b{_OBJECT}\b", re.I), ("grep", "glob")),
    (re.compile(rf"\b(find|look\s+for|look\s+up)\b.*\bin\s+{_OBJECT}\b", re.I), ("grep", "glob")),
    (re.compile(rf"\b(read|open)\b\s+({_OBJECT}|\S+\.\w{{1,5}}\b)", re.I), ("read",)),
    (re.compile(rf"\b(list|which)\b.*\b{_OBJECT}\b", re.I), ("glob", "grep")),
)


def requested_tools(directive: str, offered: Sequence[str]) -> tuple[str, ...]:
    """The offered tools that perform the action the directive asks for on the user's
    things, most fitting first; () when it asks for none."""
    for pattern, tools in _ACTIONS:
        if pattern.search(directive):
            return tuple(t for t in tools if t in offered)
    return ()


def requested_tool(directive: str, offered: Sequence[str]) -> str | None:
    """The tool the directive asks to be used on the user's things, if one is offered."""
    return next(iter(requested_tools(directive, offered)), None)


def action_nudge(tool: str, directive: str) -> str:
    short = " ".join(directive.split())[:120]
    return (
        f"[{ACTION_CHECK}] The request (“{short}”) asks you to act on the user's things, and "
        f"nothing in this turn has done it yet. Call the `{tool}` tool now; do not report a "
        "result that no tool call produced."
    )


def action_statement(tool: str) -> str:
    return (
        f"The model answered without calling `{tool}`, so nothing was actually searched or "
        "read and no result is shown. Ask again, or try another model."
    )
