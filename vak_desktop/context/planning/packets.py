"""Compaction packets: how turns outside the working set are still present in a request.

A packet is a *cache*, keyed by the inclusive turn range it summarises; the ledger stays the
original. What the request carries of it is deterministic and needs no model call: the stored
summary when one was written (else a line saying none was), the cards of the covered turns that
match the directive best, first and in full as far as the budget allows, the rest one line each
(dated, with their evidence ids) or, when not all of those fit, a line for each stretch of them
(its range, its day, the words that mark it: `topics.py`; the turns of it shown elsewhere are
named once, below) and as many turn lines as still fit,
with the evidence ids of the newest of them — only when not even the stretches fit are the
turns named by number — and always last how to `recall` any turn. So the first answer never waits on a summariser: the model-written summary
is a background refinement (spec §4, §10), used once it is stored.

A turn of the range the plan carries whole or as a card elsewhere in the request (a retrieved
older turn) is not listed again: every turn is in exactly one fidelity.

The summariser's own request is built here too, as a purpose-built packet (spec §10 "side
calls"): the longest stored packet over the same first turn as a seed, plus only the cards of
the newly covered turns — never the turn's own request.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, overload

from vak_desktop.context.evidence.windows import short_ref
from vak_desktop.context.payloads import Compaction, ToolResult, TurnCard
from vak_desktop.context.planning.dates import said_on
from vak_desktop.context.planning.topics import TOPICS_HEADER, Topic
from vak_desktop.context.planning.turn_cards import render_card, turn_numbers
from vak_desktop.context.planning.turns import Turn
from vak_desktop.context.request import Message

T = TypeVar("T")

SUMMARY_PENDING = (
    "No summary has been written for these turns yet; they are listed from their cards."
)
FEATURED_HEADER = "The covered turns closest to the request, as cards:"
LISTED_HEADER = "The other covered turns, one line each:"
PARTLY_LISTED_HEADER = "Some of the other covered turns, one line each:"
EVIDENCE_NAMED, EVIDENCE_SCAN = 8, 64  # evidence ids a bare packet names, from its newest turns
SUMMARISER_SYSTEM = (
    "You write the running summary of an earlier part of a conversation between a user and an "
    "assistant, for the assistant to read later. Keep every fact, name, number, decision and "
    "open question; drop pleasantries. Write plain prose in the third person, no preamble."
)


def listing_line(turn: Turn, card: TurnCard) -> str:
    """One covered turn as a detailed packet lists it: what was asked, its evidence ids."""
    evidence = ", ".join(
        f"{short_ref(t.evidence)} ({t.tool}, {t.result_shape})" for t in card.did if t.evidence
    )
    day = said_on(card.said_at or turn.said_at)
    line = (
        f"- Turn {turn.number} ({day}): {card.asked}"
        if day
        else f"- Turn {turn.number}: {card.asked}"
    )
    return f"{line} — evidence: {evidence}" if evidence else line


def _evidence_named(rest: Sequence[tuple[Turn, TurnCard]]) -> str:
    """The evidence ids of the newest turns of `rest`, `EVIDENCE_NAMED` at most (read from
    the last `EVIDENCE_SCAN` turns only, so a packet of 10,000 turns reads a few), and how many
    turns the rest of the range still has: a packet always names its evidence ids."""
    named: list[str] = []
    # newest first, each turn read where it is, not a copy of the last EVIDENCE_SCAN: most
    # packets have named their ids within a few turns
    for at in range(len(rest) - 1, max(len(rest) - EVIDENCE_SCAN, 0) - 1, -1):
        turn = rest[at][0]
        for entry in reversed(turn.entries):
            payload = entry.payload
            if isinstance(payload, ToolResult) and payload.evidence:
                ref = f"{short_ref(payload.evidence)} ({payload.tool_name}, turn {turn.number})"
                named.append(ref)
        if len(named) >= EVIDENCE_NAMED:
            break
    return ", ".join(named[:EVIDENCE_NAMED])


def render_handoff(handoff: str) -> str:
    """What a request carries of the turns behind a reset: the handoff written with it."""
    return f"<handoff>{handoff}</handoff>"


@dataclass(frozen=True)
class PacketShape:
    """What the request shows of the turns in the packet: `featured` (turn ids, best match
    first) as whole cards, the rest as one line each when `detailed`, else the `listed` ones
    one line each and the others by stretch (`topics`), or by range where no stretch covers
    them."""

    featured: tuple[str, ...] = ()
    detailed: bool = False
    listed: tuple[str, ...] = ()  # when not `detailed`: the turn ids that still get their line
    topics: tuple[Topic, ...] = ()  # when not `detailed`: the stretches the others are named by


def number_ranges(numbers: Sequence[int]) -> str:
    """Sorted turn numbers as runs: "1–2, 4–40"."""
    return _runs(len(numbers), numbers.__getitem__)


def _runs(size: int, number: Callable[[int], int]) -> str:
    """The increasing numbers `number(0) … number(size − 1)` as runs. A run is where `number(k)
    − k` holds still (it never falls for increasing numbers), so each run's end is found by
    galloping and bisection: thousands of packeted turns with a few retrieved are a few runs,
    and only numbers near their ends are read."""
    runs: list[tuple[int, int]] = []
    start = 0
    while start < size:
        end = _stretch_end(start, size, lambda k: number(k) - k)
        runs.append((number(start), number(end - 1)))
        start = end
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in runs)


def _stretch_end(start: int, size: int, key: Callable[[int], int]) -> int:
    """The first position after `start` where the non-decreasing `key` changes (or `size`):
    doubling steps, then a bisection within the last one (a short stretch costs a few reads)."""
    value, step, low = key(start), 1, start + 1
    while low < size and key(low) == value:
        low, step = low + step, step * 2
    high = min(low, size)
    low = max(start + 1, low - step // 2)
    return bisect.bisect_right(range(size), value, lo=low, hi=high, key=key)


def topic_line(topic: Topic) -> str:
    """One stretch of the packet's range: "- Turns 1–14 (20 Jan 2023): dance, Paris"."""
    numbers = (
        str(topic.first + 1) if topic.last == topic.first else f"{topic.first + 1}–{topic.last + 1}"
    )
    day = f" ({topic.day})" if topic.day else ""
    words = f": {topic.words}" if topic.words else ""
    return f"- Turns {numbers}{day}{words}"


