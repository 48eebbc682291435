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
        code = "```python\nprint('hello')\n```"
        double.enqueue(Reply(text=f"An answer with **Markdown** and code:\n\n{code}\n"))
        window.composer.input.setPlainText("Hello")
        window.composer.send_button.click()
        await until(lambda: harness.finished, "the turn")
        await asyncio.sleep(0.05)
        assert _unnamed(window) == []
        # the inspector's controls too, on every panel
        window.toggle_inspector(True)
        await until(lambda: window.inspector.isVisible(), "the inspector")
        for tab in range(window.inspector.tabs.count()):
            window.inspector.tabs.setCurrentIndex(tab)
            await asyncio.sleep(0.05)
            assert _unnamed(window) == [], window.inspector.tabs.tabText(tab)


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


async def test_tab_keys_walk_composer_send_picker_chats_then_the_open_inspector(
    qtbot: Any, ledger_path: Path, double: OllamaDouble
) -> None:
    """Real Tab presses, with the inspector open: after the chat list and the Inspector
    button, focus goes into the inspector, never back to the top of the window first."""
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        window.toggle_inspector(True)
        await until(lambda: window.inspector.isVisible(), "the inspector")
        window.activateWindow()
        window.composer.input.setPlainText("typed")  # Send is enabled
        window.composer.input.setFocus()
        await until(lambda: window.composer.input.hasFocus(), "the composer's focus")
        seen: list[QWidget] = []
        for _ in range(20):
            focused = QApplication.focusWidget()
            assert focused is not None
            qtbot.keyClick(focused, Qt.Key.Key_Tab)
            await asyncio.sleep(0)
            now = QApplication.focusWidget()
            assert now is not None
            seen.append(now)
            if window.inspector.isAncestorOf(now):
                break
        names = [w.accessibleName() or type(w).__name__ for w in seen]
        assert window.inspector.isAncestorOf(seen[-1]), names
        order = [
            window.composer.send_button,
            window.picker.combo,
            window.sessions.list,
            window.inspector_button,
        ]
        positions = [seen.index(w) for w in order]
        assert positions == sorted(positions), names
        assert positions[0] == 0, names
        inside = [w for w in seen[positions[-1] + 1 :] if not window.inspector.isAncestorOf(w)]
        assert inside == [], names  # nothing between the Inspector button and the inspector


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
