"""The line above the composer that says, in full, what the runtime noticed.

The status bar's message area is what its permanent widgets leave over — at the default size a
dozen characters — so a runtime notice (a reset and why, a model slow to start answering, an
answer cut at its output limit, a compaction's result) showed there as "the answer". Those
notices are how the window keeps a cut from being silent, so the newest one is also shown here
whole, word-wrapped, until it is dismissed, replaced by a later one, or `SHOWN_MS` passes.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from vak_desktop.ui.parts import theme

SHOWN_MS = 20_000  # long enough to read two lines twice


class NoticeLine(QFrame):
    """The newest notice, whole; hidden when there is none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("noticeLine")
        self.setAccessibleName("Notice")
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        theme.follow_theme(self.text, lambda _: f"color: {theme.WARNING};")
        self.dismiss = QToolButton()
        self.dismiss.setText("×")
        self.dismiss.setAccessibleName("Dismiss the notice")
        self.dismiss.setToolTip("Dismiss the notice")
        self.dismiss.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.dismiss, 0, Qt.AlignmentFlag.AlignTop)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SHOWN_MS)
        self._timer.timeout.connect(self.hide)
        self.hide()

    def show_notice(self, message: str) -> None:
        """Show `message` in place of any earlier notice, for `SHOWN_MS`."""
        message = message.strip()
        if not message:
            return
        self.text.setText(f"⚠ {message[:1].upper()}{message[1:]}")
        self.show()
        self._timer.start()
