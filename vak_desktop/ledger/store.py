"""The append-only, hash-chained SQLite ledger: the one rich original of every conversation.

Entries are only ever inserted. Each entry names its parent (the entry it follows in its session;
an edit or a regenerate names an earlier one, which starts a branch), and its id is the blake3
hash of its canonical envelope (see `canonical.py`), so the chain can be re-verified at any time
and any changed byte shows up as a broken link. SQLite triggers refuse UPDATE, DELETE, REPLACE and
UPSERT (`integrity.py`, restored at open if dropped); the head anchor beside the file
(`anchor.py`) lets `verify` see a removed tail, session or sessions row.

`Ledger` is the one door every read and write goes through, in halves along its seams: opening
and migrating (`opening`, `migrations`), appending and the chain (`appending`), reading
(`reading`), the stream journal (`journal`); the rules around it live beside it (`integrity`,
`anchor`, `verification`, `writers`, `errors`).

A session's head is its most recently appended entry: a branch is always appended after the
entries it forks from, so "newest" and "current tip" are the same thing.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from vak_desktop.ledger.anchor import AnchorPoint, HeadAnchor, anchor_path
from vak_desktop.ledger.appending import Appending, auto_title
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.ledger.deletion import (
    Deletion,
    HasDerivedSessions,
    Step,
    delete_sessions,
    derived_sessions,
    finish_compaction,
)
from vak_desktop.ledger.errors import LedgerError, storage
from vak_desktop.ledger.integrity import check_triggers
from vak_desktop.ledger.migrations import STARTS_THE_ANCHOR, migrate
from vak_desktop.ledger.opening import anchor_events, connect, start_anchor
from vak_desktop.ledger.profiles import ProfileStore
from vak_desktop.ledger.reading import STAGED, Entry, SessionInfo, UnknownEntry, UnknownSession
from vak_desktop.ledger.sqlite_import import sqlite_utils
from vak_desktop.ledger.verification import VerifyReport, verify_ledger
from vak_desktop.ledger.writers import hold_session

__all__ = [
    "LEDGER_FILENAME",
    "Entry",
    "Ledger",
    "SessionInfo",
    "UnknownEntry",
    "UnknownSession",
    "auto_title",
]

LEDGER_FILENAME = "ledger.sqlite3"


class Ledger(Appending):
    """One ledger file. Use from one thread; open one per process."""

    def __init__(self, db: sqlite_utils.Database, path: Path | None) -> None:
        self._db = db
        self.path = path
        self._anchor = HeadAnchor(anchor_path(path)) if path is not None else None
        self._heads: dict[str, AnchorPoint] = {}  # what this process last wrote, per session
        self._titled: set[str] = set()  # sessions known to have a title
        self._pending: dict[str, AnchorPoint] | None = None  # inside `transaction()`
        self._journalled: set[str] = set()  # sessions whose journal a step append folds
        self._staging: list[str] | None = None
        self._chunk_ends: float | None = None
        self.restored_triggers: list[str] = []

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Ledger:
        """Open (creating and migrating if needed) the ledger at `path`; ':memory:' works too."""
        where = str(path)
        try:
            if where != ":memory:":
                Path(where).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            parent = Path(where).parent
            why = "a file is in the way" if parent.is_file() else exc.strerror
            raise LedgerError(f"cannot create the ledger's folder {parent}: {why}") from None
        with storage(where):
            conn = connect(where)
            try:
                db = sqlite_utils.Database(conn)
                ran = migrate(db, utc_now())
                ledger = cls(db, None if where == ":memory:" else Path(where))
                ledger.restored_triggers = check_triggers(db, utc_now(), where)
                started = start_anchor(db, ledger._anchor, STARTS_THE_ANCHOR not in ran)
                compacted = finish_compaction(db)  # a deletion a kill left uncompacted
                if ran or ledger.restored_triggers or started or compacted:
                    anchor_events(db, ledger._anchor)
            except BaseException:
                conn.close()
                raise
        return ledger

    def close(self) -> None:
        if self._anchor is not None:
            self._anchor.close()
        self._db.conn.close()

    def hold(self, session: str) -> contextlib.AbstractContextManager[None]:
        """Hold `session` for writing while a turn runs (`writers.py`): SessionBusy when
        another process or window is running a turn in it."""
        return hold_session(self.path, session)

    def profiles(self) -> ProfileStore:
        """The measured capacity profiles kept outside any session (`ledger/profiles.py`)."""
        return ProfileStore(self._db)

    # -- sessions -------------------------------------------------------------------------

    def create_session(self, title: str = "", derived_from: str | None = None) -> SessionInfo:
        """A new, empty session; `derived_from` names the session it continues (fixed)."""
        if derived_from is not None:
            self.session(derived_from)
        info = SessionInfo(secrets.token_hex(8), utc_now(), title, False, derived_from)
        hidden = 0 if self._staging is None else STAGED  # inside `staged()`: shown at its end
        with storage(str(self.path or ":memory:")):
            self._db.execute(
                "INSERT INTO sessions (id, created_at, title, archived, derived_from)"
                " VALUES (?, ?, ?, ?, ?)",
                [info.id, info.created_at, info.title, hidden, derived_from],
            )
        if self._staging is not None:
            self._staging.append(info.id)
        return info

    def rename_session(self, session: str, title: str) -> None:
        self.session(session)
        self._db.execute("UPDATE sessions SET title = ? WHERE id = ?", [title, session])
        self._titled.discard(session)  # the next directive reads whether it has one

    def archive_session(self, session: str, archived: bool = True) -> None:
        """Hide a session from the list. Its entries stay; nothing is deleted
        (`delete_session` deletes)."""
        self.session(session)
        self._db.execute("UPDATE sessions SET archived = ? WHERE id = ?", [int(archived), session])

    def derived_sessions(self, session: str) -> list[str]:
        """Every session continued from `session`, directly or through another."""
        return derived_sessions(self._db, session)

    def delete_session(
        self, session: str, with_derived: bool = False, between: Step | None = None
    ) -> Deletion:
        """Delete `session` for good (`deletion.py`), and with `with_derived` every session
        continued from it (else HasDerivedSessions when there are any). SessionBusy while a
        turn runs in one of them; `between` is told each step (a test's injected fault)."""
        self.session(session)
        if self._pending is not None:
            raise LedgerError("a session cannot be deleted inside a transaction")
        derived = derived_sessions(self._db, session)
        if derived and not with_derived:
            raise HasDerivedSessions(session, derived)
        targets = [session, *derived]
        with contextlib.ExitStack() as held, storage(str(self.path or ":memory:")):
            for target in targets:
                held.enter_context(self.hold(target))
            done = delete_sessions(self._db, self._anchor, targets, between)
            anchor_events(self._db, self._anchor)
            for target in targets:
                self._heads.pop(target, None)
                self._titled.discard(target)
                self._journalled.discard(target)
        if self.path is not None:
            for target in targets:  # the lock files are named after the session
                with contextlib.suppress(OSError):
                    (self.path.with_name(self.path.name + ".locks") / f"{target}.lock").unlink()
        return done

    # -- verification ---------------------------------------------------------------------

    def verify(self) -> VerifyReport:
        """Recompute every entry id and chain link, and check the head anchor (`verification`)."""
        return verify_ledger(self._db, self._anchor.path if self._anchor is not None else None)
