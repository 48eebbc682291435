"""Research synthesis card: {question?, takeaways: [str], sources: [{title, url}]}.

Source links open in the browser; only http(s) addresses become links.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from vak_desktop.ui.cards.frame import body_label, caption, text_of

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
    sources = [s if isinstance(s, dict) else {"title": s} for s in payload.get("sources") or []]
    if sources:
        layout.addWidget(caption(f"Sources ({len(sources)})", body, bold=True, size="small"))
        for n, source in enumerate(sources, start=1):
            layout.addWidget(_source_line(n, source))
    return body


def _source_line(n: int, source: dict[str, Any]) -> QLabel:
    url = text_of(source.get("url"))
    title = text_of(source.get("title")) or url or "untitled source"
    label = QLabel()
    label.setObjectName("source")
    label.setWordWrap(True)
    if url.startswith(("http://", "https://")):
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setOpenExternalLinks(True)
        label.setText(f'[{n}] <a href="{html.escape(url, quote=True)}">{html.escape(title)}</a>')
        label.setToolTip(url)
    else:
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setText(f"[{n}] {title}" + (f" ({url})" if url and url != title else ""))
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
    return label


def title_of(payload: dict[str, Any]) -> str:
    return ""  # the question is the body's first line
