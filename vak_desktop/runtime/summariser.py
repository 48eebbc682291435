"""The summariser: the one side call that writes a compaction packet.

It is called only when the plan wants a packet over a range no stored packet covers exactly.
Its request is purpose-built (the longest stored packet over the same first turn as a seed, and
the cards of the newly covered turns), never the turn's own request, and its answer becomes a
Compaction entry keyed by the range, so the same range is never summarised twice.
"""

from __future__ import annotations

import contextlib

from vak_desktop.context.cards import card_of
from vak_desktop.context.packets import summariser_messages
from vak_desktop.context.payloads import Compaction
from vak_desktop.context.request import ChatRequest
from vak_desktop.context.turns import TurnIndex
from vak_desktop.providers.base import ChatProvider, TextDelta
from vak_desktop.runtime.binding import ModelBinding


async def summarise_range(
    provider: ChatProvider,
    binding: ModelBinding,
    index: TurnIndex,
    packet_range: tuple[str, str],
    *,
    max_tokens: int,
    ratio: float,
    keep_alive: str | int | None,
) -> Compaction:
    """A packet over the inclusive `packet_range`, grown from the longest stored seed."""
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
    new_turns = list(index.turns[start : last.index + 1])
    covered = index.turns[first.index : last.index + 1]
    request = ChatRequest(
        model=binding.model,
        messages=summariser_messages(
            seed.packet if seed else None, new_turns, [card_of(t, ratio) for t in new_turns]
        ),
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
    return Compaction(
        first_turn_id=first.turn_id,
        last_turn_id=last.turn_id,
        summary="".join(parts).strip(),
        model=binding.model,
        evidence=tuple(e for t in covered for e in t.evidence),
    )
