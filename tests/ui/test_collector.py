"""The app's collector: automatic collection off while it lives, cycles freed on its timer."""

from __future__ import annotations

import gc
import weakref
from typing import Any

from vak_desktop.ui.shell.collector import UiThreadCollector


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_collection_moves_to_the_ui_thread_and_back(qtbot: Any) -> None:
    was_enabled = gc.isenabled()
    collector = UiThreadCollector()
    try:
        assert not gc.isenabled()
        cycle = Cycle()
        gone = weakref.ref(cycle)
        del cycle
        assert gone() is not None  # automatic collection is off: the cycle waits for the timer
        qtbot.waitUntil(lambda: gone() is None, timeout=3_000)
    finally:
        collector.stop()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    if not was_enabled:
        gc.disable()
