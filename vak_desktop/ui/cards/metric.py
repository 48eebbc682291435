"""Metric card: one number that matters — {label, value, unit?, delta?, as_of?, source?}."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from vak_desktop.ui.cards.frame import body_label, caption, text_of
from vak_desktop.ui.parts import theme

KIND_LABEL = "Metric"


def _delta_text(delta: Any) -> tuple[str, str]:
    """The change as shown (▲ / ▼ and its sign) and its colour's name in `theme` ('': none)."""
    if isinstance(delta, (int, float)) and not isinstance(delta, bool):
        if delta > 0:
            return f"▲ +{text_of(delta)}", "SUCCESS"
        if delta < 0:
            return f"▼ {text_of(delta)}", "DANGER"
        return "● no change", ""
    text = text_of(delta)
    if text.startswith("-") or text.startswith("−"):
        return f"▼ {text}", "DANGER"
    if text.startswith("+"):
        return f"▲ {text}", "SUCCESS"
    return text, ""


def build(payload: dict[str, Any]) -> QWidget:
    body = QWidget()
    layout = QVBoxLayout(body)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    label = text_of(payload.get("label"))
    if label:
        layout.addWidget(caption(label, body))
    row = QHBoxLayout()
    row.setSpacing(8)
    value = body_label(text_of(payload["value"]), bold=True, point_scale=2.0)
    value.setObjectName("metricValue")
    row.addWidget(value)
    unit = text_of(payload.get("unit"))
    if unit:
        row.addWidget(caption(unit, body, size="large"))
    if payload.get("delta") not in (None, ""):
        text, color = _delta_text(payload["delta"])
        delta = body_label(text, bold=True)
        delta.setObjectName("metricDelta")
        if color:
            theme.follow_theme(delta, lambda _: f"color: {getattr(theme, color)};")
        row.addWidget(delta)
    row.addStretch(1)
    layout.addLayout(row)
    facts = [f"as of {text_of(payload['as_of'])}" if payload.get("as_of") else ""]
    facts.append(f"source: {text_of(payload['source'])}" if payload.get("source") else "")
    line = " · ".join(f for f in facts if f)
    if line:
        layout.addWidget(caption(line, body, size="small"))
    return body


def title_of(payload: dict[str, Any]) -> str:
    return text_of(payload.get("title"))  # the label is the caption above the value
