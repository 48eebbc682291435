"""The append-only, hash-chained SQLite ledger: the one rich original of every conversation.

Entries are only ever inserted. Each entry names its parent (the entry it follows in its session;
an edit or a regenerate names an earlier one, which starts a branch), and its id is the blake3
hash of its canonical envelope (see `canonical.py`), so the chain can be re-verified at any time
and any changed byte shows up as a broken link. SQLite triggers refuse UPDATE, DELETE, REPLACE and
UPSERT (`integrity.py`, restored at open if dropped); the head anchor beside the file
(`anchor.py`) lets `verify` see a removed tail, session or sessions row.

Over 400 lines on purpose: `Ledger` is the one door every read and write goes through; the
rules around it live beside it (`integrity`, `anchor`, `journal`, `verification`, `writers`,
`errors`).

A session's head is its most recently appended entry: a branch is always appended after the
entries it forks from, so "newest" and "current tip" are the same thing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from vak_desktop.context.codec import decode_payload, to_json_value
from vak_desktop.context.payloads import AssistantStep, Directive, Payload
from vak_desktop.ledger.anchor import AnchorPoint, EventsPoint, HeadAnchor, anchor_path
from vak_desktop.ledger.canonical import (
    ID_PREFIX,
    canonical_form,
    entry_id,
    envelope_bytes,
    utc_now,
)
from vak_desktop.ledger.errors import DamagedEntry, LedgerError, StorageError, storage
from vak_desktop.ledger.integrity import (
    ANCHOR_MISSING,
    ANCHOR_STARTED,
    check_triggers,
    events,
    events_digest,
    record_event,
)
from vak_desktop.ledger.journal import fold, unfolded
from vak_desktop.ledger.migrations import KINDS_READ_ACROSS_SESSIONS, STARTS_THE_ANCHOR, migrate
from vak_desktop.ledger.profiles import ProfileStore
from vak_desktop.ledger.verification import VerifyReport, verify_ledger
from vak_desktop.ledger.writers import hold_session
from vak_desktop.redaction import redact

log = logging.getLogger(__name__)
LEDGER_FILENAME = "ledger.sqlite3"
_HEAD = object()  # sentinel: "append after the session's current head"


# The append after a known head, in one statement: the row's `session` is NULL, so that its
# NOT NULL constraint refuses the row, unless the session's newest entry is still the one this
# process last wrote (another process or connection may have appended since). The check and the
# insert are one autocommitted statement, so nothing can come between them; the statement's own
# transaction replaces BEGIN IMMEDIATE / COMMIT (a VALUES row: `INSERT … SELECT` from the table
# it inserts into would go through a temporary table).
_AFTER_KNOWN_HEAD = (
    "INSERT INTO entries (id, parent, session, kind, payload, created_at) VALUES (?1, ?2, CASE"
    " WHEN (SELECT MAX(seq) FROM entries WHERE session = ?3) = ?7 THEN ?3 END, ?4, ?5, ?6)"
)
_NOT_THE_KNOWN_HEAD = "NOT NULL constraint failed: entries.session"


class UnknownSession(LedgerError):
    def __init__(self, session: str) -> None:
        super().__init__(f"no session {session!r} in this ledger")
        self.session = session


class UnknownEntry(LedgerError):
    def __init__(self, ref: str, why: str = "no such entry") -> None:
        super().__init__(f"{why}: {ref!r}")
        self.ref = ref


@dataclass(frozen=True, slots=True)  # slots: one is made per append
class Entry:
    """A stored entry: its identity and chain link, and its typed payload."""

    id: str
    seq: int
    parent: str | None
    session: str
    kind: str
    created_at: str
    payload: Payload


@dataclass(frozen=True)
class SessionInfo:
    id: str
    created_at: str
    title: str
    archived: bool


_ENTRY_COLUMNS = "seq, id, parent, session, kind, payload, created_at"
# the same columns as stored bytes: what finds the row that no longer decodes as UTF-8
_ENTRY_BYTES = "seq, " + ", ".join(
    f"CAST({c} AS BLOB)" for c in ("id", "parent", "session", "kind", "payload", "created_at")
)


def _row_to_entry(row: tuple[Any, ...]) -> Entry:
    seq, id_, parent, session, kind, payload, created_at = row
    try:
        decoded = decode_payload(kind, json.loads(payload))
    except (ValueError, KeyError, TypeError) as exc:  # changed outside Vak
        raise DamagedEntry(
            seq, f"its {kind} payload does not read back: {str(exc)[:200]}"
        ) from None
    return Entry(
        id=id_,
        seq=seq,
        parent=parent,
        session=session,
        kind=kind,
        created_at=created_at,
        payload=decoded,
    )


def _connect(where: str) -> sqlite3.Connection:
    """A connection in WAL mode. On a disk too full to create the WAL's shared index (SQLite
    says "disk I/O error" as it opens), the index is kept in this process's memory instead
    (exclusive locking: no other process may share the file meanwhile), so that reading, and
    `vak ledger verify`, still work; a write then fails with "the disk is full"."""
    for exclusive in (False, True):
        conn = sqlite3.connect(where, isolation_level=None)  # we issue BEGIN/COMMIT
        try:
            conn.execute("PRAGMA busy_timeout = 10000")
            if exclusive:
                conn.execute("PRAGMA locking_mode = EXCLUSIVE")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: survives a crash
            if exclusive:
                log.warning(
                    "no room for the WAL's shared index beside %s (is the disk full?): the "
                    "ledger is open for this process alone",
                    where,
                )
            return conn
        except sqlite3.OperationalError as exc:
            conn.close()
            if exclusive or "disk I/O error" not in str(exc):
                raise
    raise AssertionError("unreachable")


class Ledger:
    """One ledger file. Use from one thread; open one per process."""

    def __init__(self, db: sqlite_utils.Database, path: Path | None) -> None:
        self._db = db
        self.path = path
        self._anchor = HeadAnchor(anchor_path(path)) if path is not None else None
        self._heads: dict[str, AnchorPoint] = {}  # what this process last wrote, per session
        self._titled: set[str] = set()  # sessions known to have a title
        self._pending: dict[str, AnchorPoint] | None = None  # inside `transaction()`
        self._journalled: set[str] = set()  # sessions whose journal a step append folds
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
            conn = _connect(where)
            try:
                db = sqlite_utils.Database(conn)
                ran = migrate(db, utc_now())
                ledger = cls(db, None if where == ":memory:" else Path(where))
                ledger.restored_triggers = check_triggers(db, utc_now(), where)
                started = ledger._start_anchor(STARTS_THE_ANCHOR not in ran)
                if ran or ledger.restored_triggers or started:
                    ledger._anchor_events()
            except BaseException:
                conn.close()
                raise
        return ledger

    def close(self) -> None:
        if self._anchor is not None:
            self._anchor.close()
        self._db.conn.close()

    def _start_anchor(self, had_one: bool) -> bool:
        """Anchor every session's current head if the anchor file is new; a missing file for a
        ledger that had one (`had_one`: an earlier open ran the migration that starts it, or
        the events say one was started) is recorded (verify reports it) before it is started
        again. True when it recorded an event."""
        anchor = self._anchor
        if anchor is None:
            return False
        if anchor.exists():
            anchor.compact_if_large()
            return False
        now = utc_now()
        if events(self._db, ANCHOR_STARTED) or had_one:
            message = (
                f"the head anchor {anchor.path} was missing at open: entries removed before "
                f"{now} cannot be detected"
            )
            record_event(self._db, now, ANCHOR_MISSING, message)
            log.warning("%s", message)
        anchor.replace(self._current_heads())
        record_event(self._db, now, ANCHOR_STARTED, f"head anchor started at {anchor.path}")
        return True

    def _anchor_events(self) -> None:
        """Record in the anchor how many ledger events there are and their digest, so that
        verify recomputes them instead of trusting the rows (`anchor.py`)."""
        if self._anchor is None:
            return
        try:
            self._anchor.record_events(EventsPoint(*events_digest(self._db)))
        except OSError as exc:  # a full disk: the next open that records an event retries
            log.warning("cannot record the ledger's events in %s: %s", self._anchor.path, exc)

    def _current_heads(self) -> list[AnchorPoint]:
        rows = self._db.execute(
            "SELECT e.session, e.seq, e.id, c.n FROM"
            " (SELECT session, MAX(seq) AS last, COUNT(*) AS n FROM entries GROUP BY session) c"
            " JOIN entries e ON e.seq = c.last"
        ).fetchall()
        return [AnchorPoint(r[0], r[1], r[2], r[3]) for r in rows]

    def hold(self, session: str) -> contextlib.AbstractContextManager[None]:
        """Hold `session` for writing while a turn runs (`writers.py`): SessionBusy when
        another process or window is running a turn in it."""
        return hold_session(self.path, session)

    def profiles(self) -> ProfileStore:
        """The measured capacity profiles kept outside any session (`ledger/profiles.py`)."""
        return ProfileStore(self._db)

    # -- sessions -------------------------------------------------------------------------

    def create_session(self, title: str = "") -> SessionInfo:
        info = SessionInfo(
            id=secrets.token_hex(8), created_at=utc_now(), title=title, archived=False
        )
        with storage(str(self.path or ":memory:")):
            self._db.execute(
                "INSERT INTO sessions (id, created_at, title, archived) VALUES (?, ?, ?, 0)",
                [info.id, info.created_at, info.title],
            )
        return info

    def session(self, session: str) -> SessionInfo:
        row = self._db.execute(
            "SELECT id, created_at, title, archived FROM sessions WHERE id = ?", [session]
        ).fetchone()
        if row is None:
            raise UnknownSession(session)
        return SessionInfo(id=row[0], created_at=row[1], title=row[2], archived=bool(row[3]))

    def sessions(self, include_archived: bool = False) -> list[SessionInfo]:
        """Sessions, most recently active first."""
        rows = self._db.execute(
            """
            SELECT s.id, s.created_at, s.title, s.archived,
                   COALESCE((SELECT MAX(seq) FROM entries e WHERE e.session = s.id), 0) AS last
            FROM sessions s
            WHERE ? OR s.archived = 0
            ORDER BY last DESC, s.created_at DESC
            """,
            [int(include_archived)],
        ).fetchall()
        return [
            SessionInfo(id=r[0], created_at=r[1], title=r[2], archived=bool(r[3])) for r in rows
        ]

    def rename_session(self, session: str, title: str) -> None:
        self.session(session)
        self._db.execute("UPDATE sessions SET title = ? WHERE id = ?", [title, session])
        self._titled.discard(session)  # the next directive reads whether it has one

    def archive_session(self, session: str, archived: bool = True) -> None:
        """Hide a session from the list. Its entries stay; nothing is deleted."""
        self.session(session)
        self._db.execute("UPDATE sessions SET archived = ? WHERE id = ?", [int(archived), session])

    # -- appending ------------------------------------------------------------------------

    def append(self, session: str, payload: Payload, parent: Any = _HEAD) -> Entry:
        """Append `payload` to `session`, after its head unless `parent` names another entry.

        The entry is committed before this returns: a crash right after loses nothing.
        """
        kind = type(payload).KIND
        payload_text, body = canonical_form(to_json_value(payload))
        cleaned = redact(payload_text)  # no secret the process holds is ever stored
        if cleaned != payload_text:
            payload_text, body = cleaned, cleaned.encode("utf-8")
            payload = decode_payload(kind, json.loads(cleaned))
        known = self._heads.get(session)
        if (
            known is not None
            and (parent is _HEAD or parent == known.head)
            and (kind != Directive.KIND or session in self._titled)
            and (kind != AssistantStep.KIND or session not in self._journalled)
        ):
            entry = self._append_after(known, session, kind, payload, payload_text, body)
            if entry is not None:
                return entry
        return self._append_read(session, kind, payload, payload_text, body, parent)

    def _append_after(
        self, known: AnchorPoint, session: str, kind: str, payload: Payload, text: str, body: bytes
    ) -> Entry | None:
        """The append after the head this process last wrote, in one autocommitted statement
        (`_AFTER_KNOWN_HEAD`). None when another writer appended to the session since."""
        created_at = utc_now()
        parent = known.head
        new_id = entry_id(
            envelope_bytes(
                created_at=created_at, kind=kind, parent=parent, payload=body, session=session
            )
        )
        try:
            cursor = self._db.conn.execute(
                _AFTER_KNOWN_HEAD, [new_id, parent, session, kind, text, created_at, known.seq]
            )
        except sqlite3.IntegrityError as exc:
            if str(exc) != _NOT_THE_KNOWN_HEAD:
                raise
            del self._heads[session]
            return None
        except sqlite3.OperationalError as exc:  # disk full, locked, read-only
            raise StorageError(str(self.path or ":memory:"), exc) from None
        seq = cursor.lastrowid or 0
        self._anchored(AnchorPoint(session, seq, new_id, known.count + 1))
        return Entry(new_id, seq, parent, session, kind, created_at, payload)

    def _append_read(
        self, session: str, kind: str, payload: Payload, text: str, body: bytes, parent: Any
    ) -> Entry:
        """The append that reads the session's head, title and count in its own write
        transaction: the first of a session in this process, a branch, a directive that
        titles its session, a step that folds a journal, or after another writer."""
        conn = self._db.conn
        own = self._pending is None  # else inside `transaction()`
        try:
            if own:
                conn.execute("BEGIN IMMEDIATE")
            row = conn.execute(
                "SELECT title, (SELECT id FROM entries WHERE session = ?1 ORDER BY seq DESC LIMIT 1)"
                " FROM sessions WHERE id = ?1",
                [session],
            ).fetchone()
            if row is None:
                raise UnknownSession(session)
            title, head = row
            count = 1 if head is None else self._count_after(session, head)
            if parent is _HEAD:
                parent = head
            elif parent is not None:
                self._check_parent(session, parent)
            created_at = utc_now()
            new_id = entry_id(
                envelope_bytes(
                    created_at=created_at, kind=kind, parent=parent, payload=body, session=session
                )
            )
            cursor = conn.execute(
                "INSERT INTO entries (id, parent, session, kind, payload, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [new_id, parent, session, kind, text, created_at],
            )
            if kind == AssistantStep.KIND and session in self._journalled:
                fold(conn, session, cursor.lastrowid or 0)  # the step holds what streamed
            if isinstance(payload, Directive) and not title:
                title = auto_title(payload.text)
                conn.execute("UPDATE sessions SET title = ? WHERE id = ?", [title, session])
            if own:
                conn.execute("COMMIT")
        except BaseException as exc:
            if own:
                self._rollback()
            if isinstance(exc, sqlite3.OperationalError):  # disk full, locked, read-only
                raise StorageError(str(self.path or ":memory:"), exc) from None
            raise
        seq = cursor.lastrowid or 0
        if title:
            self._titled.add(session)
        self._anchored(AnchorPoint(session, seq, new_id, count))
        return Entry(new_id, seq, parent, session, kind, created_at, payload)

    def _count_after(self, session: str, head: str) -> int:
        """The session's entry count once one more is appended after `head` (inside the
        append's transaction: counted once per process and session, then carried)."""
        known = self._heads.get(session)
        if known is not None and known.head == head:
            return known.count + 1
        row = self._db.conn.execute(
            "SELECT COUNT(*) FROM entries WHERE session = ?", [session]
        ).fetchone()
        return int(row[0]) + 1

    def _anchored(self, point: AnchorPoint) -> None:
        self._heads[point.session] = point
        if self._pending is not None:
            self._pending[point.session] = point  # anchored when the transaction commits
        elif self._anchor is not None:
            self._anchor.record_one(point)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything appended (and every session created) inside is committed together, or
        nothing is (an import: a rejected file leaves no session behind)."""
        if self._pending is not None:
            raise LedgerError("transactions do not nest")
        self._begin()
        self._pending = {}
        try:
            yield
            self._commit()
        except BaseException:
            self._pending = None
            self._rollback()
            self._heads.clear()
            self._titled.clear()
            raise
        points, self._pending = self._pending, None
        if self._anchor is not None:
            self._anchor.record(points.values())

    def _begin(self) -> None:
        with storage(str(self.path or ":memory:")):
            self._db.conn.execute("BEGIN IMMEDIATE")

    def _commit(self) -> None:
        with storage(str(self.path or ":memory:")):
            self._db.conn.execute("COMMIT")

    def _rollback(self) -> None:
        conn = self._db.conn
        if conn.in_transaction:  # SQLite rolls back by itself on a full disk
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")

    # -- the stream journal (`journal.py`) --------------------------------------------------

    def checkpoint(
        self, session: str, stream: str, base_seq: int, text: str, thinking: str
    ) -> None:
        """Journal what a step streamed since its last checkpoint (outside the chain; the
        step's append deletes it again, `journal.fold`)."""
        self._journalled.add(session)
        self._db.conn.execute(
            "INSERT INTO stream_journal (session, stream, base_seq, text, thinking, at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [session, stream, base_seq, redact(text), redact(thinking), utc_now()],
        )

    def unfolded_stream(self, session: str) -> tuple[str, str] | None:
        """(text, thinking) a killed process was streaming in `session`, if never stored."""
        streamed = unfolded(self._db, session)
        if streamed is not None:
            self._journalled.add(session)  # the interrupted step appended for it folds it
        return streamed

    def last_seq(self) -> int:
        """The seq of the newest entry of the ledger (0 when empty)."""
        row = self._db.conn.execute("SELECT MAX(seq) FROM entries").fetchone()
        return int(row[0] or 0)

    def _head_id(self, session: str) -> str | None:
        row = self._db.execute(
            "SELECT id FROM entries WHERE session = ? ORDER BY seq DESC LIMIT 1", [session]
        ).fetchone()
        return row[0] if row else None

    def _check_parent(self, session: str, parent: str) -> None:
        row = self._db.execute("SELECT session FROM entries WHERE id = ?", [parent]).fetchone()
        if row is None:
            raise UnknownEntry(parent, "parent entry does not exist")
        if row[0] != session:
            raise UnknownEntry(parent, f"parent entry belongs to another session than {session}")

    # -- reading --------------------------------------------------------------------------

    def head(self, session: str) -> Entry | None:
        self.session(session)
        head = self._head_id(session)
        return self.entry(head) if head else None

    def entry(self, ref: str) -> Entry:
        entry = next(self._select("WHERE id = ?", [ref]), None)
        if entry is None:
            raise UnknownEntry(ref)
        return entry

    def find(self, session: str, ref: str) -> Entry:
        """The entry of `session` whose id starts with `ref` (with or without `b3:`)."""
        prefix = ref if ref.startswith(ID_PREFIX) else ID_PREFIX + ref
        if len(prefix) < len(ID_PREFIX) + 6:
            raise UnknownEntry(ref, "an entry reference needs at least 6 hex digits")
        rows = list(
            self._select(
                "WHERE id >= ? AND id < ? AND session = ? LIMIT 2",
                [prefix, prefix + "\U0010ffff", session],
            )
        )
        if not rows:
            raise UnknownEntry(ref, "no entry in this session starts with")
        if len(rows) > 1:
            raise UnknownEntry(ref, "more than one entry starts with")
        return rows[0]

    def entries(self, session: str) -> Iterator[Entry]:
        """Every entry of a session in append order, all branches included."""
        return self._select("WHERE session = ? ORDER BY seq", [session])

    def entries_of_kind(self, kind: str) -> Iterator[Entry]:
        """Every entry of one kind across all sessions, in append order (all branches)."""
        indexed = ""  # the partial index's own condition, so that the planner takes it
        if kind in KINDS_READ_ACROSS_SESSIONS:
            indexed = f" AND kind IN ({', '.join(repr(k) for k in KINDS_READ_ACROSS_SESSIONS)})"
        return self._select(f"WHERE kind = ?{indexed} ORDER BY seq", [kind])

    def _select(self, where: str, params: list[Any]) -> Iterator[Entry]:
        """The entries `where` selects. A row changed outside Vak so that it no longer reads
        back is a DamagedEntry naming its seq (SQLite's own error names neither)."""
        try:
            for row in self._db.execute(f"SELECT {_ENTRY_COLUMNS} FROM entries {where}", params):
                yield _row_to_entry(row)
        except sqlite3.OperationalError as exc:
            if "decode" not in str(exc):
                raise
            raise self._undecodable(where, params) from None

    def _undecodable(self, where: str, params: list[Any]) -> DamagedEntry:
        """The first row `where` selects whose stored text is not UTF-8."""
        for seq, *columns in self._db.execute(
            f"SELECT {_ENTRY_BYTES} FROM entries {where}", params
        ):
            try:
                for column in columns:
                    if column is not None:
                        column.decode("utf-8")
            except UnicodeDecodeError as exc:
                return DamagedEntry(seq, f"its text is not UTF-8 at byte {exc.start}")
        return DamagedEntry(None, "its text is not UTF-8")

    def chain_to_root(self, session: str, head: str | None = None) -> list[Entry]:
        """The entries from the session's root to `head` (default: the session head), in order."""
        self.session(session)
        by_id = {e.id: e for e in self.entries(session)}
        cursor = head if head is not None else self._head_id(session)
        if cursor is not None and cursor not in by_id:
            raise UnknownEntry(cursor, f"no entry in session {session} with id")
        chain: list[Entry] = []
        while cursor is not None:
            entry = by_id[cursor]
            chain.append(entry)
            cursor = entry.parent
        chain.reverse()
        return chain

    def count(self, kind: str | None = None) -> int:
        if kind is None:
            return int(self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
        return int(
            self._db.execute("SELECT COUNT(*) FROM entries WHERE kind = ?", [kind]).fetchone()[0]
        )

    # -- verification ---------------------------------------------------------------------

    def verify(self) -> VerifyReport:
        """Recompute every entry id and chain link, and check the head anchor (`verification`)."""
        return verify_ledger(self._db, self._anchor.path if self._anchor is not None else None)


def auto_title(text: str, limit: int = 60) -> str:
    """A session title from its first directive: the first line, cut at a word near `limit`."""
    line = " ".join(text.strip().split("\n", 1)[0].split())
    if len(line) <= limit:
        return line or "Untitled"
    cut = line[:limit].rsplit(" ", 1)[0] or line[:limit]
    return cut + "…"
