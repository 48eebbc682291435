"""Splitting a session's chain into turns: one directive and everything until the next one.

A turn is the unit of the context engine (spec principle 3). This module only groups; what a
request carries of each turn is decided elsewhere. It reads entries through a small protocol so
that it stays free of storage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Directive,
    Payload,
    Presentation,
    Receipt,
    Usage,
)

TURN_CLOSED = "turn_closed"  # Activity type written when a turn ends, carrying its outcome
TURN_INTERRUPTED = "turn_interrupted"  # Activity type: the turn never closed (process died)


class EntryLike(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def payload(self) -> Payload: ...


@dataclass(frozen=True)
class TurnRecord:
    """One turn of a chain: its directive entry and the entries that followed it."""

    turn_id: str
    index: int
    directive: Directive
    entries: tuple[EntryLike, ...]  # after the directive, up to the next directive

    @property
    def answer(self) -> str:
        """The prose the user saw: every assistant step's text, in order."""
        texts = [
            e.payload.text
            for e in self.entries
            if isinstance(e.payload, AssistantStep) and e.payload.text
        ]
        return "\n\n".join(texts)

    @property
    def presentations(self) -> list[str]:
        return [e.id for e in self.entries if isinstance(e.payload, Presentation)]

    @property
    def outcome(self) -> str:
        """How the turn ended, as recorded; a turn with no record of ending was interrupted."""
        for entry in reversed(self.entries):
            payload = entry.payload
            if isinstance(payload, Activity) and payload.type == TURN_CLOSED:
                return str(payload.detail.get("outcome", "completed"))
            if isinstance(payload, Activity) and payload.type == TURN_INTERRUPTED:
                return "interrupted"
        return "interrupted"

    @property
    def closed(self) -> bool:
        return any(
            isinstance(e.payload, Activity) and e.payload.type in (TURN_CLOSED, TURN_INTERRUPTED)
            for e in self.entries
        )

    def usage(self) -> Usage:
        """Tokens over every request of the turn."""
        total = Usage()
        for entry in self.entries:
            if isinstance(entry.payload, Receipt):
                total = total.plus(entry.payload.usage)
        return total


def split_turns(chain: Sequence[EntryLike]) -> list[TurnRecord]:
    """The turns of a root-to-head chain, in order. Entries before the first directive are
    session-level (profiles, activities) and belong to no turn."""
    turns: list[TurnRecord] = []
    current: Directive | None = None
    current_id = ""
    following: list[EntryLike] = []
    for entry in chain:
        if isinstance(entry.payload, Directive):
            if current is not None:
                turns.append(TurnRecord(current_id, len(turns), current, tuple(following)))
            current, current_id, following = entry.payload, entry.id, []
        elif current is not None:
            following.append(entry)
    if current is not None:
        turns.append(TurnRecord(current_id, len(turns), current, tuple(following)))
    return turns
