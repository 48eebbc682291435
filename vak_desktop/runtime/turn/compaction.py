"""Incremental compaction: the packet is written ahead, after a turn closes, never at overflow.

When a turn closes, the next turn is planned as if its directive had just arrived; if that plan
wants a packet no stored one covers exactly (turns left the working set, in batches of 8), the
summariser side call writes it now, in the background, so the turn's close never waits on a
model call and the next turn usually finds its packet already stored. The summariser request is
purpose-built (the previous packet as a seed plus the newly covered turns' records), never the
turn's own history. `/compact` and the window's "Compact now" run the same planner and write
the same range-keyed packet in the foreground, and show it being written: `compaction_events`
yields a `CompactionProgress` when each summariser call starts and every PROGRESS_TICK_S while it
runs, then the `CompactionResult` — the one stream the CLI and the window both read.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from vak_desktop.context.payloads import Directive
from vak_desktop.context.planning.turn_cards import turn_numbers
from vak_desktop.context.planning.turns import Turn, TurnIndex, build_turn_index
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import ChatProvider
from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.service import CapacityService
from vak_desktop.runtime.events import CompactionEvent, CompactionProgress, CompactionResult
from vak_desktop.runtime.turn.projection import (
    Projection,
    plan_turn,
    project_turn,
    tail_context_now,
)
from vak_desktop.runtime.turn.summariser import SummaryWatch, write_packet

__all__ = ["CompactionResult", "compact_session", "compaction_events", "project_summarised"]

NEXT_TURN = "next"  # the id of the turn a look-ahead plans for; it is never written
PROGRESS_TICK_S = 1.0  # how often a running summariser call's progress is told again


async def compact_session(
    ledger: Ledger,
    session: str,
    provider: ChatProvider,
    binding: ModelBinding,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    keep_alive: str | int | None,
    capacity: CapacityService,
    watch: SummaryWatch | None = None,
) -> CompactionResult:
    """Plan the session's next turn and write the packet that plan wants, unless one is stored.

    The summariser is the bound model: it is the one loaded (a local runner pays no load for it)
    and the one whose horizon the packet was sized for. A failed side call is recorded and
    leaves the session as it was; the next turn then asks again."""
    chain = ledger.chain_to_root(session)
    index = build_turn_index(chain)
    if not index.turns:
        return CompactionResult(None, "nothing to compact: the session has no turns")
    profile = capacity.profile_for(binding, chain, utc_now())
    upcoming = Turn(NEXT_TURN, len(index.turns), Directive(text=""), ())
    ahead = TurnIndex((*index.turns, upcoming), index.packets, index.reset)
    projection = plan_turn(
        ahead, profile, system=system, tools=tools, tail_context=tail_context_now(), pending=True
    )
    plan = projection.plan
    if plan.packet_range is None:
        return CompactionResult(
            None, "nothing to compact: every turn fits the working set at Full or as a card"
        )
    first, last = (index.by_id(i) for i in plan.packet_range)
    assert first is not None and last is not None
    span = turn_numbers(index.turns[first.index : last.index + 1])
    if plan.packet is not None:
        return CompactionResult(None, f"turns {span} are already in a stored packet")
    written = await write_packet(
        ledger, session, provider, binding, index, plan, profile, keep_alive=keep_alive, watch=watch
    )
    if isinstance(written, ProviderError):
        return CompactionResult(None, f"the summariser failed: {written}")
    return CompactionResult(written, f"turns {span} summarised into the context packet")


async def compaction_events(
    compact: Callable[[SummaryWatch], Awaitable[CompactionResult]],
    *,
    tick_s: float = PROGRESS_TICK_S,
) -> AsyncIterator[CompactionEvent]:
    """Run `compact(watch)` and yield its progress while it runs, then its result. Closing the
    generator early (the user stopped it) cancels the compaction: a packet is appended only
    once its last call answered, so nothing half-written reaches the ledger."""
    watch = SummaryWatch()
    started = time.monotonic()
    task = asyncio.ensure_future(compact(watch))
    try:
        while not task.done():
            changed = asyncio.ensure_future(watch.changed.wait())
            try:
                await asyncio.wait({task, changed}, timeout=tick_s, return_when="FIRST_COMPLETED")
            finally:
                changed.cancel()
            watch.changed.clear()
            if watch.call and not task.done():
                yield CompactionProgress(
                    watch.span,
                    watch.call,
                    watch.calls,
                    watch.chunk,
                    watch.written_chars,
                    time.monotonic() - started,
                )
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    yield task.result()


async def project_summarised(
    ledger: Ledger,
    session: str,
    provider: ChatProvider,
    binding: ModelBinding,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    keep_alive: str | int | None,
    capacity: CapacityService,
) -> Projection:
    """The running turn's projection once the summary its plan wants is stored: plan, write the
    packet in the foreground when none is stored for exactly that range, plan again. A turn
    never does this (it goes on with the deterministic packet); `vak eval` and the replay tests
    do, to check the packet a later request reuses."""
    projection = project_turn(
        ledger, session, binding, system=system, tools=tools, capacity=capacity
    )
    plan = projection.plan
    if plan.packet_range is None or plan.packet is not None:
        return projection
    index = build_turn_index(ledger.chain_to_root(session))
    written = await write_packet(
        ledger, session, provider, binding, index, plan, projection.profile, keep_alive=keep_alive
    )
    if isinstance(written, ProviderError):
        return projection
    return project_turn(ledger, session, binding, system=system, tools=tools, capacity=capacity)
