"""Where the user writes: a text box that sends on Enter, with Send and Stop."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from vak_desktop.ui.chat_service import ChatService


class MessageInput(QPlainTextEdit):
    """Enter sends; Shift+Enter starts a new line."""

    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            event.accept()
            self.submitted.emit()
            return
        super().keyPressEvent(event)


class Composer(QWidget):
    """Sends the text to the service and offers Stop while a turn runs."""

    def __init__(self, service: ChatService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._service = service
        self.input = MessageInput()
        self.input.setObjectName("composer")
        self.input.setPlaceholderText(
            "Message the model — Enter to send, Shift+Enter for a new line"
        )
        self.input.setTabChangesFocus(True)
        lines = self.input.fontMetrics().lineSpacing()
        self.input.setFixedHeight(lines * 3 + 24)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("sendButton")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stopButton")
        buttons = QVBoxLayout()
        buttons.setSpacing(6)
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(10)
        layout.addWidget(self.input, 1)
        layout.addLayout(buttons)
        self.input.submitted.connect(self.submit)
        self.send_button.clicked.connect(self.submit)
        self.stop_button.clicked.connect(lambda: service.stop())
        self.input.textChanged.connect(self._update)
        service.busyChanged.connect(self._update)
        service.modelChanged.connect(self._update)
        service.turnRefused.connect(self._give_back)
        self._sent = ""
        self._update()

    def submit(self) -> None:
        text = self.input.toPlainText()
        if self._service.send(text):
            self._sent = text
            self.input.clear()

    def _give_back(self, _why: str) -> None:
        """A turn that could not start wrote nothing: put its text back to send again."""
        if self._sent and not self.input.toPlainText().strip():
            self.input.setPlainText(self._sent)
            self.input.moveCursor(QTextCursor.MoveOperation.End)
        self._sent = ""

    def _update(self) -> None:
        busy = self._service.busy
        ready = bool(self.input.toPlainText().strip()) and bool(self._service.model)
        self.send_button.setEnabled(ready and not busy)
        self.stop_button.setEnabled(busy)
