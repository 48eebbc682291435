"""The card for a type we do not know (or a payload its card could not read): its JSON."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from vak_desktop.ui.cards.frame import caption

KIND_LABEL = "Data"
MAX_CHARS = 4000


def build(payload: dict[str, Any], note: str = "") -> QWidget:
    body = QWidget()
    layout = QVBoxLayout(body)
    layout.setContentsMargins(0, 0, 0, 0)
    if note:
        layout.addWidget(caption(note, body, size="small"))
    text = json.dumps(payload, ensure_ascii=False, indent=2, default=str)
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS] + "\n…"
    label = QLabel(text)
    label.setObjectName("cardJson")
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    layout.addWidget(label)
    return body


def title_of(payload: dict[str, Any]) -> str:
    return ""
