"""Entity card: one thing and its facts — {name, kind?, attributes: {k: v}, summary?}."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QVBoxLayout, QWidget

from vak_desktop.ui.cards.frame import body_label, caption, text_of

KIND_LABEL = "Entity"


def build(payload: dict[str, Any]) -> QWidget:
    body = QWidget()
    layout = QVBoxLayout(body)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)
    name = body_label(text_of(payload["name"]), bold=True, point_scale=1.35)
    name.setObjectName("entityName")
    layout.addWidget(name)
    if payload.get("kind"):
        layout.addWidget(caption(text_of(payload["kind"]), body))
    if payload.get("summary"):
        layout.addWidget(body_label(text_of(payload["summary"])))
    attributes = payload.get("attributes") or {}
    if isinstance(attributes, dict) and attributes:
        grid = QGridLayout()
        grid.setHorizontalSpacing(16)
        grid.setVerticalSpacing(3)
        for row, (key, value) in enumerate(attributes.items()):
            key_label = caption(str(key), body)
            grid.addWidget(key_label, row, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(body_label(text_of(value)), row, 1)
        grid.setColumnStretch(1, 1)
        layout.addLayout(grid)
    return body


def title_of(payload: dict[str, Any]) -> str:
    return ""  # the name is the body's heading
