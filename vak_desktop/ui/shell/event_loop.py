"""The asyncio loop the window runs on: qasync's QEventLoop, made to keep asyncio's promises.

qasync (0.28) runs Qt's `exec()` in place of asyncio's `run_forever`. Two things asyncio code
relies on are then missing, and this loop puts them back:

- The async-generator hooks (`sys.set_asyncgen_hooks`) that asyncio's own loops install while
  they run. Without them an async generator left before its end — httpx's byte stream, when
  the Ollama adapter stops reading at the final chunk — is finalised by the garbage collector
  outside the loop ("async generator ignored GeneratorExit") instead of being closed in a task,
  and `asyncio.Runner`'s `shutdown_asyncgens` finds nothing to close.
- "A callback runs while its loop is running". Qt dispatches qasync's timers whenever anyone
  processes events: qasync itself once more after each `run_until_complete`, pytest-qt between
  tests. A task stepped there finds no running loop, and httpx (through anyio) fails with
  "Not currently running on any asynchronous event loop". Every callback of this loop runs with
  the loop set as the running loop.

It also unregisters the timers still pending when it closes (see `QtEventLoop.close`).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from contextvars import Context
from typing import Any

import qasync  # type: ignore[import-untyped]
from PySide6.QtWidgets import QApplication


class _LoopCallback(asyncio.Handle):
    """A handle that runs with its loop as the running loop, whoever dispatches it."""

    __slots__ = ()

    def _run(self) -> None:
        if asyncio.events._get_running_loop() is not None:
            super()._run()
            return
        asyncio.events._set_running_loop(self._loop)  # type: ignore[attr-defined]
        try:
            super()._run()
        finally:
            asyncio.events._set_running_loop(None)


class QtEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    """A qasync loop that finalises async generators and runs callbacks as asyncio's loops do."""

    _saved_asyncgen_hooks: Any = None

    def call_later(
        self,
        delay: float,
        callback: Callable[..., object],
        *args: object,
        context: Context | None = None,
    ) -> asyncio.Handle:
        if asyncio.iscoroutinefunction(callback):
            raise TypeError("coroutines cannot be used with call_later")
        if not callable(callback):
            raise TypeError(f"callback must be callable: {type(callback).__name__}")
        handle: asyncio.Handle = self._add_callback(
            _LoopCallback(callback, args, self, context=context), delay
        )
        return handle

    def close(self) -> None:
        """Close, and unregister every timer still pending. qasync's close only flags its
        timer object as stopped; Qt keeps the timers, and if the garbage collector frees that
        object on another thread (a server thread of the tests, say), Qt cannot unregister
        them there and the next one to fire hits freed memory (a segfault seen in the UI
        tests, one loop per test). Killing them here, on the loop's own thread, is safe."""
        timer = self._timer
        super().close()
        pending = getattr(timer, "_SimpleTimer__callbacks", {})
        for timer_id in list(pending):
            timer.killTimer(timer_id)
        pending.clear()

    def _before_run_forever(self) -> None:
        super()._before_run_forever()
        self._saved_asyncgen_hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook, finalizer=self._asyncgen_finalizer_hook
        )

    def _after_run_forever(self) -> None:
        try:
            super()._after_run_forever()
        finally:
            if self._saved_asyncgen_hooks is not None:
                sys.set_asyncgen_hooks(*self._saved_asyncgen_hooks)
                self._saved_asyncgen_hooks = None


def new_event_loop(app: QApplication | None = None) -> QtEventLoop:
    """A loop on `app` (default: the running QApplication), for `asyncio.Runner(loop_factory=)`."""
    return QtEventLoop(app or QApplication.instance())
