"""Guard against the PySide6 release whose emits leak references to `True`.

PySide6 6.12.0 lost one reference to `True` per Python-side `Signal.emit()`; on CPython 3.11
the process aborted ("bool_dealloc") after a few thousand streamed chunks. pyproject.toml
excludes that release; this test fails if a build with the same bug is ever installed.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class Chatty(QObject):
    chunk = Signal(str)


def test_emitting_signals_does_not_leak_references_to_true() -> None:
    emitter = Chatty()
    before = sys.getrefcount(True)
    for _ in range(2_000):  # fewer than the process has: a leaking build fails, not aborts
        emitter.chunk.emit("token")
    assert sys.getrefcount(True) >= before - 10
