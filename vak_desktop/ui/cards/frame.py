"""The frame every card shares: its title, 👍 / 👎 and dismiss, and the stub a dismissed card
leaves behind (with Restore).

A card is built from a `Presentation` ledger entry (never from a tool call's arguments) and
reports clicks through callbacks; the chat view turns them into ledger entries.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from vak_desktop.ui.parts.glyphs import glyph
from vak_desktop.ui.parts.markdown import blend
from vak_desktop.ui.parts.message_sections import small_button, subtle
from vak_desktop.ui.parts.theme import follow_theme

OnVerdict = Callable[[str, str], None]  # (presentation id, "up" | "down")
OnSelection = Callable[[str, str], None]  # (presentation id, "dismiss" | "restore")


def text_of(value: Any) -> str:
    """A payload value as one line of text (None → empty, numbers with separators)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.6g}" if abs(value) < 1e15 else repr(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(text_of(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {text_of(v)}" for k, v in value.items())
    return str(value)


def caption(text: str, widget: QWidget, *, bold: bool = False, size: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    extra = (" font-weight: bold;" if bold else "") + (f" font-size: {size};" if size else "")
    return follow_theme(label, lambda p: f"color: {subtle(p)};{extra}")


def link_label(url: str, title: str) -> QLabel:
    """`title` linking to `url` (only http(s) become links; anything else is plain text)."""
    label = QLabel()
    label.setWordWrap(True)
    if url.startswith(("http://", "https://")):
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setOpenExternalLinks(True)
        label.setText(f'<a href="{html.escape(url, quote=True)}">{html.escape(title)}</a>')
        label.setToolTip(url)
    else:
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setText(title if title == url or not url else f"{title} ({url})")
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
    return label


def body_label(text: str, *, bold: bool = False, point_scale: float = 1.0) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if bold or point_scale != 1.0:
        font = label.font()
        font.setBold(bold)
        if point_scale != 1.0:
            font.setPointSizeF(font.pointSizeF() * point_scale)
        label.setFont(font)
    return label


def _card_style(palette: QPalette) -> str:
    base = palette.color(QPalette.ColorRole.Base)
    edge = blend(base, palette.color(QPalette.ColorRole.Text), 0.2).name()
    checked = blend(base, palette.color(QPalette.ColorRole.Highlight), 0.25).name()
    return (
        f"QFrame#card {{ background: {base.name()}; border: 1px solid {edge};"
        f" border-radius: 8px; }} QFrame#card QToolButton:checked {{ background: {checked};"
        " border-radius: 4px; }"
    )


class CardFrame(QFrame):
    """A card: a header (kind, title, 👍 👎 ✕) over the body its type builds."""

    def __init__(
        self,
        presentation_id: str,
        kind_label: str,
        title: str,
        body: QWidget,
        *,
        verdict: str = "",
        on_verdict: OnVerdict | None = None,
        on_selection: OnSelection | None = None,
    ) -> None:
        super().__init__()
        self.setObjectName("card")
        self.presentation_id = presentation_id
        self.body = body
        follow_theme(self, _card_style)
        self.setAccessibleName(f"{kind_label} card: {title}" if title else f"{kind_label} card")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 10)
        layout.setSpacing(6)
        header = QHBoxLayout()
        header.setSpacing(8)
        self.kind = caption(kind_label.upper(), self, bold=True, size="small")
        self.kind.setObjectName("cardKind")
        header.addWidget(self.kind)
        self.title = body_label(title, bold=True)
        self.title.setObjectName("cardTitle")
        self.title.setVisible(bool(title))
        header.addWidget(self.title, 1)
        if not title:
            header.addStretch(1)
        self.up = small_button(glyph("👍", "Helpful"), "This card is helpful", "cardUp")
        self.down = small_button(glyph("👎", "Not helpful"), "This card is not helpful", "cardDown")
        self.dismiss = small_button("✕", "Dismiss this card", "cardDismiss")
        self.up.setCheckable(True)
        self.down.setCheckable(True)
        self.set_verdict(verdict)
        for button in (self.up, self.down, self.dismiss):
            header.addWidget(button)
        layout.addLayout(header)
        layout.addWidget(body)
        if on_verdict is not None:
            # a second click on the verdict given takes it back ("clear")
            self.up.clicked.connect(
                lambda: on_verdict(presentation_id, "up" if self.up.isChecked() else "clear")
            )
            self.down.clicked.connect(
                lambda: on_verdict(presentation_id, "down" if self.down.isChecked() else "clear")
            )
        if on_selection is not None:
            self.dismiss.clicked.connect(lambda: on_selection(presentation_id, "dismiss"))

    def set_verdict(self, verdict: str) -> None:
        self.up.setChecked(verdict == "up")
        self.down.setChecked(verdict == "down")


class DismissedStub(QWidget):
    """What a dismissed card leaves: one quiet line with Restore."""

    def __init__(
        self, presentation_id: str, kind_label: str, title: str, on_selection: OnSelection | None
    ) -> None:
        super().__init__()
        self.setObjectName("dismissedCard")
        self.presentation_id = presentation_id
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 0, 0)
        kind = kind_label.lower()
        name = f"{kind} card “{title}”" if title else f"{kind} card"
        self.label = caption(f"Dismissed {name}", self, size="small")
        self.label.setWordWrap(False)
        self.restore = QToolButton()
        self.restore.setObjectName("cardRestore")
        self.restore.setText("Restore")
        self.restore.setToolTip("Show this card again")
        self.restore.setAccessibleName(f"Restore the dismissed {name}")
        self.restore.setAutoRaise(True)
        self.restore.setCursor(Qt.CursorShape.PointingHandCursor)
        follow_theme(
            self.restore,
            lambda p: (
                f"QToolButton {{ color: {p.color(QPalette.ColorRole.Link).name()};"
                " font-size: small; }"
            ),
        )
        layout.addWidget(self.label)
        layout.addWidget(self.restore)
        layout.addStretch(1)
        if on_selection is not None:
            self.restore.clicked.connect(lambda: on_selection(presentation_id, "restore"))
