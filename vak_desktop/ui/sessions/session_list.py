"""The sidebar: every chat (the most recently active first), search across all of them, and the
archive.

The list is one query over the `sessions` table (`Ledger.sessions`): titles come from the first
directive when it is written (`ledger.auto_title`), so listing never reads a chain — a ledger of
200 sessions and 10,000 entries lists in milliseconds. Rename writes the title; "Archive" hides
a chat without deleting anything, and the Archived view shows the
hidden ones with "Restore"; "Delete…" deletes one for good after an undo time
(`deleting.py`). Search runs `runtime.session_search.search_sessions` (BM25 over the
TurnCards of every session, archived ones included); a hit names the chat and what was asked,
and picking it opens that chat at that turn.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.ledger import DamagedEntry, Ledger
from vak_desktop.runtime.sessions.search import SessionHit, search_sessions
from vak_desktop.ui.chat.chat_service import ChatService
from vak_desktop.ui.sessions.deleting import PendingDeletions, UndoNotice, confirm_text

SESSION_ID = Qt.ItemDataRole.UserRole
TURN_ID = Qt.ItemDataRole.UserRole + 1
UNTITLED = "Untitled"
SEARCH_LIMIT = 30
NO_HITS = "No chat mentions that."
SEARCH_DELAY_MS = 120  # typing pauses this long before the cards are searched


class HitView(QWidget):
    """One search hit: the chat's title, and under it, dimmer, what was asked in that turn."""

    def __init__(self, title: str, asked: str, width: int, *, archived: bool = False) -> None:
        super().__init__()
        self.setAccessibleName(f"{title}{' (archived)' if archived else ''}: {asked}")
        self.title = QLabel()
        self.title.setAccessibleName("Chat title")
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.asked = QLabel()
        self.asked.setAccessibleName("What was asked")
        self.asked.setTextFormat(Qt.TextFormat.RichText)
        quoted = ("Archived · " if archived else "") + f"“{asked}”"
        width = max(60, width)
        elide = Qt.TextElideMode.ElideRight
        self.title.setText(self.title.fontMetrics().elidedText(title, elide, width))
        self._asked = self.asked.fontMetrics().elidedText(quoted, elide, width)
        # dimmer than the title, in the theme's own colour for secondary text
        dim = QApplication.palette().color(QPalette.ColorRole.PlaceholderText).name()
        self.asked.setText(f"<span style='color:{dim}'>{escape(self._asked)}</span>")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 5, 8, 5)
        layout.setSpacing(1)
        layout.addWidget(self.title)
        layout.addWidget(self.asked)

    def text(self) -> str:
        return f"{self.title.text()}\n{self._asked}"


