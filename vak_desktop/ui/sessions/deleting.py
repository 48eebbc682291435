"""Delete a chat from the window: it leaves the list at once, and the ledger after the undo time.

"Delete…" (the chat list's menu, or Chat → Delete chat…) asks first, then hides the chat (and
the chats continued from it, which go with it) and shows "Deleted “TITLE” — Undo" for
`UNDO_SECONDS`. Only when that time is up, or when the window quits first, is the deletion done
(`Ledger.delete_session`: for good, files compacted), on a thread of its own with its own
connection, so that a VACUUM of a large ledger never holds the window. Undo within the time
shows the chat again; nothing was touched. A process killed inside the undo time deletes
nothing: the chat is back at the next start.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from vak_desktop.ledger import Ledger, LedgerError, SessionBusy

log = logging.getLogger(__name__)

UNDO_SECONDS = 5
QUIT_WAIT_SECONDS = 30.0  # at quit, a deletion already running is waited for this long


@dataclass(frozen=True)
class Pending:
    """One deletion the user asked for: the chat, those continued from it, its title."""

    session: str
    others: tuple[str, ...]
    title: str

    @property
    def sessions(self) -> tuple[str, ...]:
        return (self.session, *self.others)


class PendingDeletions(QObject):
    """The chats deleted in this window and not yet gone: hidden from the list meanwhile."""

    changed = Signal()  # the hidden set changed: the list shows again
    asked = Signal(str)  # the title just deleted: the undo notice shows it
    finished = Signal(str, str)  # (session, problem or ''): a deletion ended (any thread)
    ended = Signal(str, str)  # the same, on the UI thread, once it no longer counts as running

    def __init__(
        self, ledger: Ledger, undo_ms: int = UNDO_SECONDS * 1000, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._ledger = ledger
        self.undo_ms = undo_ms  # how long Undo is offered
        self._waiting: dict[str, tuple[Pending, QTimer]] = {}
        self._running: dict[str, tuple[Pending, threading.Thread]] = {}
        self.finished.connect(self._ended, Qt.ConnectionType.QueuedConnection)

    def hidden(self) -> set[str]:
        """Every session the list must not show: waiting for its undo time, or being deleted."""
        out: set[str] = set()
        for pending, _ in [*self._waiting.values(), *self._running.values()]:
            out.update(pending.sessions)
        return out

    def latest(self) -> Pending | None:
        """The deletion the undo notice offers to undo (the newest still waiting)."""
        return next(reversed([p for p, _ in self._waiting.values()]), None)

    def delete(self, session: str, title: str) -> Pending:
        """Hide `session` (and the chats continued from it) now; delete after the undo time."""
        pending = Pending(session, tuple(self._ledger.derived_sessions(session)), title)
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(self.undo_ms)
        timer.timeout.connect(lambda: self._start(session))
        self._waiting[session] = (pending, timer)
        timer.start()
        self.changed.emit()
        self.asked.emit(title)
        return pending

    def undo(self, session: str | None = None) -> bool:
        """Show a deletion's chats again (the newest by default), if it has not begun."""
        if session is None:
            latest = self.latest()
            if latest is None:
                return False
            session = latest.session
        waiting = self._waiting.pop(session, None)
        if waiting is None:
            return False
        waiting[1].stop()
        waiting[1].deleteLater()
        self.changed.emit()
        return True

    def _start(self, session: str) -> None:
        waiting = self._waiting.pop(session, None)
        if waiting is None:
            return
        pending, timer = waiting
        timer.deleteLater()
        if self._ledger.path is None:  # an in-memory ledger has one connection: this thread's
            self.finished.emit(session, self._delete(self._ledger, pending))
            return
        thread = threading.Thread(
            target=self._off_the_ui_thread, args=(pending,), name="delete-chat", daemon=True
        )
        self._running[session] = (pending, thread)
        thread.start()

    def _off_the_ui_thread(self, pending: Pending) -> None:
        assert self._ledger.path is not None
        try:
            own = Ledger.open(self._ledger.path)
        except LedgerError as exc:
            self.finished.emit(pending.session, str(exc))
            return
        try:
            self.finished.emit(pending.session, self._delete(own, pending))
        finally:
            own.close()

    @staticmethod
    def _delete(ledger: Ledger, pending: Pending) -> str:
        """Delete one pending chat; '' when done and compacted, else what went wrong."""
        try:
            done = ledger.delete_session(pending.session, with_derived=True)
        except (LedgerError, SessionBusy) as exc:
            log.warning("could not delete a chat: %s", exc)
            return f"“{pending.title}” was not deleted: {exc}"
        if done.unscrubbed:
            return f"“{pending.title}” is deleted, but {done.unscrubbed}"
        return ""

    def _ended(self, session: str, problem: str) -> None:
        self._running.pop(session, None)
        self.changed.emit()
        self.ended.emit(session, problem)  # in this same call: `idle` and the notice agree

    def flush(self, wait: float = QUIT_WAIT_SECONDS) -> None:
        """At quit: do every deletion still waiting now, and wait for those running."""
        for session in list(self._waiting):
            pending, timer = self._waiting.pop(session)
            timer.stop()
            self._running[session] = (pending, threading.current_thread())
            self._ended(session, self._delete(self._ledger, pending))
        for _pending, thread in list(self._running.values()):
            if thread is not threading.current_thread():
                thread.join(wait)

    def idle(self) -> bool:
        return not self._waiting and not self._running


class UndoNotice(QFrame):
    """ "Deleted “TITLE” — Undo" under the chat list while a deletion waits."""

    def __init__(self, deletions: PendingDeletions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("undoNotice")
        self.setAccessibleName("Deleted chat")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._deletions = deletions
        self.label = QLabel()
        self.label.setObjectName("undoLabel")
        self.label.setWordWrap(True)
        self.undo = QPushButton("Undo")
        self.undo.setObjectName("undoDelete")
        self.undo.setAccessibleName("Undo the deletion")
        self.undo.setToolTip(f"Bring the chat back (within {UNDO_SECONDS} seconds)")
        self.undo.clicked.connect(lambda: deletions.undo())
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.undo)
        deletions.changed.connect(self._show)
        self.hide()

    def text(self) -> str:
        return f"{self.label.text()} — {self.undo.text()}"

    def _show(self) -> None:
        latest = self._deletions.latest()
        if latest is None:
            self.hide()
            return
        others = len(latest.others)
        also = f" and {others} continued from it" if others else ""
        self.label.setText(f"Deleted “{latest.title}”{also}")
        self.show()


def confirm_text(title: str, others: int) -> str:
    also = (
        f" The {others} chat{'s' if others != 1 else ''} continued from it go with it."
        if others
        else ""
    )
    return (
        f"“{title}” and everything in it leave this computer's ledger for good.{also}"
        f" You can undo for {UNDO_SECONDS} seconds."
    )
