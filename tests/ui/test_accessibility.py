"""Every control a keyboard or screen-reader user reaches has a name of its own, Tab follows the
window's visual order, and the focused control shows a ring in both themes (#25 item 8)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.ui.harness import SCREENSHOTS, open_harness, until
from vak_desktop.ui import apply_theme

INTERACTIVE = (QAbstractButton, QComboBox, QLineEdit, QPlainTextEdit, QTextEdit, QAbstractItemView)


def _unnamed(window: QWidget) -> list[str]:
    out = []
    for widget in window.findChildren(QWidget):
        if not isinstance(widget, INTERACTIVE) or not widget.isVisible():
            continue
        if widget.focusPolicy() == Qt.FocusPolicy.NoFocus and not isinstance(
            widget, QAbstractButton
        ):
            continue
        if not widget.accessibleName().strip():
            label = widget.text() if isinstance(widget, QAbstractButton) else ""
            out.append(f"{type(widget).__name__} {widget.objectName()!r} {label!r}")
    return out


async def test_every_visible_control_has_an_accessible_name_of_its_own(
    qtbot: Any, ledger_path: Path, double: OllamaDouble
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        harness.window.picker.choose("llama3.2:latest")
        await until(lambda: harness.service.binding is not None, "the binding")
        double.enqueue(Reply(text="An answer with **Markdown**."))
        window.composer.input.setPlainText("Hello")
        window.composer.send_button.click()
        await until(lambda: harness.finished, "the turn")
        await asyncio.sleep(0.05)
        assert _unnamed(window) == []


async def test_tab_follows_the_visual_order_from_the_composer(
    qtbot: Any, ledger_path: Path, double: OllamaDouble
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        window.activateWindow()
        window.composer.input.setFocus()
        window.composer.input.setPlainText("typed")  # Send is enabled
        seen: list[QWidget] = []
        widget: QWidget = window.composer.input
        for _ in range(12):
            widget = widget.nextInFocusChain()
            while widget.focusPolicy() & Qt.FocusPolicy.TabFocus != Qt.FocusPolicy.TabFocus or (
                not widget.isVisible() or not widget.isEnabled()
            ):
                widget = widget.nextInFocusChain()
            seen.append(widget)
        order = [
            window.composer.send_button,
            window.picker.combo,
            window.sessions.new_chat,
            window.sessions.search,
            window.sessions.list,
            window.inspector_button,
        ]
        positions = [seen.index(w) for w in order]
        assert positions == sorted(positions), [w.accessibleName() for w in seen]
        assert positions[0] == 0, "Send comes straight after the message"


async def test_the_focused_control_shows_a_ring_in_both_themes(
    qtbot: Any, ledger_path: Path, double: OllamaDouble
) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        button = window.sessions.new_chat
        try:
            for name in ("light", "dark"):
                apply_theme(app, name)
                window.activateWindow()
                window.composer.input.setFocus()
                await asyncio.sleep(0.05)
                before = QColor(button.grab().toImage().pixel(button.width() // 2, 1))
                button.setFocus(Qt.FocusReason.TabFocusReason)
                await asyncio.sleep(0.05)
                after = QColor(button.grab().toImage().pixel(button.width() // 2, 1))
                SCREENSHOTS.mkdir(exist_ok=True)
                window.grab().save(str(SCREENSHOTS / f"focus-ring-{name}.png"))
                accent = QColor(app.palette().color(app.palette().ColorRole.Link))
                assert button.hasFocus()
                assert after != before, (name, before.name(), after.name())
                assert abs(after.lightness() - before.lightness()) >= 40 or after == accent, (
                    name,
                    before.name(),
                    after.name(),
                )
        finally:
            apply_theme(app, "light")
