""" "Compact now" for the window (a mixin of `ChatService`): the packet the shown chat's next
turn will want, written in the foreground with its progress.

The runtime's `compact_events` stream (the same one `/compact` in the CLI reads) is re-emitted
as `compactionProgress` — a `CompactionProgress` per summariser call and per second, then None
— so the status bar can say which turns, call k of n and how long, while the task runs on the
qasync loop and the window stays free. Stopping it cancels the task: a packet is appended only
once its last call answered, so nothing half-written reaches the ledger. A message sent while
it writes stops it too: the answer never waits behind a summary (issue #17).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import Any, cast

from PySide6.QtCore import Signal

from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime.events import CompactionEvent, CompactionProgress
from vak_desktop.runtime.providers.choices import ModelChoice
from vak_desktop.ui.chat.model_selection import ModelSelection


class CompactNow(ModelSelection):
    """Writes the shown chat's next packet now, and says how far it got."""

    # a CompactionProgress per summariser call and tick while it writes, None when it ends
    compactionProgress = Signal(object)
    presentationsChanged: Any  # Signal(str), declared on ChatService
    _session: str | None
    _compaction: asyncio.Task[None] | None

    @property
    def busy(self) -> bool:
        raise NotImplementedError

    @property
    def compacting(self) -> bool:
        return self._compaction is not None

    def compact_now(self) -> bool:
        """Write the packet the shown session's next turn will want, now ("Compact now"); the
        outcome arrives as a notice, its progress as `compactionProgress`. False when there is
        no session, model, or a turn or another compaction runs."""
        if self._session is None or self._choice is None or self.busy or self.compacting:
            return False
        self._compaction = self._tasks.spawn(self._compact(self._session, self._choice), "compact")
        return True

    def stop_compaction(self) -> bool:
        """Stop "Compact now": nothing is written (a packet lands only once it is whole)."""
        if self._compaction is None or self._compaction.done():
            return False
        self._compaction.cancel()
        return True

    async def _compact(self, session: str, choice: ModelChoice) -> None:
        try:
            await self._compact_stream(session, choice)
        except asyncio.CancelledError:
            self.notice.emit("Compaction stopped: nothing was written.")
            raise
        finally:
            self._compaction = None
            self.compactionProgress.emit(None)

    async def _compact_stream(self, session: str, choice: ModelChoice) -> None:
        try:
            binding = await self._binding_for(choice)
            runner = await self._providers.runner(choice.provider)
        except ProviderError as exc:
            self.notice.emit(f"Cannot compact now: {exc}")
            return
        await self._providers.leave(session, runner)
        await runner.settle(session)
        # no "compacting…" notice: the status bar's progress line says it, call by call
        stream = runner.compact_events(session, binding)
        events = cast(AsyncGenerator[CompactionEvent, None], stream)
        async with contextlib.aclosing(events):
            async for event in events:
                if isinstance(event, CompactionProgress):
                    self.compactionProgress.emit(event)
                else:
                    self.notice.emit(event.message[:1].upper() + event.message[1:] + ".")
        self.presentationsChanged.emit(session)  # the inspector and gauge re-read the plan
