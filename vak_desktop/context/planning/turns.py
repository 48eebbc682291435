"""The TurnIndex: a session's chain seen as turns, the unit of the context engine.

A turn is one user directive and everything until the next directive: assistant steps, tool
exchanges, nudges, receipts, its TurnCard. Entries before the first directive are session-level
(profiles, activities) and belong to no turn. Compaction entries are collected as stored packets
keyed by their turn range; a Reset makes every turn before it `behind_reset` (never planned,
still reachable through `recall({turn})`). This module only groups; what a request carries of
each turn is decided by the planner. It reads entries through a small protocol, free of storage.

A running session asks for its index on every request, so an index is *advanced* rather than
rebuilt: `advance_turn_index(index, chain)` reads only the entries past the ones it indexed, keeps
every turn before the last one as the same object (a turn is frozen once a directive follows
it), and hands on what was derived from those turns (`memo`: the card index). Entry ids are
content addresses over their parent (the ledger's chain), so one id, the indexed head, names the
whole prefix: a chain that does not continue it (another session, another branch) is indexed
from scratch.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

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
    said_at: str = ""  # when the directive was said (ISO-8601): its source time, else written

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
    head: str | None = None  # the id of the last entry indexed (None: not built from a chain)
    length: int = 0  # how many entries of the chain are indexed
    reset_before: int = 0  # turns with index < this are behind the latest reset
    # what is derived from the frozen turns (every turn but the last), handed on when the index
    # is advanced (`inherited`): `card_index.py` keeps its per-turn material here
    memo: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def by_number(self, number: int) -> Turn | None:
        return self.turns[number - 1] if 1 <= number <= len(self.turns) else None

    def by_id(self, turn_id: str) -> Turn | None:
        return self.by_turn_id.get(turn_id)

    @functools.cached_property
    def by_turn_id(self) -> dict[str, Turn]:
        """Every turn by its directive's entry id (built once per index: plans ask per turn)."""
        return {t.turn_id: t for t in self.turns}

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


EMPTY_INDEX = TurnIndex(())
LINEAGE = "lineage"  # memo key: what the index this one was advanced from had derived


def build_turn_index(chain: Sequence[EntryLike]) -> TurnIndex:
    """The TurnIndex of a root-to-head chain."""
    return advance_turn_index(EMPTY_INDEX, chain)


def continues(index: TurnIndex, chain: Sequence[EntryLike]) -> bool:
    """`chain` is the chain `index` was built from, possibly with entries appended."""
    if index.length == 0:  # nothing indexed yet: only an empty index continues into any chain
        return not (index.turns or index.packets or index.reset or index.head)
    return len(chain) >= index.length and chain[index.length - 1].id == index.head


def advance_turn_index(index: TurnIndex, chain: Sequence[EntryLike]) -> TurnIndex:
    """The TurnIndex of `chain`, reading only the entries past those `index` already holds when
    the chain continues it (else every entry). The turns before the last keep their objects,
    and so what was derived from them; the last (open) turn is regrouped with its new entries."""
    if not continues(index, chain):
        index = EMPTY_INDEX
    elif index.length and len(chain) == index.length:
        return index  # nothing new
    turns = list(index.turns)
    packets = list(index.packets)
    reset, reset_before = index.reset, index.reset_before
    current: Directive | None = None
    current_id, said_at, following = "", "", []
    kept = len(turns)  # the turns carried over unchanged
    if turns:  # the last turn is open to the new entries: regroup it
        last = turns.pop()
        current, current_id, following = last.directive, last.turn_id, list(last.entries)
        said_at = last.said_at
        kept -= 1
    for entry in chain[index.length :]:
        payload = entry.payload
        if isinstance(payload, Directive):
            if current is not None:
                turns.append(
                    Turn(current_id, len(turns), current, tuple(following), False, said_at)
                )
            current, current_id, following = payload, entry.id, []
            said_at = payload.said_at or getattr(entry, "created_at", "")
            continue
        if isinstance(payload, Compaction):
            packets.append(StoredPacket(entry.id, payload))
        elif isinstance(payload, Reset):
            reset = payload
            reset_before = len(turns) + (1 if current is not None else 0)
        if current is not None:
            following.append(entry)
    if current is not None:
        turns.append(Turn(current_id, len(turns), current, tuple(following), False, said_at))
    if reset_before > index.reset_before:  # turns newly behind the reset are flagged anew
        kept = min(kept, index.reset_before)
    turns[kept:] = [
        Turn(t.turn_id, t.index, t.directive, t.entries, t.index < reset_before, t.said_at)
        if t.behind_reset != (t.index < reset_before)
        else t
        for t in turns[kept:]
    ]
    advanced = TurnIndex(
        tuple(turns),
        tuple(packets),
        reset,
        head=chain[-1].id if chain else None,
        length=len(chain),
        reset_before=reset_before,
    )
    advanced.memo[LINEAGE] = inherited(index, kept)
    by_turn_id = index.__dict__.get("by_turn_id")
    if by_turn_id is not None:  # the map of the turns kept, and the new ones
        by_turn_id = dict(by_turn_id)
        by_turn_id.update((t.turn_id, t) for t in advanced.turns[kept:])
        advanced.__dict__["by_turn_id"] = by_turn_id
    return advanced


def inherited(index: TurnIndex, kept: int) -> dict[str, tuple[Any, int]]:
    """What an index advanced from `index` may reuse: each memo value derived by `index` or
    handed to it, with how many leading turns are still the same objects (one value per key,
    so a long-running session holds one generation back, not every one)."""
    lineage = {key: (value, kept) for key, value in index.memo.items() if key != LINEAGE}
    for key, (value, held) in index.memo.get(LINEAGE, {}).items():
        lineage.setdefault(key, (value, min(held, kept)))
    return lineage


def split_turns(chain: Sequence[EntryLike]) -> list[Turn]:
    """The turns of a root-to-head chain, in order."""
    return list(build_turn_index(chain).turns)
