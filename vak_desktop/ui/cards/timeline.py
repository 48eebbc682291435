"""Timeline card: {title?, events: [{when, what | label, detail?}]}, in the order given."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from vak_desktop.ui.cards.frame import body_label, caption, text_of
from vak_desktop.ui.parts.theme import follow_theme

KIND_LABEL = "Timeline"


def build(payload: dict[str, Any]) -> QWidget:
    events = [e if isinstance(e, dict) else {"what": e} for e in payload.get("events") or []]
    body = QWidget()
    grid = QGridLayout(body)
    grid.setContentsMargins(0, 0, 0, 0)
    grid.setHorizontalSpacing(10)
    grid.setVerticalSpacing(6)
    row = 0
    for event in events:
        dot = QLabel("●")
        follow_theme(dot, lambda p: f"color: {p.color(QPalette.ColorRole.Highlight).name()};")
        grid.addWidget(dot, row, 0, Qt.AlignmentFlag.AlignTop)
        when = caption(text_of(event.get("when")), body, bold=True)
        when.setObjectName("timelineWhen")
        grid.addWidget(when, row, 1, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(body_label(text_of(event.get("what", event.get("label")))), row, 2)
        row += 1
        if event.get("detail"):
            grid.addWidget(caption(text_of(event["detail"]), body, size="small"), row, 2)
            row += 1
    grid.setColumnStretch(2, 1)
    if not events:
        grid.addWidget(caption("no events", body), 0, 0)
    return body


def title_of(payload: dict[str, Any]) -> str:
    return text_of(payload.get("title"))
