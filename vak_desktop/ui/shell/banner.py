"""The banner across the top of the window that says plainly when the model server is down."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from vak_desktop.ui.chat.chat_service import CHECKING, ChatService, Reachability


class ReachabilityBanner(QFrame):
    """Visible while the provider is unreachable: what is wrong, how to fix it, and Retry."""

    def __init__(self, service: ChatService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self._service = service
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.retry = QPushButton("Retry")
        self.retry.setObjectName("retryButton")
        self.retry.clicked.connect(lambda: service.refresh_models())
        layout = QHBoxLayout(self)
        layout.setContentsMargins(18, 10, 18, 10)
        layout.setSpacing(14)
        layout.addWidget(self.message, 1)
        layout.addWidget(self.retry, 0, Qt.AlignmentFlag.AlignVCenter)
        service.reachabilityChanged.connect(self._show)
        self._show(service.reachability)

    def _show(self, state: Reachability) -> None:
        if state.unreachable:
            self.message.setText(
                f"<b>Ollama is not reachable at {escape(state.host)}.</b><br>"
                "Start it with <code>ollama serve</code> in a terminal, or set "
                "<code>OLLAMA_HOST</code> to the address it runs at, then press Retry."
            )
            self.message.setToolTip(state.reason)
            self.retry.setEnabled(True)
            self.retry.setText("Retry")
            self.show()
        elif state.state == CHECKING:
            self.retry.setEnabled(False)
            self.retry.setText("Checking…")
        else:
            self.hide()
