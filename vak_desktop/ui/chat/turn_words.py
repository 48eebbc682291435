"""What a turn's records say under its answer: why the turn closed as it did, and whether its
answer stopped at a limit. Read from the ledger, so a turn shown live (at its end) and the same
turn read back later say the same words.
"""

from __future__ import annotations

from vak_desktop.context.capacity.feedback import OUTPUT_LIMIT
from vak_desktop.context.payloads import Activity, AssistantStep
from vak_desktop.context.planning.turns import TURN_CLOSED, Turn


def answer_notice(turn: Turn) -> str:
    """What the answer's end needs said, from the turn's records: the last step stopped at the
    output limit (an `output_limit` Activity, the runtime's words) — '' when nothing."""
    for entry in reversed(turn.entries):
        payload = entry.payload
        if isinstance(payload, Activity) and payload.type == OUTPUT_LIMIT:
            return payload.message
        if isinstance(payload, AssistantStep):
            return ""  # a later step went on: the cut was inside the tool loop
    return ""


def closing_message(turn: Turn) -> str:
    """The message of the turn's closing Activity (why it failed, …), if any."""
    for entry in reversed(turn.entries):
        payload = entry.payload
        if isinstance(payload, Activity) and payload.type == TURN_CLOSED:
            return payload.message
    return ""