def number_runs(numbers: Sequence[int]) -> str:
    """Increasing numbers as runs ("3–7, 9"), read one by one (for a few hundred)."""
    runs: list[tuple[int, int]] = []
    for n in numbers:
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in runs)


def _complement(span: Sequence[Turn], outside: Sequence[int]) -> str:
    """The numbers of the turns of `span` (consecutive) at no position of `outside`, as runs."""
    runs: list[tuple[int, int]] = []
    first, expected = span[0].number, 0
    for position in [*outside, len(span)]:
        if position > expected:
            runs.append((first + expected, first + position - 1))
        expected = position + 1
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in runs)


def _shown_elsewhere(span: Sequence[Turn], packeted: Sequence[tuple[Turn, TurnCard]]) -> str:
    """The numbers of the turns of `span` that `packeted` (in span order) leaves out, as runs:
    the gaps between stretches of consecutive packeted turns, each stretch found by bisection
    when the span is a run of consecutive turns (as a packet's range is)."""
    first, last = span[0].index, span[-1].index
    if last - first != len(span) - 1:
        inside = {t.index for t, _ in packeted}
        return number_ranges([t.index + 1 for t in span if t.index not in inside])

    def skipped(k: int) -> int:  # span turns left out before packeted[k]
        return packeted[k][0].index - first - k

    runs: list[tuple[int, int]] = []
    expected, k, size = first, 0, len(packeted)  # the next index were nothing left out
    while k < size:
        at = packeted[k][0].index
        if at > expected:
            runs.append((expected + 1, at))  # numbers are indexes + 1
        k = _stretch_end(k, size, skipped)
        expected = packeted[k - 1][0].index + 1
    if expected <= last:
        runs.append((expected + 1, last + 1))
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in runs)


