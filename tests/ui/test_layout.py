"""The window at its default size with the inspector open: the chat stays readable (its column
keeps a reading width), the picker is not truncated and no buttons overlap."""

from __future__ import annotations

import asyncio
import gc
import itertools
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QPushButton, QWidget

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.shots import shots_dir
from tests.ui.harness import open_harness, until
from vak_desktop.ui.shell.main_window import DEFAULT_SIZE, MIN_CHAT_WIDTH

SHOTS = shots_dir("dsk")


@pytest.fixture(autouse=True)
def _collect_on_the_ui_thread() -> None:
    gc.collect()


async def test_the_inspector_open_at_the_default_size_leaves_the_chat_readable(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        try:
            assert (window.width(), window.height()) == DEFAULT_SIZE
            window.picker.choose("llama3.2:latest")
            await until(lambda: harness.service.binding is not None, what="the binding")
            for n in range(1, 4):
                double.enqueue(Reply(text="A long answer about the engine and its plans. " * 12))
                window.composer.input.setPlainText(f"Question {n} about the context engine " * 3)
                window.composer.send_button.click()
                await until(lambda n=n: len(harness.finished) == n, what=f"turn {n}")
            window.toggle_inspector(True)
            await until(lambda: window.inspector.isVisible(), what="the inspector")
            for tab in range(window.inspector.tabs.count()):
                window.inspector.tabs.setCurrentIndex(tab)
                await asyncio.sleep(0.05)
                assert window.chat.width() >= MIN_CHAT_WIDTH - 40, (tab, window.chat.width())
                window.grab().save(str(SHOTS / f"inspector_tab_{tab}.png"))
            window.inspector.tabs.setCurrentIndex(0)
            await asyncio.sleep(0.05)
            window.grab().save(str(SHOTS / "inspector_default_size.png"))
            assert window.chat.width() >= MIN_CHAT_WIDTH - 40  # the pane's margins aside
            combo = window.picker.combo
            assert combo.width() >= combo.minimumSizeHint().width()
            buttons: list[QWidget] = [
                b for b in window.picker.findChildren(QPushButton) if b.isVisible()
            ]
            buttons.append(combo)
            edges = sorted((b.mapTo(window, b.rect().topLeft()).x(), b.width()) for b in buttons)
            for (left, width), (next_left, _w) in itertools.pairwise(edges):
                assert left + width <= next_left, edges  # no two buttons overlap
            assert window.inspector.width() >= 300
        finally:
            await window.tools.aclose()