class SessionList(QWidget):
    """Lists the ledger's sessions; picking one opens it on the service. Locked while a turn
    runs (the service refuses to switch then)."""

    turnRequested = Signal(str, str, str)  # (session, turn id, query): a search hit was picked

    def __init__(self, service: ChatService, ledger: Ledger, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self.setAccessibleName("Chats sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._service = service
        self._ledger = ledger
        self._archived = False
        self.deletions = PendingDeletions(ledger, parent=self)
        self.deletions.changed.connect(self.reload)
        self.deletions.ended.connect(self._deleted)
        self.undo_notice = UndoNotice(self.deletions)
        self.confirm_box: QMessageBox | None = None

        self.title = QLabel("Chats")
        self.title.setObjectName("sidebarTitle")
        self.title.setAccessibleName("Sidebar title")
        self.new_chat = QPushButton("New chat")
        self.new_chat.setObjectName("newChatButton")
        self.new_chat.setAccessibleName("New chat")
        self.new_chat.setToolTip("Start a new chat (Ctrl+N)")
        self.new_chat.clicked.connect(self._new_chat)

        self.search = QLineEdit()
        self.search.setObjectName("sessionSearch")
        self.search.setAccessibleName("Search all chats")
        self.search.setPlaceholderText("Search all chats (Ctrl+K)")
        self.search.setClearButtonEnabled(True)
        self._typing = QTimer(self)
        self._typing.setSingleShot(True)
        self._typing.setInterval(SEARCH_DELAY_MS)
        self._typing.timeout.connect(self.run_search)
        self.search.textChanged.connect(self._typed)
        self.search.returnPressed.connect(self._open_first_hit)

        self.list = QListWidget()
        self.list.setObjectName("sessionList")
        self.list.setAccessibleName("Chats")
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.currentItemChanged.connect(self._picked)
        self.list.itemChanged.connect(self._renamed)

        self.hits = QListWidget()
        self.hits.setObjectName("searchHits")
        self.hits.setAccessibleName("Search results")
        self.hits.setStyleSheet(
            "QListWidget#searchHits { background: transparent; border: none; }"
            "QListWidget#searchHits::item { border-radius: 6px; margin: 1px 0; }"
        )
        self.hits.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.hits.itemActivated.connect(self._hit_picked)
        self.hits.itemClicked.connect(self._hit_picked)
        self.no_hits = QLabel(NO_HITS)
        self.no_hits.setObjectName("emptyNote")
        self.no_hits.setAccessibleName("No search results")
        self.no_hits.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.no_hits.setWordWrap(True)

        self.stack = QStackedWidget()
        self.stack.setAccessibleName("Chats or search results")
        self.stack.addWidget(self.list)
        self.stack.addWidget(self.hits)
        self.stack.addWidget(self.no_hits)

        self.archived_toggle = QPushButton("Archived")
        self.archived_toggle.setObjectName("archivedToggle")
        self.archived_toggle.setAccessibleName("Show archived chats")
        self.archived_toggle.setCheckable(True)
        self.archived_toggle.setFlat(True)
        self.archived_toggle.setToolTip("Show the chats you archived, to open or restore them")
        self.archived_toggle.toggled.connect(self.show_archived)

        header = QHBoxLayout()
        header.addWidget(self.title, 1)
        header.addWidget(self.new_chat)
        footer = QHBoxLayout()
        footer.addStretch(1)
        footer.addWidget(self.archived_toggle)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 14, 8, 8)
        layout.setSpacing(10)
        layout.addLayout(header)
        layout.addWidget(self.search)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.undo_notice)
        layout.addLayout(footer)
        service.sessionsChanged.connect(self.reload)
        service.sessionOpened.connect(self._select)
        service.busyChanged.connect(self._lock)
        self.reload()

    # -- listing --------------------------------------------------------------------------

    @property
    def archived(self) -> bool:
        """Whether the list shows the archived chats instead of the active ones."""
        return self._archived

    def titles(self) -> list[str]:
        return [self.list.item(row).text() for row in range(self.list.count())]

    def hit_texts(self) -> list[str]:
        """Each search hit as shown: the chat's title, a new line, what was asked."""
        texts = []
        for row in range(self.hits.count()):
            view = self.hits.itemWidget(self.hits.item(row))
            assert isinstance(view, HitView)
            texts.append(view.text())
        return texts

    def reload(self) -> None:
        """List the sessions again (one query), keeping the shown one selected."""
        self.list.blockSignals(True)
        try:
            self.list.clear()
            infos = self._ledger.sessions(include_archived=self._archived)
            hidden = self.deletions.hidden()
            for info in infos:
                if info.archived != self._archived or info.id in hidden:
                    continue
                item = QListWidgetItem(info.title or UNTITLED)
                item.setData(SESSION_ID, info.id)
                item.setToolTip(info.title or UNTITLED)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                self.list.addItem(item)
            self._select(self._service.session or "")
        finally:
            self.list.blockSignals(False)
        if self.search.text().strip():
            self.run_search()

    def show_archived(self, archived: bool) -> None:
        """Switch between the active chats and the archived ones."""
        self._archived = archived
        blocked = self.archived_toggle.blockSignals(True)
        self.archived_toggle.setChecked(archived)
        self.archived_toggle.blockSignals(blocked)
        self.archived_toggle.setText("Back to chats" if archived else "Archived")
        self.title.setText("Archived chats" if archived else "Chats")
        self.reload()

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
        if item is not None and not self._service.open_session(item.data(SESSION_ID)):
            self._select(self._service.session or "")  # refused (damaged): the shown one stays

    def _lock(self, busy: bool) -> None:
        for widget in (self.list, self.hits, self.new_chat, self.archived_toggle):
            widget.setEnabled(not busy)

    # -- rename, archive, restore ---------------------------------------------------------

    def rename(self, session: str, title: str) -> None:
        """Give `session` a new title (an empty one is refused: the list would show nothing)."""
        title = " ".join(title.split())
        if not title:
            self.reload()
            return
        self._ledger.rename_session(session, title)
        self.reload()

    def archive(self, session: str, archived: bool = True) -> None:
        """Hide (or restore) a chat. Nothing is deleted: its entries stay in the ledger."""
        self._ledger.archive_session(session, archived)
        if archived and session == self._service.session and not self._archived:
            self._service.new_session()
        self.reload()

    def start_rename(self, session: str) -> None:
        """Open the inline editor on `session`'s row."""
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(SESSION_ID) == session:
                self.list.editItem(item)
                return

    def _renamed(self, item: QListWidgetItem) -> None:
        session = item.data(SESSION_ID)
        if session:
            self.rename(session, item.text())

    def _menu(self, at: QPoint) -> None:
        item = self.list.itemAt(at)
        if item is None or self._service.busy:
            return
        session = item.data(SESSION_ID)
        menu = QMenu(self)
        menu.setAccessibleName("Chat actions")
        menu.addAction("Rename", lambda: self.start_rename(session))
        if self._archived:
            menu.addAction("Restore", lambda: self.archive(session, archived=False))
        else:
            menu.addAction("Archive", lambda: self.archive(session))
        menu.addSeparator()
        menu.addAction("Delete…", lambda: self.ask_delete(session))
        menu.popup(self.list.viewport().mapToGlobal(at))

    # -- delete -----------------------------------------------------------------------------

    def ask_delete(self, session: str) -> QMessageBox | None:
        """Ask whether to delete `session` for good (the dialog is not modal to the loop:
        Delete hides it at once, `deleting.py` deletes it after the undo time)."""
        if not session or self._service.busy:
            return None
        title = self._ledger.session(session).title or UNTITLED
        others = len(self._ledger.derived_sessions(session))
        box = QMessageBox(self)
        box.setObjectName("confirmDelete")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Delete chat")
        box.setText(f"Delete “{title}”?")
        box.setInformativeText(confirm_text(title, others))
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        delete.setObjectName("confirmDeleteButton")
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.buttonClicked.connect(
            lambda button: self.delete(session, title) if button is delete else None
        )
        self.confirm_box = box
        box.open()
        return box

    def delete(self, session: str, title: str) -> None:
        """Hide `session` now and delete it for good once the undo time is up."""
        pending = self.deletions.delete(session, title)
        if self._service.session in pending.sessions:
            self._service.new_session()

    def _deleted(self, session: str, problem: str) -> None:
        if problem:
            self._service.notice.emit(problem)

    # -- search ---------------------------------------------------------------------------

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def _typed(self, _text: str) -> None:
        self._typing.start()

    def _new_chat(self) -> None:
        self._service.new_session()

    def run_search(self) -> None:
        """Search now for what the search box holds (typing runs this after a pause)."""
        self._typing.stop()
        text = self.search.text()
        if not text.strip():
            self.stack.setCurrentWidget(self.list)
            return
        try:
            hits = search_sessions(self._ledger, text, limit=SEARCH_LIMIT)
        except DamagedEntry as exc:  # a chat's card was changed outside Vak: say which
            self.no_hits.setText(f"Search cannot read the chats: {exc}")
            self.stack.setCurrentWidget(self.no_hits)
            return
        hidden = self.deletions.hidden()
        hits = [hit for hit in hits if hit.session not in hidden]
        self.no_hits.setText(NO_HITS)
        self.hits.clear()
        for hit in hits:
            self._hit_item(hit)
        self.stack.setCurrentWidget(self.hits if hits else self.no_hits)

    def _hit_item(self, hit: SessionHit) -> QListWidgetItem:
        title = hit.title or UNTITLED
        asked = " ".join(hit.asked.split())
        item = QListWidgetItem()
        item.setData(SESSION_ID, hit.session)
        item.setData(TURN_ID, hit.turn_id)
        item.setData(Qt.ItemDataRole.AccessibleTextRole, f"{title}: {asked}")
        item.setToolTip(f"{title}\nAsked: {hit.asked}\nAnswered: {hit.narration}")
        # the hits page may not be laid out yet: the chat list beside it has its width
        width = self.list.viewport().width() - 20
        view = HitView(title, asked, width, archived=hit.archived)
        item.setSizeHint(view.sizeHint())
        self.hits.addItem(item)
        self.hits.setItemWidget(item, view)
        return item

    def _hit_picked(self, item: QListWidgetItem) -> None:
        if self._service.busy:
            return
        session, turn = item.data(SESSION_ID), item.data(TURN_ID)
        if self._service.open_turn(session, turn):  # the version the hit is in
            self.turnRequested.emit(session, turn, self.search.text())

    def _open_first_hit(self) -> None:
        self.run_search()
        if self.stack.currentWidget() is self.hits and self.hits.count():
            self._hit_picked(self.hits.item(0))
