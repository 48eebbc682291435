"""The main window: sidebar of chats, the model picker, the transcript, the composer, the status.

It only arranges the views and connects the service's signals to them; all the work happens in
the service.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QSplitter,
    QStatusBar,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.runtime import ModelBinding
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.ui.banner import ReachabilityBanner
from vak_desktop.ui.chat_service import ChatService, Reachability
from vak_desktop.ui.chat_view import ChatView
from vak_desktop.ui.composer import Composer
from vak_desktop.ui.model_picker import ModelPicker
from vak_desktop.ui.session_list import SessionList

DEFAULT_SIZE = (1100, 750)
_OUTCOME_WORDS = {"cancelled": "stopped", "failed": "failed", "degraded": "degraded"}


class MainWindow(QMainWindow):
    """One window over one `ChatService`."""

    def __init__(self, service: ChatService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.service = service
        self.setWindowTitle("Vak")
        self.resize(*DEFAULT_SIZE)
        self.setMinimumSize(720, 480)

        self.banner = ReachabilityBanner(service)
        self.sessions = SessionList(service)
        self.picker = ModelPicker(service)
        self.chat = ChatView(service)  # it connects itself to the service's turn events
        self.composer = Composer(service)

        pane = QWidget()
        pane.setObjectName("chatPane")
        pane_layout = QVBoxLayout(pane)
        pane_layout.setContentsMargins(18, 14, 18, 14)
        pane_layout.setSpacing(12)
        pane_layout.addWidget(self.picker)
        pane_layout.addWidget(self.chat, 1)
        pane_layout.addWidget(self.composer)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        splitter.setHandleWidth(1)
        splitter.addWidget(self.sessions)
        splitter.addWidget(pane)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([250, DEFAULT_SIZE[0] - 250])
        self.sessions.setMinimumWidth(190)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.banner)
        layout.addWidget(splitter, 1)
        self.setCentralWidget(central)

        self.model_status = QLabel()
        self.tokens_status = QLabel()
        self.host_status = QLabel()
        status = QStatusBar()
        status.setSizeGripEnabled(False)
        status.addPermanentWidget(self.model_status)
        status.addPermanentWidget(self.tokens_status)
        status.addPermanentWidget(self.host_status)
        self.setStatusBar(status)

        self._connect()
        self._show_model(service.model)
        self._show_reachability(service.reachability)
        self.composer.input.setFocus()

    def _connect(self) -> None:
        service = self.service
        service.sessionOpened.connect(self._open)
        service.turnFinished.connect(self._turn_finished)
        service.notice.connect(lambda message: self.statusBar().showMessage(message, 10_000))
        service.modelChanged.connect(self._show_model)
        service.modelBound.connect(self._show_binding)
        service.reachabilityChanged.connect(self._show_reachability)

    # -- transcript -------------------------------------------------------------------------

    def _open(self, session: str) -> None:
        self.tokens_status.clear()
        self.composer.input.setFocus()

    def _turn_finished(self, event: TurnFinished) -> None:
        usage = event.usage
        if usage.prompt_tokens() or usage.output_tokens:
            tokens = f"{usage.prompt_tokens():,} prompt → {usage.output_tokens:,} output tokens"
        else:
            tokens = "no token counts reported"
        text = f"Last turn: {tokens}"
        if event.outcome in _OUTCOME_WORDS:
            text += f" ({_OUTCOME_WORDS[event.outcome]})"
        self.tokens_status.setText(text)

    # -- status -----------------------------------------------------------------------------

    def _show_model(self, model: str) -> None:
        self.model_status.setText(f"Model: {model}" if model else "No model selected")

    def _show_binding(self, binding: ModelBinding) -> None:
        window = binding.declared_window
        suffix = f" · {window:,}-token window" if window else ""
        self.model_status.setText(f"Model: {binding.model}{suffix}")

    def _show_reachability(self, state: Reachability) -> None:
        words = {"reachable": "connected", "unreachable": "not reachable", "checking": "checking…"}
        self.host_status.setText(f"Ollama {words.get(state.state, '…')} · {state.host}")
