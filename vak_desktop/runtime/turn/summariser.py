"""The summariser: the one side call that writes a compaction packet.

It is called only when the plan wants a packet over a range no stored packet covers exactly.
Its request is purpose-built (the longest stored packet over the same first turn as a seed, and
the cards of the newly covered turns), never the turn's own request, and its answer becomes a
Compaction entry keyed by the range, so the same range is never summarised twice.

A packet can take several calls (a small model's window holds few cards at once); a
`SummaryWatch` passed in is kept up to date with the call under way, so a foreground compaction
can show which range, call k of n and how much has been written (`compaction.compaction_events`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from vak_desktop.context.capacity.profile import estimate_tokens, tokens_per_char, usable_horizon
from vak_desktop.context.payloads import Activity, CapacityProfile, Compaction
from vak_desktop.context.planning.packets import summariser_messages
from vak_desktop.context.planning.planner import Plan
from vak_desktop.context.planning.turn_cards import card_of, turn_numbers
from vak_desktop.context.planning.turns import Turn, TurnIndex
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Ledger
from vak_desktop.providers.base import ChatProvider, TextDelta
from vak_desktop.providers.errors import BadResponse, ProviderError
from vak_desktop.runtime.capacity.binding import ModelBinding


@dataclass
class SummaryWatch:
    """What the summariser is doing now: the packet's turns, the call under way (from 1) of
    how many (re-counted as the summary grows: a longer seed leaves room for fewer cards), the
    turns that call summarises, and the characters it has written so far. `changed` is set
    whenever a call starts."""

    span: str = ""
    call: int = 0
    calls: int = 0
    chunk: str = ""
    written_chars: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def starting(self, span: str, call: int, calls: int, chunk: str) -> None:
        self.span, self.call, self.calls, self.chunk = span, call, calls, chunk
        self.written_chars = 0
        self.changed.set()


async def summarise_range(
    provider: ChatProvider,
    binding: ModelBinding,
    index: TurnIndex,
    packet_range: tuple[str, str],
    *,
    max_tokens: int,
    ratio: float,
    keep_alive: str | int | None,
    window: int,
    watch: SummaryWatch | None = None,
) -> Compaction:
    """A packet over the inclusive `packet_range`, grown from the longest stored seed.

    Each summariser request must fit `window` tokens (the model's usable horizon) with room for
    its answer; when the new cards do not fit in one, they are summarised in consecutive chunks,
    each seeded with the summary so far."""
    first = index.by_id(packet_range[0])
    last = index.by_id(packet_range[1])
    assert first is not None and last is not None
    seed = index.longest_packet_from(first.turn_id)
    start = first.index
    if seed is not None:
        seeded_last = index.by_id(seed.packet.last_turn_id)
        if seeded_last is not None and seeded_last.index < last.index:
            start = seeded_last.index + 1
        else:
            seed = None  # a longer packet than we need: summarise the range afresh
    summary = seed.packet.summary if seed else ""
    pending = list(index.turns[start : last.index + 1])
    covered = index.turns[first.index : last.index + 1]
    room, call = window - max_tokens, 0
    while pending:
        chunk = _fitting_chunk(summary, pending, ratio, room)
        call += 1
        if watch is not None:
            calls = call + _calls_needed(summary, pending[len(chunk) :], ratio, room)
            watch.starting(turn_numbers(covered), call, calls, turn_numbers(chunk))
        summary = await _summarise(
            provider,
            binding,
            summary,
            chunk,
            ratio,
            max_tokens=max_tokens,
            keep_alive=keep_alive,
            watch=watch,
        )
        pending = pending[len(chunk) :]
    return Compaction(
        first_turn_id=first.turn_id,
        last_turn_id=last.turn_id,
        summary=summary,
        model=binding.model,
        evidence=tuple(e for t in covered for e in t.evidence),
    )


async def write_packet(
    ledger: Ledger,
    session: str,
    provider: ChatProvider,
    binding: ModelBinding,
    index: TurnIndex,
    plan: Plan,
    profile: CapacityProfile,
    *,
    keep_alive: str | int | None,
    watch: SummaryWatch | None = None,
) -> Compaction | ProviderError:
    """Summarise the plan's packet range and append the packet to the session. A failed side
    call is recorded (`summary_failed`) and returned: the plan's packet still lists every
    covered turn and how to recall it, so the turn goes on without the summary."""
    assert plan.packet_range is not None
    try:
        packet = await summarise_range(
            provider,
            binding,
            index,
            plan.packet_range,
            max_tokens=plan.summary_tokens,
            ratio=tokens_per_char(profile),
            keep_alive=keep_alive,
            window=usable_horizon(profile),
            watch=watch,
        )
    except ProviderError as exc:
        ledger.append(session, Activity(type="summary_failed", message=str(exc)))
        return exc
    if not packet.summary:  # stored, an empty summary would stop the range being asked again
        empty = BadResponse("the summariser returned no text")
        ledger.append(session, Activity(type="summary_failed", message=str(empty)))
        return empty
    ledger.append(session, packet)
    return packet


def _messages(summary: str, turns: Sequence[Turn], ratio: float) -> tuple[Message, ...]:
    seed = Compaction("", "", summary, "") if summary else None
    return summariser_messages(seed, turns, [card_of(t, ratio) for t in turns])


def _fitting_chunk(summary: str, turns: Sequence[Turn], ratio: float, room: int) -> list[Turn]:
    """The longest run of `turns` from the start whose summariser request fits `room` tokens
    (at least one turn: a single card is a few lines)."""
    chunk: list[Turn] = []
    for turn in turns:
        chars = sum(m.chars() for m in _messages(summary, [*chunk, turn], ratio))
        if chunk and estimate_tokens(chars, ratio) > room:
            break
        chunk.append(turn)
    return chunk


def _calls_needed(summary: str, turns: Sequence[Turn], ratio: float, room: int) -> int:
    """How many more calls `turns` take, seeded with today's summary (an estimate: each call's
    own answer becomes the next seed)."""
    calls = 0
    while turns:
        turns = turns[len(_fitting_chunk(summary, turns, ratio, room)) :]
        calls += 1
    return calls


async def _summarise(
    provider: ChatProvider,
    binding: ModelBinding,
    summary: str,
    turns: Sequence[Turn],
    ratio: float,
    *,
    max_tokens: int,
    keep_alive: str | int | None,
    watch: SummaryWatch | None = None,
) -> str:
    request = ChatRequest(
        model=binding.model,
        messages=_messages(summary, turns, ratio),
        max_tokens=max_tokens,
        keep_alive=keep_alive,
        think=False if "thinking" in binding.capabilities else None,
        num_ctx=binding.num_ctx,
    )
    parts: list[str] = []
    async with contextlib.aclosing(provider.stream(request)) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                parts.append(event.text)
                if watch is not None:
                    watch.written_chars += len(event.text)
    return "".join(parts).strip()
