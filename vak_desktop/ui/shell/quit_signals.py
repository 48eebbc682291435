"""Ctrl-C and SIGTERM close the window the way its close button does.

Why it exists: while Qt's event loop waits in C, Python's signal handlers cannot run, so Ctrl-C
in the terminal was ignored, and SIGTERM (a logout, `kill`, systemd) killed the process with no
cleanup. `signal.set_wakeup_fd` writes a byte to a socket when a signal arrives; a
QSocketNotifier on the other end wakes Qt's loop, Python runs our handler, and the handler asks
the app to quit (`run_window` then cancels the tasks, stops the MCP servers and the embedded
engine, closes the ledger). A second signal while that runs ends the process at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
from collections.abc import Callable
from types import FrameType

from PySide6.QtCore import QSocketNotifier

log = logging.getLogger(__name__)
SIGNALS = tuple(s for s in (signal.SIGINT, getattr(signal, "SIGTERM", None)) if s is not None)


class QuitOnSignals:
    """Until `close()`, SIGINT and SIGTERM call `quit` (once; a second signal exits at once)."""

    def __init__(self, quit: Callable[[], None]) -> None:
        self._quit = quit
        self.received: int | None = None
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno())
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read)
        self._notifier.activated.connect(self._drain)
        self._previous = {sig: signal.signal(sig, self._handle) for sig in SIGNALS}

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.received is not None:
            log.warning("second signal %d while closing: exiting now", signum)
            os._exit(128 + signum)
        self.received = signum
        log.info("signal %d: closing the window", signum)
        self._quit()

    def _drain(self) -> None:
        with contextlib.suppress(OSError):
            while self._reader.recv(256):
                pass

    def close(self) -> None:
        """Give the signals back to whoever had them before."""
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        signal.set_wakeup_fd(self._previous_fd)
        self._notifier.setEnabled(False)
        self._notifier.deleteLater()
        self._reader.close()
        self._writer.close()
