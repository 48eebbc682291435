"""The TurnIndex: a session's chain seen as turns, the unit of the context engine.

A turn is one user directive and everything until the next directive: assistant steps, tool
exchanges, nudges, receipts, its TurnCard. Entries before the first directive are session-level
(profiles, activities) and belong to no turn. Compaction entries are collected as stored packets
keyed by their turn range; a Reset makes every turn before it `behind_reset` (never planned,
still reachable through `recall({turn})`). This module only groups; what a request carries of
each turn is decided by the planner. It reads entries through a small protocol, free of storage.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Compaction,
    Directive,
    EvidenceBody,
    Payload,
    Presentation,
    Receipt,
    Reset,
    TurnCard,
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
class StoredPacket:
    """A Compaction entry: the summary of turns first..last (inclusive), by entry id."""

    entry_id: str
    packet: Compaction


@dataclass(frozen=True)
class Turn:
    """One turn of a chain: its directive entry and the entries that followed it."""

    turn_id: str
    index: int  # 0-based position among the chain's turns; the model sees `index + 1`
    directive: Directive
    entries: tuple[EntryLike, ...]  # after the directive, up to the next directive
    behind_reset: bool = False

    @property
    def number(self) -> int:
        """The turn number the model and the user see (1-based)."""
        return self.index + 1

    @functools.cached_property
    def card(self) -> TurnCard | None:
        """The turn's TurnCard, if it closed with one (read once: every plan asks)."""
        for entry in reversed(self.entries):
            if isinstance(entry.payload, TurnCard):
                return entry.payload
        return None

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
    def evidence(self) -> list[str]:
        """Entry ids of every tool result stored in this turn."""
        return [e.id for e in self.entries if isinstance(e.payload, EvidenceBody)]

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


@dataclass(frozen=True)
class TurnIndex:
    """Every turn of a chain, the stored packets and the latest reset."""

    turns: tuple[Turn, ...]
    packets: tuple[StoredPacket, ...] = ()
    reset: Reset | None = None

    def by_number(self, number: int) -> Turn | None:
        return self.turns[number - 1] if 1 <= number <= len(self.turns) else None

    def by_id(self, turn_id: str) -> Turn | None:
        return next((t for t in self.turns if t.turn_id == turn_id), None)

    def packet_for(self, first_turn_id: str, last_turn_id: str) -> StoredPacket | None:
        """The newest stored packet for exactly this range, if any."""
        for stored in reversed(self.packets):
            p = stored.packet
            if p.first_turn_id == first_turn_id and p.last_turn_id == last_turn_id:
                return stored
        return None

    def longest_packet_from(self, first_turn_id: str) -> StoredPacket | None:
        """The stored packet over the most turns that starts at `first_turn_id` (a seed for
        growing a packet without summarising its turns again)."""
        position = {t.turn_id: t.index for t in self.turns}
        best: StoredPacket | None = None
        for stored in self.packets:
            p = stored.packet
            if p.first_turn_id != first_turn_id or p.last_turn_id not in position:
                continue
            if best is None or position[p.last_turn_id] > position[best.packet.last_turn_id]:
                best = stored
        return best


def build_turn_index(chain: Sequence[EntryLike]) -> TurnIndex:
    """The TurnIndex of a root-to-head chain."""
    turns: list[Turn] = []
    packets: list[StoredPacket] = []
    reset: Reset | None = None
    reset_before = 0  # turns with index < this are behind the latest reset
    current: Directive | None = None
    current_id = ""
    following: list[EntryLike] = []
    for entry in chain:
        payload = entry.payload
        if isinstance(payload, Directive):
            if current is not None:
                turns.append(Turn(current_id, len(turns), current, tuple(following)))
            current, current_id, following = payload, entry.id, []
            continue
        if isinstance(payload, Compaction):
            packets.append(StoredPacket(entry.id, payload))
        elif isinstance(payload, Reset):
            reset = payload
            reset_before = len(turns) + (1 if current is not None else 0)
        if current is not None:
            following.append(entry)
    if current is not None:
        turns.append(Turn(current_id, len(turns), current, tuple(following)))
    if reset_before:
        turns = [
            Turn(t.turn_id, t.index, t.directive, t.entries, behind_reset=t.index < reset_before)
            for t in turns
        ]
    return TurnIndex(tuple(turns), tuple(packets), reset)


def split_turns(chain: Sequence[EntryLike]) -> list[Turn]:
    """The turns of a root-to-head chain, in order."""
    return list(build_turn_index(chain).turns)
