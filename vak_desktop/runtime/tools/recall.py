"""The `recall` tool: any stored tool result, whole or a slice of it, back into the turn.

Every result the model ever saw in a window or a digest is stored whole as an EvidenceBody, and
this is how the model reaches it. The recalled text becomes a result of the current turn and is
carried by the same rule as any other (verbatim up to the limit, else a window under its own id).
"""

from __future__ import annotations

import json
from typing import Any

from vak_desktop.context.evidence.windows import RESULT_LIMIT, select_chars, select_lines
from vak_desktop.context.payloads import (
    AssistantStep,
    Directive,
    EvidenceBody,
    Presentation,
    ToolResult,
)
from vak_desktop.context.planning.turn_cards import full_record
from vak_desktop.context.planning.turns import build_turn_index
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import UnknownEntry
from vak_desktop.runtime.tools.registry import ToolContext, ToolFailure, ToolOutput

RECALL_SPEC = ToolSpec(
    name="recall",
    description=(
        "Bring back anything from earlier in this conversation. {id}: a stored tool result in "
        "full (the id from an [evidence:…] tag), or part of it with `range` [first_line, "
        "last_line] (1-based, inclusive) or `chars` [start, end). {turn: N}: turn N's full "
        "record. {presentation: id}: a card's full payload. At most "
        f"{RESULT_LIMIT:,} characters come back verbatim; longer results come back as a window."
    ),
    parameters={
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "evidence id (at least 6 hex digits)"},
            "range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
            "chars": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
            "turn": {"type": "integer", "description": "a turn number, as cards show it"},
            "presentation": {"type": "string", "description": "a card's id"},
        },
    },
)


def _pair(value: Any, name: str) -> tuple[int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise ToolFailure(f"`{name}` must be two integers, got {value!r}")
    return value[0], value[1]


class RecallTool:
    spec = RECALL_SPEC
    always_loaded = True  # every digest and window names it: it must always be there
    serves = ("memory",)
    pure = True  # the past does not change within a turn

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        if "turn" in arguments:
            return ToolOutput(_turn_record(context, arguments["turn"]))
        if "presentation" in arguments:
            return ToolOutput(_presentation(context, arguments["presentation"]))
        ref = arguments.get("id")
        if not isinstance(ref, str) or not ref.strip():
            raise ToolFailure(
                "recall needs one of `id` (an evidence id), `turn` (a turn number) "
                "or `presentation` (a card id)"
            )
        try:
            entry = context.ledger.find(context.session, ref.strip())
        except UnknownEntry as exc:
            raise ToolFailure(str(exc)) from None
        payload = entry.payload
        if isinstance(payload, ToolResult):  # the model may quote the result's own id
            payload = context.ledger.entry(payload.evidence).payload
        if isinstance(payload, Directive | AssistantStep) and payload.text:  # a passage's id:
            return ToolOutput(payload.text)  # the words of that message whole
        if not isinstance(payload, EvidenceBody):
            raise ToolFailure(f"{ref!r} names a {entry.kind} entry, not stored evidence")
        try:
            if "range" in arguments:
                return ToolOutput(
                    select_lines(payload.content, *_pair(arguments["range"], "range"))
                )
            if "chars" in arguments:
                return ToolOutput(
                    select_chars(payload.content, *_pair(arguments["chars"], "chars"))
                )
        except ValueError as exc:
            raise ToolFailure(str(exc)) from None
        return ToolOutput(payload.content, payload.is_error)


def _turn_record(context: ToolContext, number: Any) -> str:
    """Turn `number`'s full record as text: digests for its results, ids to go deeper, and
    its words' relative times resolved on the day it was said (`full_record`):
    recalled whole, "I just signed up for a pottery class yesterday" was answered
    "yesterday" by the 1.5B (LoCoMo conv-26, issue #22)."""
    if not isinstance(number, int) or isinstance(number, bool):
        raise ToolFailure(f"`turn` must be a turn number, got {number!r}")
    index = build_turn_index(context.ledger.chain_to_root(context.session))
    turn = index.by_number(number)
    if turn is None:
        raise ToolFailure(f"there is no turn {number}; this conversation has {len(index.turns)}")
    lines = [f"Turn {number} ({turn.outcome}), its full record:"]
    for message in full_record(turn, resolve_on=turn.said_at):
        if message.role == "tool":
            lines.append(
                f"[result of {message.tool_name} {message.tool_call_id}]\n{message.content}"
            )
            continue
        calls = " ".join(
            f"[calls {c.name} {json.dumps(c.arguments, ensure_ascii=False)} as {c.id}]"
            for c in message.tool_calls
        )
        lines.append(f"{message.role}: {message.content} {calls}".rstrip())
    return "\n\n".join(lines)


def _presentation(context: ToolContext, ref: Any) -> str:
    if not isinstance(ref, str) or not ref.strip():
        raise ToolFailure(f"`presentation` must be a card id, got {ref!r}")
    try:
        entry = context.ledger.find(context.session, ref.strip())
    except UnknownEntry as exc:
        raise ToolFailure(str(exc)) from None
    if not isinstance(entry.payload, Presentation):
        raise ToolFailure(f"{ref!r} names a {entry.kind} entry, not a card")
    card = entry.payload
    return json.dumps(
        {"type": card.semantic_type, "title": card.title, "payload": card.payload},
        ensure_ascii=False,
        indent=1,
    )
