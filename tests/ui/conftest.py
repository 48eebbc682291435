"""UI tests run on the same loop the app runs on: a qasync QEventLoop inside the QApplication.

pytest-asyncio creates that loop for every async test in this folder (through its
`pytest_asyncio_loop_factories` hook), so a test is a coroutine that drives the real window
while the service's tasks, httpx and Qt's events all progress on one loop. Tests wait with
`harness.until` (an `asyncio.sleep` poll), never with qtbot's blocking waits, which would spin a
nested Qt loop inside a running task.

Everything asynchronous is opened and closed inside the test coroutine
(`async with open_harness(...)`), so no task, stream or client outlives the loop it ran on.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from tests.doubles.ollama_server import OllamaDouble
from tests.ui.harness import MODELS
from vak_desktop.ledger import LEDGER_FILENAME
from vak_desktop.ui import apply_theme
from vak_desktop.ui.shell.event_loop import QtEventLoop, new_event_loop


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> dict[str, Any]:
    def qasync_loop() -> QtEventLoop:
        return new_event_loop(QApplication.instance() or QApplication([]))

    return {"qasync": qasync_loop}


@pytest.fixture(autouse=True)
def _qt_objects_die_on_the_ui_thread() -> Iterator[None]:
    """Python's collector runs in whichever thread crosses an allocation threshold; the doubles
    serve on threads, and a Qt object freed on one of them crashes Qt ("Timers cannot be
    stopped from another thread", then a timer firing on a deleted object). So automatic
    collection is off while a UI test runs, and a full collection runs here, on the UI thread,
    before and after it."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


@pytest.fixture(autouse=True)
def _themed(qapp: QApplication) -> None:
    apply_theme(qapp)


@pytest.fixture
def double() -> Iterator[OllamaDouble]:
    with OllamaDouble() as server:
        for name in MODELS:
            server.add_model(name)
        yield server


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / LEDGER_FILENAME
