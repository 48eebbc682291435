"""Compaction packets: how turns outside the working set are still present in a request.

A packet is a *cache*, keyed by the inclusive turn range it summarises; the ledger stays the
original. Its text is the summariser's prose plus a deterministic list of what it covers: each
turn with its evidence ids, so the model always knows what it is missing and how to `recall` it.
When that list does not fit beside the working set, the packet names the range and the recall
call instead.

The summariser's own request is built here too, as a purpose-built packet (spec §10 "side
calls"): the longest stored packet over the same first turn as a seed, plus only the cards of
the newly covered turns — never the turn's own request.
"""

from __future__ import annotations

from collections.abc import Sequence

from vak_desktop.context.evidence.windows import short_ref
from vak_desktop.context.payloads import Compaction, TurnCard
from vak_desktop.context.planning.turn_cards import render_card, turn_numbers
from vak_desktop.context.planning.turns import Turn
from vak_desktop.context.request import Message

SUMMARY_PENDING = "(no summary has been written for these turns yet)"
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


def render_packet(
    packet: Compaction | None,
    covered: Sequence[Turn],
    cards: Sequence[TurnCard],
    *,
    detailed: bool = True,
    listing: Sequence[str] | None = None,
) -> str:
    """The packet as the request carries it. `listing` is the covered turns' `listing_line`s
    when the caller has them already (the planner prices several packet sizes)."""
    span = turn_numbers(covered)
    summary = packet.summary.strip() if packet and packet.summary.strip() else SUMMARY_PENDING
    lines = [f'<context_summary turns="{span}">', summary, ""]
    first = covered[0].number if covered else 1
    how = f'recall({{"turn": {first}}}) returns turn {first} whole; any turn number works'
    if detailed:
        lines.append(
            f'Turns {span} are summarised here; {how}, and recall({{"id": …}}) any result:'
        )
        if listing is None:
            listing = [listing_line(t, c) for t, c in zip(covered, cards, strict=True)]
        lines += listing
    else:
        lines.append(f"Turns {span} ({len(covered)} turns) are summarised here; {how}.")
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
