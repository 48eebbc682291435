"""Checklist card: {title?, items: [{text | label, done?, note?}]}, with how many are done."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QGridLayout, QVBoxLayout, QWidget

from vak_desktop.ui.cards.frame import body_label, caption, text_of
from vak_desktop.ui.parts.message_sections import subtle
from vak_desktop.ui.parts.theme import follow_theme

KIND_LABEL = "Checklist"


def build(payload: dict[str, Any]) -> QWidget:
    items = [i if isinstance(i, dict) else {"text": i} for i in payload.get("items") or []]
    body = QWidget()
    layout = QVBoxLayout(body)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(3)
    grid = QGridLayout()
    grid.setHorizontalSpacing(8)
    grid.setVerticalSpacing(2)
    row = 0
    for item in items:
        done = bool(item.get("done"))
        mark = body_label("☑" if done else "☐", point_scale=1.2)
        mark.setObjectName("checkDone" if done else "checkOpen")
        mark.setAccessibleName("done" if done else "not done")
        text = body_label(text_of(item.get("text", item.get("label"))))
        if done:
            follow_theme(text, lambda p: f"color: {subtle(p)};")
        grid.addWidget(mark, row, 0)
        grid.addWidget(text, row, 1)
        row += 1
        if item.get("note"):
            grid.addWidget(caption(text_of(item["note"]), body, size="small"), row, 1)
            row += 1
    grid.setColumnStretch(1, 1)
    layout.addLayout(grid)
    done_count = sum(1 for i in items if i.get("done"))
    layout.addWidget(caption(f"{done_count} of {len(items)} done", body, size="small"))
    return body


def title_of(payload: dict[str, Any]) -> str:
    return text_of(payload.get("title"))
