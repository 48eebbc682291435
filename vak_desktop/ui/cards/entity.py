"""Entity card: one thing and its facts.

Two shapes are read: {name, kind?, attributes: {k: v}, summary?} and the card library's
{title, entity_type, fields: [{label, value}], summary?, url?} (the title is the frame's).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QVBoxLayout, QWidget

from vak_desktop.ui.cards.frame import body_label, caption, link_label, text_of

KIND_LABEL = "Entity"


def facts(payload: dict[str, Any]) -> list[tuple[str, Any]]:
    """(label, value) pairs from `attributes` (a mapping) or `fields` (a list of pairs)."""
    attributes = payload.get("attributes")
    if isinstance(attributes, dict):
        return [(str(k), v) for k, v in attributes.items()]
    out = []
    for field in payload.get("fields") or []:
        if isinstance(field, dict):
            out.append((text_of(field.get("label")), field.get("value")))
    return out


def build(payload: dict[str, Any]) -> QWidget:
    if not payload.get("name") and not payload.get("title"):
        raise KeyError("name")
    body = QWidget()
    layout = QVBoxLayout(body)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)
    if payload.get("name"):
        name = body_label(text_of(payload["name"]), bold=True, point_scale=1.35)
        name.setObjectName("entityName")
        layout.addWidget(name)
    kind = payload.get("kind") or payload.get("entity_type")
    if kind:
        layout.addWidget(caption(text_of(kind), body))
    if payload.get("summary"):
        layout.addWidget(body_label(text_of(payload["summary"])))
    pairs = facts(payload)
    if pairs:
        grid = QGridLayout()
        grid.setHorizontalSpacing(16)
        grid.setVerticalSpacing(3)
        for row, (key, value) in enumerate(pairs):
            grid.addWidget(caption(key, body), row, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(body_label(text_of(value)), row, 1)
        grid.setColumnStretch(1, 1)
        layout.addLayout(grid)
    if payload.get("url"):
        layout.addWidget(link_label(text_of(payload["url"]), text_of(payload["url"])))
    return body


def title_of(payload: dict[str, Any]) -> str:
    return text_of(payload.get("title"))  # a `name` is the body's heading instead
