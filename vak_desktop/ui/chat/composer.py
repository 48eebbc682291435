"""Where the user writes: a text box that sends on Enter, with Send and Stop, image attachments
for a model that can see, and a thinking toggle for a model that can think.

Which of the two extras show depends on the bound model's capabilities (`/api/show`, through
the service); an attachment is read when it is added, so a file that cannot be read is refused
then, with the reason, instead of failing the turn later.
"""

from __future__ import annotations

import base64
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QImageReader, QKeyEvent, QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.runtime import ModelBinding
from vak_desktop.ui.chat.chat_service import ChatService
from vak_desktop.ui.parts.glyphs import glyph

MAX_IMAGE_BYTES = 20 * 1024 * 1024
IMAGE_FILTER = "Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp)"
WARM_AFTER_MS = 800  # a pause this long in typing sends the warm request
THINK_CHOICES: tuple[tuple[str, bool | None], ...] = (
    ("Thinking: model decides", None),
    ("Thinking on", True),
    ("Thinking off", False),
)

THINK_TIP = "Whether the model thinks before it answers"


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
    """Sends the text (and any images) to the service and offers Stop while a turn runs."""

    def __init__(self, service: ChatService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._service = service
        self.input = MessageInput()
        self.input.setObjectName("composer")
        self.input.setAccessibleName("Message")
        self.input.setPlaceholderText(
            "Message the model — Enter to send, Shift+Enter for a new line"
        )
        self.input.setTabChangesFocus(True)
        lines = self.input.fontMetrics().lineSpacing()
        self.input.setFixedHeight(lines * 3 + 24)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("sendButton")
        self.send_button.setAccessibleName("Send the message")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setAccessibleName("Stop the answer")
        self.attach_button = QToolButton()
        self.attach_button.setObjectName("attachButton")
        self.attach_button.setText(glyph("🖼 ", "") + "Attach image…")
        self.attach_button.setToolTip("Attach an image (this model can see images)")
        self.attach_button.setAccessibleName("Attach an image")
        # Three states that read differently (a checkable button looked the same on and
        # off): the model decides (the default: nothing is sent), on, off.
        self.think_choice = QComboBox()
        self.think_choice.setObjectName("thinkChoice")
        for label, value in THINK_CHOICES:
            self.think_choice.addItem(glyph("💭 ", "") + label, value)
        self.think_choice.setToolTip(THINK_TIP)
        self.think_choice.setAccessibleName("Thinking")
        self.think_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        # the style sheet's padding and arrow are not in the contents' size: room for them,
        # so the longest choice is never cut ("model decide")
        longest = max(self.think_choice.itemText(i) for i in range(self.think_choice.count()))
        room = self.think_choice.fontMetrics().horizontalAdvance(longest + "  ") + 48
        self.think_choice.setMinimumWidth(room)
        self.attachments = QLabel()
        self.attachments.setObjectName("attachments")
        self.clear_attachments = QToolButton()
        self.clear_attachments.setObjectName("clearAttachments")
        self.clear_attachments.setText("✕")
        self.clear_attachments.setToolTip("Remove the attached images")
        self.clear_attachments.setAccessibleName("Remove the attached images")
        self.clear_attachments.setAutoRaise(True)
        extras = QHBoxLayout()
        extras.setContentsMargins(0, 0, 0, 0)
        extras.setSpacing(6)
        extras.addWidget(self.attach_button)
        extras.addWidget(self.think_choice)
        extras.addWidget(self.attachments)
        extras.addWidget(self.clear_attachments)
        extras.addStretch(1)
        self._extras = QWidget()
        self._extras.setLayout(extras)
        buttons = QVBoxLayout()
        buttons.setSpacing(6)
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(10)
        row.addWidget(self.input, 1)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self._extras)
        layout.addLayout(row)
        self.input.submitted.connect(self.submit)
        self.send_button.clicked.connect(self.submit)
        self.stop_button.clicked.connect(lambda: service.stop())
        self.attach_button.clicked.connect(self._choose_images)
        self.clear_attachments.clicked.connect(self.remove_images)
        self.think_choice.currentIndexChanged.connect(self._think_chosen)
        self.input.textChanged.connect(self._update)
        # a pause in typing prefills the model's cache with the next request (`service.warm`)
        self._warm_timer = QTimer(self)
        self._warm_timer.setSingleShot(True)
        self._warm_timer.setInterval(WARM_AFTER_MS)
        self._warm_timer.timeout.connect(lambda: service.warm(self.input.toPlainText()))
        self.input.textChanged.connect(self._warm_timer.start)
        service.busyChanged.connect(self._update)
        service.modelChanged.connect(lambda _model: self._bound(service.binding))
        service.modelBound.connect(self._bound)
        service.turnRefused.connect(self._give_back)
        self._sent = ""
        self._sent_images: list[tuple[str, str]] = []
        self._images: list[tuple[str, str]] = []  # (file name, base64 bytes)
        self._bound(service.binding)

    @property
    def images(self) -> tuple[str, ...]:
        return tuple(data for _name, data in self._images)

    def submit(self) -> None:
        self._warm_timer.stop()
        text = self.input.toPlainText()
        if self._service.send(text, self.images if self._can("vision") else ()):
            self._sent, self._sent_images = text, self._images
            self.input.clear()
            self.remove_images()

    def attach_images(self, paths: list[str | Path]) -> list[str]:
        """Attach image files; returns why each refused one was refused."""
        problems = []
        for raw in paths:
            path = Path(raw)
            try:
                data = path.read_bytes()
            except OSError as exc:
                problems.append(f"{path.name}: {exc.strerror or exc}")
                continue
            if len(data) > MAX_IMAGE_BYTES:
                problems.append(f"{path.name}: larger than {MAX_IMAGE_BYTES // 2**20} MB")
                continue
            if not QImageReader.imageFormat(str(path)):
                problems.append(f"{path.name}: not an image this app can read")
                continue
            self._images.append((path.name, base64.b64encode(data).decode("ascii")))
        self._show_images()
        if problems:
            self.attachments.setToolTip("\n".join(problems))
        return problems

    def remove_images(self) -> None:
        self._images = []
        self._show_images()

    def _choose_images(self) -> None:
        paths, _filter = QFileDialog.getOpenFileNames(self, "Attach images", "", IMAGE_FILTER)
        if paths:
            self.attach_images(list(paths))

    def _show_images(self) -> None:
        names = [name for name, _data in self._images]
        self.attachments.setText(glyph("📎 ", "Attached: ") + ", ".join(names) if names else "")
        self.attachments.setVisible(bool(names))
        self.clear_attachments.setVisible(bool(names))

    def _can(self, capability: str) -> bool:
        return capability in self._service.capabilities

    def _bound(self, _binding: ModelBinding | None) -> None:
        vision, thinking = self._can("vision"), self._can("thinking")
        bound = bool(self._service.model)
        self.attach_button.setVisible(vision)
        # Shown for every bound model, so that a choice with no effect says so instead of
        # vanishing: disabled, with the reason, when the model has no thinking switch.
        self.think_choice.setVisible(bound)
        self.think_choice.setEnabled(thinking)
        self.think_choice.setToolTip(
            THINK_TIP
            if thinking
            else "Think has no effect here: this model, as its provider "
            "describes it, has no thinking switch"
        )
        if not vision:
            self.remove_images()
        self._extras.setVisible(vision or bound or bool(self._images))
        self._think_chosen()
        self._update()

    def _think_chosen(self, _index: int = 0) -> None:
        value = self.think_choice.currentData()
        self._service.set_think(value if self._can("thinking") else None)

    def _give_back(self, _why: str) -> None:
        """A turn that could not start wrote nothing: put its text back to send again."""
        if self._sent and not self.input.toPlainText().strip():
            self.input.setPlainText(self._sent)
            self.input.moveCursor(QTextCursor.MoveOperation.End)
            if not self._images:
                self._images = self._sent_images
                self._show_images()
        self._sent, self._sent_images = "", []

    def _update(self) -> None:
        busy = self._service.busy
        ready = bool(self.input.toPlainText().strip()) and bool(self._service.model)
        self.send_button.setEnabled(ready and not busy)
        self.stop_button.setEnabled(busy)
