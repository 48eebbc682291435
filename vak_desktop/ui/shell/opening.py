"""The window's first frame, before its services exist: the same shell, every control disabled.

At start-up the window is shown before the ledger, the providers, the tools and the engine are
imported (`app.py`; importing them took four times as long as PySide6 itself). Until
`MainWindow.attach` replaces it, the window holds this view: the sidebar with its New chat button
and search field, a chat list saying "Opening your chats…", the model row, an empty
conversation and the composer with Send and Stop — laid out and named as the real ones are, so
the theme draws them alike and nothing moves when they are swapped — all disabled, and the
status bar saying "Opening…". `first_frame` waits until the window system has exposed the
window and it is painted. It imports only Qt.
"""

from __future__ import annotations

import asyncio
import contextlib

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

OPENING = "Opening…"
OPENING_CHATS = "Opening your chats…"
SIDEBAR_WIDTH = 250  # as `MainWindow` sets its splitter
MENUS = ("&File", "&Chat", "&View", "&Tools")  # the real menus replace these, in this order
FIRST_FRAME_WAIT_S = 1.0  # at most this long for the window system to expose the window


class OpeningView(QWidget):
    """The central widget of a window whose services are still being opened."""

    def __init__(self, width: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName(OPENING)
        sidebar = QWidget()
        sidebar.setObjectName("sidebar")
        sidebar.setAccessibleName("Chats sidebar")
        sidebar.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        sidebar.setMinimumWidth(190)
        title = QLabel("Chats")
        title.setObjectName("sidebarTitle")
        new_chat = QPushButton("New chat")
        new_chat.setObjectName("newChatButton")
        search = QLineEdit()
        search.setObjectName("sessionSearch")
        search.setPlaceholderText("Search all chats (Ctrl+K)")
        self.chats = QListWidget()
        self.chats.setObjectName("sessionList")
        self.chats.setAccessibleName("Chats")
        self.chats.addItem(OPENING_CHATS)
        header = QHBoxLayout()
        header.addWidget(title, 1)
        header.addWidget(new_chat)
        side = QVBoxLayout(sidebar)
        side.setContentsMargins(12, 14, 8, 8)
        side.setSpacing(10)
        side.addLayout(header)
        side.addWidget(search)
        side.addWidget(self.chats, 1)

        pane = QWidget()
        pane.setObjectName("chatPane")
        model_label = QLabel("Model")
        model_label.setObjectName("fieldLabel")
        picker = QComboBox()
        picker.setObjectName("modelPicker")
        picker.setPlaceholderText(OPENING)
        picker.setMinimumContentsLength(16)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(8)
        row.addWidget(model_label)
        row.addWidget(picker)
        refresh = QPushButton("Refresh")
        row.addWidget(refresh)
        row.addStretch(1)
        conversation = QScrollArea()
        conversation.setObjectName("chatView")
        conversation.setAccessibleName("Conversation")
        conversation.setFrameShape(QFrame.Shape.NoFrame)
        self.message = QPlainTextEdit()
        self.message.setObjectName("composer")
        self.message.setPlaceholderText(OPENING)
        self.message.setFixedHeight(self.message.fontMetrics().lineSpacing() * 3 + 24)
        send = QPushButton("Send")
        send.setObjectName("sendButton")
        stop = QPushButton("Stop")
        stop.setObjectName("stopButton")
        buttons = QVBoxLayout()
        buttons.setSpacing(6)
        buttons.addWidget(send)
        buttons.addWidget(stop)
        buttons.addStretch(1)
        composer = QHBoxLayout()
        composer.setContentsMargins(0, 0, 0, 0)
        composer.setSpacing(10)
        composer.addWidget(self.message, 1)
        composer.addLayout(buttons)
        chat = QVBoxLayout(pane)
        chat.setContentsMargins(18, 14, 18, 14)
        chat.setSpacing(12)
        chat.addLayout(row)
        chat.addWidget(conversation, 1)
        chat.addLayout(composer)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        splitter.setHandleWidth(1)
        splitter.addWidget(sidebar)
        splitter.addWidget(pane)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([SIDEBAR_WIDTH, width - SIDEBAR_WIDTH])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(splitter, 1)
        # nothing here can act yet: the services behind every control are still opening
        for control in (new_chat, search, self.chats, picker, refresh, self.message, send, stop):
            control.setEnabled(False)


class _Exposed(QObject):
    """Sets `done` when the window it watches is exposed."""

    def __init__(self, done: asyncio.Event) -> None:
        super().__init__()
        self.done = done

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Expose:
            self.done.set()
        return False


async def first_frame(window: QWidget, limit_s: float = FIRST_FRAME_WAIT_S) -> None:
    """Return once the shown `window` is exposed and painted (or after `limit_s`): what the
    caller does next blocks the loop a while, and the user sees the window meanwhile."""
    handle = window.windowHandle()
    if handle is not None and not handle.isExposed():
        exposed = asyncio.Event()
        watcher = _Exposed(exposed)
        handle.installEventFilter(watcher)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(limit_s):
                    await exposed.wait()
        finally:
            handle.removeEventFilter(watcher)
    window.repaint()  # now, not on the next pass of the loop
