"""The sidebar: every chat, the most recently active first, and a button for a new one."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.ui.chat_service import ChatService

SESSION_ID = Qt.ItemDataRole.UserRole


class SessionList(QWidget):
    """Lists the service's sessions; picking one opens it. Locked while a turn runs."""

    def __init__(self, service: ChatService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._service = service
        title = QLabel("Chats")
        title.setObjectName("sidebarTitle")
        self.new_chat = QPushButton("New chat")
        self.new_chat.setObjectName("newChatButton")
        self.new_chat.clicked.connect(lambda: service.new_session())
        self.list = QListWidget()
        self.list.setObjectName("sessionList")
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentItemChanged.connect(self._picked)
        header = QHBoxLayout()
        header.addWidget(title, 1)
        header.addWidget(self.new_chat)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 14, 8, 12)
        layout.setSpacing(10)
        layout.addLayout(header)
        layout.addWidget(self.list, 1)
        service.sessionsChanged.connect(self.reload)
        service.sessionOpened.connect(self._select)
        service.busyChanged.connect(self._lock)
        self.reload()

    def reload(self) -> None:
        """List the sessions again, keeping the shown one selected."""
        self.list.blockSignals(True)
        try:
            self.list.clear()
            for summary in self._service.sessions():
                item = QListWidgetItem(summary.title)
                item.setData(SESSION_ID, summary.id)
                turns = f"{summary.turns} turn" + ("" if summary.turns == 1 else "s")
                item.setToolTip(f"{summary.title}\n{turns} · {summary.model or 'no model'}")
                self.list.addItem(item)
            self._select(self._service.session or "")
        finally:
            self.list.blockSignals(False)

    def _select(self, session: str) -> None:
        blocked = self.list.blockSignals(True)
        try:
            self.list.setCurrentRow(-1)
            for row in range(self.list.count()):
                if self.list.item(row).data(SESSION_ID) == session:
                    self.list.setCurrentRow(row)
                    break
        finally:
            self.list.blockSignals(blocked)

    def _picked(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        if item is not None:
            self._service.open_session(item.data(SESSION_ID))

    def _lock(self, busy: bool) -> None:
        self.list.setEnabled(not busy)
        self.new_chat.setEnabled(not busy)
