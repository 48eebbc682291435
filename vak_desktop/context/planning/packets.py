"""Compaction packets: how turns outside the working set are still present in a request.

A packet is a *cache*, keyed by the inclusive turn range it summarises; the ledger stays the
original. What the request carries of it is deterministic and needs no model call: the stored
summary when one was written (else a line saying none was), the cards of the covered turns that
match the directive best, first and in full as far as the budget allows, the rest one line each
(with their evidence ids) or, when even that does not fit, named by range, and always last how
to `recall` any turn. So the first answer never waits on a summariser: the model-written summary
is a background refinement (spec §4, §10), used once it is stored.

A turn of the range the plan carries whole or as a card elsewhere in the request (a retrieved
older turn) is not listed again: every turn is in exactly one fidelity.

The summariser's own request is built here too, as a purpose-built packet (spec §10 "side
calls"): the longest stored packet over the same first turn as a seed, plus only the cards of
the newly covered turns — never the turn's own request.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from vak_desktop.context.evidence.windows import short_ref
from vak_desktop.context.payloads import Compaction, TurnCard
from vak_desktop.context.planning.turn_cards import render_card, turn_numbers
from vak_desktop.context.planning.turns import Turn
from vak_desktop.context.request import Message

SUMMARY_PENDING = (
    "No summary has been written for these turns yet; they are listed from their cards."
)
FEATURED_HEADER = "The covered turns closest to the request, as cards:"
LISTED_HEADER = "The other covered turns, one line each:"
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
    line = f"- Turn {turn.number}: {card.asked}"
    return f"{line} — evidence: {evidence}" if evidence else line


def render_handoff(handoff: str) -> str:
    """What a request carries of the turns behind a reset: the handoff written with it."""
    return f"<handoff>{handoff}</handoff>"


@dataclass(frozen=True)
class PacketShape:
    """What the request shows of the turns in the packet: `featured` (turn ids, best match
    first) as whole cards, the rest as one line each when `detailed`, else by range."""

    featured: tuple[str, ...] = ()
    detailed: bool = False


def number_ranges(numbers: Sequence[int]) -> str:
    """Sorted turn numbers as runs: "1–2, 4–40". A run is where `number − position` holds still
    (it never falls for increasing numbers), so each run's end is found by bisection: a packet
    over thousands of turns with a few retrieved is a few runs, not a pass over every number."""
    runs: list[tuple[int, int]] = []
    start, size = 0, len(numbers)
    while start < size:
        offset = numbers[start] - start
        end = bisect.bisect_right(range(size), offset, lo=start, key=lambda k: numbers[k] - k)
        runs.append((numbers[start], numbers[end - 1]))
        start = end
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in runs)


def render_packet(
    packet: Compaction | None,
    span: Sequence[Turn],
    packeted: Sequence[tuple[Turn, TurnCard]],
    shape: PacketShape = PacketShape(),
    *,
    listing: dict[str, str] | None = None,
) -> str:
    """The packet as the request carries it. `span` is the packet's whole range (first and last
    turn name it), `packeted` the turns of it the packet itself carries, with their cards.
    `listing` maps turn ids to their `listing_line` when the caller has them already."""
    name = turn_numbers(span)
    summary = packet.summary.strip() if packet and packet.summary.strip() else SUMMARY_PENDING
    lines = [f'<context_summary turns="{name}">', summary]
    chosen = set(shape.featured)
    if chosen:
        by_id = {t.turn_id: (t, c) for t, c in packeted if t.turn_id in chosen}
        featured = [by_id[i] for i in shape.featured if i in by_id]
        lines += ["", FEATURED_HEADER, *(render_card(c, t.index + 1) for t, c in featured)]
    rest = [(t, c) for t, c in packeted if t.turn_id not in chosen] if chosen else packeted
    if rest and shape.detailed:
        lines += ["", LISTED_HEADER]
        known = listing or {}
        lines += [known.get(t.turn_id) or listing_line(t, c) for t, c in rest]
    elif rest:
        numbers = [t.index + 1 for t, _ in rest]
        lines += ["", f"Also covered, by number: turns {number_ranges(numbers)}."]
    if len(packeted) < len(span):
        inside = {t.index for t, _ in packeted}
        elsewhere = [t.index + 1 for t in span if t.index not in inside]
        lines.append(f"Turns {number_ranges(elsewhere)} of this range are shown outside it.")
    first = span[0].number if span else 1
    lines.append(
        f'Turns {name} are summarised here; recall({{"turn": {first}}}) returns turn {first} '
        'whole (any turn number works), and recall({"id": …}) any result by its evidence id.'
    )
    lines.append("</context_summary>")
    return "\n".join(lines)


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
