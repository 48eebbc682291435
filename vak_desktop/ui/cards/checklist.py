"""Checklist card: {title?, items: [{text, done}]}, with how many are done."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from vak_desktop.ui.cards.frame import body_label, caption, subtle_color, text_of

KIND_LABEL = "Checklist"


def build(payload: dict[str, Any]) -> QWidget:
    items = [i if isinstance(i, dict) else {"text": i} for i in payload.get("items") or []]
    body = QWidget()
    layout = QVBoxLayout(body)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(3)
    done = sum(1 for i in items if i.get("done"))
    for item in items:
        row = QHBoxLayout()
        row.setSpacing(8)
        mark = body_label("☑" if item.get("done") else "☐", point_scale=1.2)
        mark.setObjectName("checkDone" if item.get("done") else "checkOpen")
        mark.setAccessibleName("done" if item.get("done") else "not done")
        text = body_label(text_of(item.get("text")))
        if item.get("done"):
            text.setStyleSheet(f"color: {subtle_color(body)};")
        row.addWidget(mark)
        row.addWidget(text, 1)
        layout.addLayout(row)
    layout.addWidget(caption(f"{done} of {len(items)} done", body, size="small"))
    return body


def title_of(payload: dict[str, Any]) -> str:
    return text_of(payload.get("title"))
