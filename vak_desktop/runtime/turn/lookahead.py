"""Packets written ahead: one background compaction task per session, at most.

After a turn closes, a runner with `compact_ahead` starts writing the summary of the packet the
session's next turn will want, while the model is idle (single-flight per session; the packet
is range-keyed, so a stored range is never summarised again). A real turn never waits for it:
it cancels it (`abandon`) and plans with the deterministic packet, and the next close starts
it again. A look-ahead is an optimisation: when it fails the turn plans without it, and its
failure is logged, never raised into the turn. `settle` waits for it (tests, quitting).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from vak_desktop.runtime.turn.compaction import CompactionResult

log = logging.getLogger(__name__)


class Lookahead:
    """The running look-ahead compactions, keyed by session."""

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[CompactionResult]] = {}

    def running(self, session: str) -> asyncio.Task[CompactionResult] | None:
        """The session's look-ahead task, if one was started and not yet settled."""
        return self._tasks.get(session)

    @property
    def busy(self) -> bool:
        """A look-ahead of any session is writing now (its summariser calls hold the model)."""
        return any(not task.done() for task in self._tasks.values())

    def start(
        self, session: str, compact: Callable[[], Awaitable[CompactionResult]]
    ) -> asyncio.Task[CompactionResult]:
        """Start `compact()` for `session` unless one already runs (then return that one)."""
        running = self._tasks.get(session)
        if running is not None and not running.done():
            return running

        async def run() -> CompactionResult:
            return await compact()

        task = asyncio.create_task(run())
        self._tasks[session] = task
        return task

    async def settle(self, session: str | None = None) -> None:
        """Wait for the look-ahead of `session` (default: every session) to end."""
        names = [session] if session is not None else list(self._tasks)
        for name in names:
            task = self._tasks.pop(name, None)
            if task is None:
                continue
            try:
                await task
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise
            except Exception:  # the turn plans without it
                log.exception("the look-ahead compaction of session %s failed", name)

    async def abandon(self, session: str) -> None:
        """Cancel the look-ahead of `session`, if one runs, and wait for it to end."""
        task = self._tasks.get(session)
        if task is not None:
            task.cancel()
            await self.settle(session)

    async def aclose(self) -> None:
        """Cancel every look-ahead and wait for them to end."""
        for task in self._tasks.values():
            task.cancel()
        await self.settle()
