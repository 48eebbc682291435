"""What an assistant message folds away: its thinking and each tool call, collapsed until
clicked (a header line with a disclosure marker, the body below it).
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontDatabase, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.ui.parts.markdown import MarkdownPane, blend
from vak_desktop.ui.parts.theme import follow_theme, on_theme


def short_id(entry_id: str) -> str:
    """`b3:1a2b3c4d…` → `1a2b3c4d`: enough to find an entry (`vak show`, recall)."""
    return entry_id.removeprefix("b3:")[:8]


def subtle(palette: QPalette) -> str:
    return blend(
        palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text), 0.55
    ).name()


def small_button(text: str, tip: str, name: str) -> QToolButton:
    """A flat tool button with its tooltip as its accessible name (message and card actions)."""
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setAccessibleName(tip)
    button.setObjectName(name)
    button.setAutoRaise(True)
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    return button


class Collapsible(QWidget):
    """A one-line header that shows or hides what is below it (collapsed at first)."""

    def __init__(self, title: str, body: QWidget, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.header = QToolButton()
        self.header.setObjectName(f"{name}Header")
        self.header.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.header.setArrowType(Qt.ArrowType.RightArrow)
        self.header.setCheckable(True)
        self.header.setAutoRaise(True)
        self.header.setCursor(Qt.CursorShape.PointingHandCursor)
        self.header.setMinimumWidth(1)  # its text is fitted to the column (`_fit_title`)
        follow_theme(self.header, lambda p: f"QToolButton {{ color: {subtle(p)}; border: none; }}")
        self.body = body
        body.setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.header, 0, Qt.AlignmentFlag.AlignLeft)
        inner = QHBoxLayout()
        inner.setContentsMargins(22, 0, 0, 4)
        inner.addWidget(body)
        layout.addLayout(inner)
        self.header.toggled.connect(self.set_expanded)
        self.set_title(title)

    def set_title(self, title: str, compact: str = "") -> None:
        """`title` in the header; where the column is too narrow for it, `compact` (a shorter
        form that keeps what matters), cut at its end: never elided in the middle, where Qt
        would cut a tool call's file name and evidence id alike."""
        self.title, self._compact = title, compact
        self.header.setAccessibleName(title)
        self._fit_title()

    def _fit_title(self) -> None:
        metrics = self.header.fontMetrics()
        room = self.width() - 48  # the arrow, the gap beside it and the header's margins
        text = self.title
        if room > 0 and metrics.horizontalAdvance(text) > room:
            text = self._compact or text
            if metrics.horizontalAdvance(text) > room:
                text = metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
        self.header.setText(text)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_title()

    @property
    def expanded(self) -> bool:
        return self.body.isVisibleTo(self)

    def set_expanded(self, expanded: bool) -> None:
        self.header.setChecked(expanded)
        self.header.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.body.setVisible(expanded)


class ThinkingSection(Collapsible):
    """The model's reasoning: collapsed, its header saying how long it is."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self.pane = MarkdownPane()
        super().__init__("Thinking…", self.pane, "thinking", parent)
        on_theme(self.pane, self._tint)
        self._tint(self.pane)

    def _tint(self, pane: MarkdownPane) -> None:
        """The reasoning in the subtle colour of the palette in force."""
        pane.setPalette(QPalette())  # inherit the new palette first, then tint its text
        palette = pane.palette()
        palette.setColor(QPalette.ColorRole.Text, QColor(subtle(self.palette())))
        pane.setPalette(palette)

    def append(self, chunk: str) -> None:
        self.pane.append_plain(chunk)
        self.set_title(f"Thinking… ({len(self.pane.source_text):,} characters)")

    def finish(self) -> None:
        self.set_title(f"Thought ({len(self.pane.source_text):,} characters)")

    def plain_text(self) -> str:
        return self.title


class ToolSection(Collapsible):
    """One tool call and, once it came back, its result: name, size, evidence id."""

    def __init__(self, call_id: str, name: str, arguments: dict[str, Any]) -> None:
        self.call_id = call_id
        self.name = name
        self.details = QLabel()
        self.details.setObjectName("toolDetails")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.details.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        args = json.dumps(arguments, ensure_ascii=False, indent=2)
        self._arguments = args if len(args) < 4000 else args[:3999] + "…"
        super().__init__("", self.details, "toolCall")
        self.result: tuple[int, bool, str] | None = None
        self._show(preview="")

    def set_result(self, chars: int, is_error: bool, evidence: str, preview: str) -> None:
        self.result = (chars, is_error, evidence)
        self._show(preview)

    def _show(self, preview: str) -> None:
        args = " ".join(self._arguments.split())
        call = f"⚙ {self.name}({args if len(args) <= 60 else args[:59] + '…'})"
        if self.result is None:
            self.set_title(f"{call}  — running…", f"⚙ {self.name} — running…")
            self.details.setText(f"arguments:\n{self._arguments}")
            return
        chars, is_error, evidence = self.result
        outcome = "error" if is_error else "result"
        where = f" · evidence {short_id(evidence)}" if evidence else ""
        self.set_title(
            f"{call}  → {outcome}, {chars:,} characters{where}",
            f"⚙ {self.name} → {'error, ' if is_error else ''}{chars:,} chars{where}",
        )
        shown = preview if len(preview) <= 2000 else preview[:2000] + "\n…"
        self.details.setText(
            f"arguments:\n{self._arguments}\n\n{outcome} ({chars:,} characters"
            f"{', evidence ' + evidence if evidence else ''}):\n{shown}"
        )

    def plain_text(self) -> str:
        return self.title
