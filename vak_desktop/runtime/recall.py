"""The `recall` tool: any stored tool result, whole or a slice of it, back into the turn.

Every result the model ever saw in a window or a digest is stored whole as an EvidenceBody, and
this is how the model reaches it. The recalled text becomes a result of the current turn and is
carried by the same rule as any other (verbatim up to the limit, else a window under its own id).
"""

from __future__ import annotations

from typing import Any

from vak_desktop.context.evidence import RESULT_LIMIT, select_chars, select_lines
from vak_desktop.context.payloads import EvidenceBody, ToolResult
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import UnknownEntry
from vak_desktop.runtime.tools import ToolContext, ToolFailure, ToolOutput

RECALL_SPEC = ToolSpec(
    name="recall",
    description=(
        "Return a stored tool result in full, or part of it. Use the id from an "
        "[evidence:…] tag or a recall(...) note. `range` is [first_line, last_line] (1-based, "
        "inclusive); `chars` is [start, end) in characters. At most "
        f"{RESULT_LIMIT:,} characters come back verbatim; longer results come back as a window."
    ),
    parameters={
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "evidence id (at least 6 hex digits)"},
            "range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
            "chars": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
        },
        "required": ["id"],
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

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        ref = arguments.get("id")
        if not isinstance(ref, str) or not ref.strip():
            raise ToolFailure("recall needs an `id` (the evidence id from an [evidence:…] tag)")
        try:
            entry = context.ledger.find(context.session, ref.strip())
        except UnknownEntry as exc:
            raise ToolFailure(str(exc)) from None
        payload = entry.payload
        if isinstance(payload, ToolResult):  # the model may quote the result's own id
            payload = context.ledger.entry(payload.evidence).payload
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
