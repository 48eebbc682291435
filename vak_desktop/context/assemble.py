"""Building the provider-neutral request from a session's chain.

This is the foundation's assembler: the stable prefix (system prompt, tool schemas) and every
turn of the chain at full fidelity. The working-set planner replaces "every turn" with a plan
against the bound model's measured capacity; the rendering rules here stay.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import blake3

from vak_desktop.context.payloads import AssistantStep, Directive, Nudge, ToolResult
from vak_desktop.context.request import Message, ToolSpec
from vak_desktop.context.turns import EntryLike, split_turns

NOT_RUN = "[not run: the turn stopped before this tool call was executed]"


def prefix_digest(system: str, tools: Sequence[ToolSpec]) -> str:
    """blake3 over the bytes that must stay identical across turns for the prefix cache to hit."""
    stable = json.dumps(
        {
            "system": system,
            "tools": [[t.name, t.description, t.parameters] for t in tools],
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "b3:" + blake3.blake3(stable.encode("utf-8")).hexdigest()


def _turn_messages(
    directive: Directive, entries: Sequence[EntryLike], current: bool
) -> list[Message]:
    messages = [Message(role="user", content=directive.text, images=directive.images)]
    pending: dict[str, str] = {}  # tool call id -> tool name, awaiting its result

    def close_pending() -> None:
        for call_id, name in pending.items():
            messages.append(
                Message(role="tool", content=NOT_RUN, tool_call_id=call_id, tool_name=name)
            )
        pending.clear()

    for entry in entries:
        payload = entry.payload
        if isinstance(payload, AssistantStep):
            close_pending()
            if not (payload.text or payload.tool_calls or (current and payload.thinking)):
                continue
            messages.append(
                Message(
                    role="assistant",
                    content=payload.text,
                    thinking=payload.thinking if current else "",
                    tool_calls=payload.tool_calls,
                )
            )
            pending.update((c.id, c.name) for c in payload.tool_calls)
        elif isinstance(payload, ToolResult):
            pending.pop(payload.tool_call_id, None)
            messages.append(
                Message(
                    role="tool",
                    content=payload.content,
                    tool_call_id=payload.tool_call_id,
                    tool_name=payload.tool_name,
                )
            )
        elif isinstance(payload, Nudge):
            close_pending()
            messages.append(Message(role="user", content=payload.text))
    if not current:
        close_pending()
    return messages


def full_history(chain: Sequence[EntryLike], system: str) -> tuple[Message, ...]:
    """The system message, then every turn whole: past turns without thinking, the current
    (last) turn exactly as it stands, so that within a turn each request extends the last."""
    turns = split_turns(chain)
    messages = [Message(role="system", content=system)] if system else []
    for turn in turns:
        current = turn.index == len(turns) - 1
        messages.extend(_turn_messages(turn.directive, turn.entries, current))
    return tuple(messages)
