"""Asked-for actions: a directive that asks for an action on the user's things names a tool.

"Search my files for …", "read notes.md", "which files mention …": the user asked for the
action, not for the model's memory of it. When such a step ends without the matching tool call,
the turn rules treat it as a failed explicit instruction (spec §1 feedback, §7): one repair
nudge naming the tool, then a degraded outcome — never an invented result presented as found.
The cue words are data: each lexicon's `actions` (verbs, owners, things, word order), compiled
once into one pattern per rule (`lexicon.Actions`); a directive is read in the languages its
function words name.
"""

from __future__ import annotations

from collections.abc import Sequence

from vak_desktop.context.planning.lexicon import Lexicons
from vak_desktop.context.planning.reading import Reading, reading_for

ACTION_CHECK = "action-check"
# each rule of `lexicon.ACTION_RULES` → the tools that perform it, most fitting first
_TOOLS = {
    "search": ("grep", "glob"),
    "find": ("grep", "glob"),
    "read": ("read",),
    "list": ("glob", "grep"),
}


def requested_tools(
    directive: str | Reading, offered: Sequence[str], lexicons: Lexicons
) -> tuple[str, ...]:
    """The offered tools that perform the action the directive asks for on the user's
    things, most fitting first; () when it asks for none. The rule is found once per reading
    of the directive, whatever tools are offered."""
    read = reading_for(directive, lexicons)
    rule = read.derived("action", lambda: _asked(read))
    return () if rule is None else tuple(t for t in _TOOLS[rule] if t in offered)


def _asked(read: Reading) -> str | None:
    for lexicon in read.read_in:
        rule = lexicon.actions.asked(read.seen.lowered)
        if rule is not None:
            return rule
    return None


def requested_tool(
    directive: str | Reading, offered: Sequence[str], lexicons: Lexicons
) -> str | None:
    """The tool the directive asks to be used on the user's things, if one is offered."""
    return next(iter(requested_tools(directive, offered, lexicons)), None)


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
