"""A theme switch restyles the open chat at once: message bubbles, Markdown, code panes, cards
and their buttons take the new palette without another chat being opened (#25 item 2)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QToolButton, QWidget

from tests.doubles.ollama_server import OllamaDouble
from tests.ui.harness import SCREENSHOTS as SHOTS
from tests.ui.harness import open_harness, until
from vak_desktop.context.payloads import Activity, AssistantStep, Directive
from vak_desktop.context.planning.turn_cards import build_turn_card
from vak_desktop.context.planning.turns import Turn
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.turn.closing import TURN_CLOSED
from vak_desktop.ui import apply_theme
from vak_desktop.ui.cards.samples import write_card_turn
from vak_desktop.ui.chat.code_pane import CodePane
from vak_desktop.ui.chat.message_widgets import AssistantMessage, UserMessage

ANSWER = """Here is the function, **bold** and `inline`:

```python
def horizon(samples: list[bool]) -> int:
    return sum(samples)  # the rungs followed
```

Call it with the ladder's verdicts.
"""


def _chat_with_code(ledger: Ledger) -> str:
    session = ledger.create_session().id
    head = ledger.append(session, Directive(text="Write the horizon function", model="llama3.2"))
    step = ledger.append(session, AssistantStep(text=ANSWER, model="llama3.2"))
    assert isinstance(head.payload, Directive)
    ledger.append(
        session, build_turn_card(Turn(head.id, 0, head.payload, (step,)), "completed", 0.1)
    )
    ledger.append(session, Activity(type=TURN_CLOSED, detail={"outcome": "completed"}))
    return session


def _lightness(widget: QWidget) -> float:
    """The mean lightness (0–255) of what the widget shows."""
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    step = max(1, min(image.width(), image.height()) // 24)
    values = [
        QColor(image.pixel(x, y)).lightness()
        for x in range(0, image.width(), step)
        for y in range(0, image.height(), step)
    ]
    return sum(values) / len(values)


def _contrast(a: QColor, b: QColor) -> float:
    def luminance(c: QColor) -> float:
        def channel(v: float) -> float:
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return (
            0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())
        )

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _check(window: Any, *, dark: bool) -> None:
    """Every bubble, code pane and card is drawn in the theme's shade, and every visible
    message or card button keeps its text readable on the surface behind it."""
    chat = window.chat
    bubbles = [m for m in chat.messages if isinstance(m, (UserMessage, AssistantMessage))]
    shown = [*bubbles, *window.findChildren(CodePane), *chat.cards()]
    assert bubbles, "the chat shows its messages"
    for widget in shown:
        shade = _lightness(widget)
        assert (shade < 110) if dark else (shade > 150), (type(widget).__name__, dark, shade)
    for button in chat.findChildren(QToolButton):
        if not button.isVisible() or not button.text().strip():
            continue
        palette = button.palette()
        fg, bg = palette.color(palette.ColorRole.ButtonText), palette.color(palette.ColorRole.Base)
        assert _contrast(fg, bg) >= 3.0, (button.accessibleName(), fg.name(), bg.name())
        assert (bg.lightness() < 128) == dark, (button.accessibleName(), bg.name())


async def test_the_open_chat_restyles_at_once_in_both_directions(
    qtbot: Any, ledger_path: Path, double: OllamaDouble
) -> None:
    """Light → dark → light → dark with a code answer open, then the same with a card turn
    open: nothing is reopened between the switches."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        window.resize(1180, 900)
        code = _chat_with_code(harness.ledger)
        cards = write_card_turn(harness.ledger)
        window.sessions.reload()
        try:
            for session, label, drawn in (
                (code, "code", lambda: "def horizon" in window.chat.toPlainText()),
                (cards, "cards", lambda: window.chat.cards()),
            ):
                apply_theme(app, "light")
                harness.service.open_session(session)
                await until(drawn, f"the {label} chat drawn")
                await asyncio.sleep(0.1)
                _check(window, dark=False)
                for name in ("dark", "light", "dark"):
                    apply_theme(app, name)
                    await asyncio.sleep(0.1)  # layouts and paints settle on the loop
                    SHOTS.mkdir(exist_ok=True)
                    assert window.grab().save(str(SHOTS / f"live-{label}-{name}.png"))
                    _check(window, dark=name == "dark")
        finally:
            apply_theme(app, "light")


def test_a_streaming_code_pane_takes_the_new_palette_and_keeps_its_code(qtbot: Any) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    pane = CodePane("```python\n")
    qtbot.addWidget(pane)
    pane.resize(600, 200)
    pane.show()
    pane.append_plain("def f(x):\n    return x  # half")
    pane.colour()
    assert _lightness(pane) > 150
    try:
        apply_theme(app, "dark")
        assert _lightness(pane) < 110
        assert "def f(x):\n    return x  # half" in pane.toPlainText()
        assert not pane.closed
        pane.append_plain(" done\n```\n")
        assert pane.colour() == "" and pane.closed
        assert pane.codes == ["def f(x):\n    return x  # half done"]
    finally:
        apply_theme(app, "light")
    assert _lightness(pane) > 150
