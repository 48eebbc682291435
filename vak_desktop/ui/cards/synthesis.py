"""Research synthesis card: {title?, question?, takeaways: [str], sources: [{title, url,
snippet?}], body?}. Source links open in the browser; only http(s) addresses become links.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from vak_desktop.ui.cards.frame import body_label, caption, link_label, text_of

KIND_LABEL = "Research"


def build(payload: dict[str, Any]) -> QWidget:
    body = QWidget()
    layout = QVBoxLayout(body)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)
    if payload.get("question"):
        question = body_label(text_of(payload["question"]))
        font = question.font()
        font.setItalic(True)
        question.setFont(font)
        layout.addWidget(question)
    takeaways = [text_of(t) for t in payload.get("takeaways") or []]
    if takeaways:
        layout.addWidget(caption("Takeaways", body, bold=True, size="small"))
        for n, takeaway in enumerate(takeaways, start=1):
            line = body_label(f"{n}.  {takeaway}")
            line.setObjectName("takeaway")
            layout.addWidget(line)
    if payload.get("body"):
        layout.addWidget(body_label(text_of(payload["body"])))
    sources = [s if isinstance(s, dict) else {"title": s} for s in payload.get("sources") or []]
    if sources:
        layout.addWidget(caption(f"Sources ({len(sources)})", body, bold=True, size="small"))
        for n, source in enumerate(sources, start=1):
            layout.addWidget(_source(n, source, body))
    return body


def _source(n: int, source: dict[str, Any], body: QWidget) -> QWidget:
    url = text_of(source.get("url"))
    title = text_of(source.get("title")) or url or "untitled source"
    row = QWidget()
    layout = QVBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    line = QHBoxLayout()
    line.setSpacing(4)
    line.addWidget(QLabel(f"[{n}]"))
    link = link_label(url, title)
    link.setObjectName("source")
    line.addWidget(link, 1)
    layout.addLayout(line)
    if source.get("snippet"):
        layout.addWidget(caption(text_of(source["snippet"]), body, size="small"))
    return row


def title_of(payload: dict[str, Any]) -> str:
    return text_of(payload.get("title"))