def render_packet(
    packet: Compaction | None,
    span: Sequence[Turn],
    packeted: Sequence[tuple[Turn, TurnCard]],
    shape: PacketShape = PacketShape(),
    *,
    listing: dict[str, str] | None = None,
    outside: Sequence[int] | None = None,
    present: Collection[str] | None = None,
    turns: Mapping[str, Turn] | None = None,
) -> str:
    """The packet as the request carries it. `span` is the packet's whole range (first and last
    turn name it), `packeted` the turns of it the packet itself carries, with their cards.
    `listing` maps turn ids to their `listing_line` when the caller has them already;
    `outside`, the positions in `span` of the turns not packeted (in order) when the caller
    has them: their runs are then read from those few, not found among thousands packeted.
    `present`: the tools the request carries (None: any), as its featured cards show them.
    `turns`, every turn by id when the caller has them: the few turns the shape names are
    then found in `packeted` by bisection, and the rest is read around them, not copied."""
    name = turn_numbers(span)
    summary = packet.summary.strip() if packet and packet.summary.strip() else SUMMARY_PENDING
    lines = [f'<context_summary turns="{name}">', summary]
    chosen = set(shape.featured)
    wanted = set() if shape.detailed else set(shape.listed)
    known = listing or {}
    rest: Sequence[tuple[Turn, TurnCard]] = packeted
    shown: list[str] = []
    if chosen or wanted:  # the named turns apart from the others (a packet may cover thousands)
        by_id: dict[str, tuple[Turn, TurnCard]] = {}
        apart = _named(packeted, chosen | wanted, turns)
        for at in apart:
            pair = packeted[at]
            turn_id = pair[0].turn_id
            if turn_id in chosen:
                by_id[turn_id] = pair
            else:
                shown.append(known.get(turn_id) or listing_line(*pair))
        featured = [by_id[i] for i in shape.featured if i in by_id]
        if featured:
            cards = (render_card(c, t.number, present) for t, c in featured)
            lines += ["", FEATURED_HEADER, *cards]
        rest = _Without(packeted, apart)
    if rest and shape.detailed:
        lines += ["", LISTED_HEADER]
        lines += [known.get(t.turn_id) or listing_line(t, c) for t, c in rest]
    elif rest or shown:
        if shown:
            lines += ["", PARTLY_LISTED_HEADER, *shown]
        if rest and shape.topics:  # the stretches of the whole range, as they stand
            lines += ["", TOPICS_HEADER, *map(topic_line, shape.topics)]
        elif rest:
            numbers = (
                _complement(span, outside)
                if outside is not None and rest is packeted
                else _runs(len(rest), lambda k: rest[k][0].index + 1)
            )
            lines += ["", f"Also covered, by number: turns {numbers}."]
        if rest:
            named = _evidence_named(rest)
            if named:
                lines.append(f"Evidence ids in them (newest first): {named}.")
    if len(packeted) < len(span):
        elsewhere = (
            number_runs([span[p].number for p in outside])
            if outside is not None
            else _shown_elsewhere(span, packeted)
        )
        lines.append(f"Turns {elsewhere} of this range are shown outside it.")
    first = span[0].number if span else 1
    lines.append(
        f'Turns {name} are summarised here; recall({{"turn": {first}}}) returns turn {first} '
        'whole (any turn number works), and recall({"id": …}) any result by its evidence id.'
    )
    lines.append("</context_summary>")
    return "\n".join(lines)


def _index_of(pair: tuple[Turn, TurnCard]) -> int:
    return pair[0].index


def _named(
    packeted: Sequence[tuple[Turn, TurnCard]],
    names: Collection[str],
    turns: Mapping[str, Turn] | None,
) -> list[int]:
    """The positions in `packeted` (in turn order) of the turns `names`, in order: each found
    by bisection on its index when `turns` gives it, else in one pass over them all."""
    if turns is None:
        return [at for at, (turn, _card) in enumerate(packeted) if turn.turn_id in names]
    found = []
    for name in names:
        turn = turns.get(name)
        if turn is None:
            continue
        at = bisect.bisect_left(packeted, turn.index, key=_index_of)
        if at < len(packeted) and packeted[at][0].turn_id == name:
            found.append(at)
    return sorted(found)


class _Without(Sequence[T]):
    """`items` less those at the few positions `gone` (in order), each read where it is asked
    for: the packet reads the ends of its other turns, not a copy of thousands of them."""

    def __init__(self, items: Sequence[T], gone: Sequence[int]) -> None:
        self._items, self._gone = items, gone

    def __len__(self) -> int:
        return len(self._items) - len(self._gone)

    def _at(self, k: int) -> int:
        """The position in `items` of the `k`-th item kept."""
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(k)
        for position in self._gone:  # each one gone at or before it moves it on by one
            if position > k:
                break
            k += 1
        return k

    def __iter__(self) -> Iterator[T]:
        gone = set(self._gone)
        return (item for at, item in enumerate(self._items) if at not in gone)

    @overload
    def __getitem__(self, k: int) -> T: ...

    @overload
    def __getitem__(self, k: slice) -> Sequence[T]: ...

    def __getitem__(self, k: int | slice) -> T | Sequence[T]:
        if isinstance(k, slice):
            return [self._items[self._at(i)] for i in range(*k.indices(len(self)))]
        return self._items[self._at(k)]


def summariser_messages(
    seed: Compaction | None, new_turns: Sequence[Turn], new_cards: Sequence[TurnCard]
) -> tuple[Message, ...]:
    """The summariser's request: the previous summary (if any) and the newly covered cards."""
    parts = []
    if seed is not None and seed.summary.strip():
        parts.append(f"The summary so far:\n{seed.summary.strip()}")
    cards = "\n\n".join(render_card(c, t.number) for t, c in zip(new_turns, new_cards, strict=True))
    parts.append(f"Turns to add to it:\n{cards}")
    parts.append("Write the updated summary covering all of the above.")
    return (
        Message(role="system", content=SUMMARISER_SYSTEM),
        Message(role="user", content="\n\n".join(parts)),
    )
