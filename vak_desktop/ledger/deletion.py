"""Deleting a session for good: its rows out of the ledger, and out of the files that hold it.

The ledger is append-only, so a deletion is the one door through the DELETE triggers: in one
transaction (`PRAGMA secure_delete` on, so freed pages are zeroed) it puts the session's marker
in `_vak_deleting`, which the triggers of `entries`, `sessions` and `stream_journal` let pass
(`integrity.py`), removes the session's rows from every table that has a `session` column
(found in `sqlite_master`, so a table added later is not forgotten) and its `sessions` row,
takes the marker out again and records in `ledger_events` that a deletion happened, with its
counts only ("deleted one session, 12 entries": no id, title or text). Then it checkpoints the
WAL down to nothing and VACUUMs, so that no free page, no old page image in the WAL and no
journal still holds the session's text, and records that it did; a deletion not followed by
that record (a kill after the commit, a reader that kept the WAL) is compacted at the next open.

The head anchor is rewritten without the session *before* the commit: a process killed after
that but before the commit leaves the whole session, only unanchored until its next append (a
removal in that window would go unseen), where the other order would leave an anchor naming a
session that is gone, which verify must call a removal. An exception before the commit puts
the session's anchor line back. After the commit the anchor counts the new event, as every
ledger event is counted (`anchor.py`), so a deletion recorded cannot be quietly erased.

A session others were continued from (`sessions.derived_from`) is deleted only with them.

What this does not reach: copies of the file (backups, sync folders, the OS's snapshots),
exports already written, and disk blocks the file system freed (SSD wear levelling, journaling
file systems): deleting a row is not shredding a disk.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vak_desktop.ledger.anchor import HeadAnchor, read_anchor, read_events
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.ledger.errors import LedgerError
from vak_desktop.ledger.integrity import MARKER, record_event
from vak_desktop.ledger.sqlite_import import sqlite_utils

SESSION_DELETED = "session_deleted"  # the `ledger_events` kinds
SESSION_COMPACTED = "deletion_compacted"  # the file compacted after the newest deletion

# Tables with a `session` column that are not a session's own rows.
_NOT_A_SESSIONS_ROWS = frozenset({MARKER, "ledger_events", "_vak_migrations"})


@dataclass(frozen=True)
class Deletion:
    """What a deletion removed, and whether the files were compacted after it (`scrub`)."""

    sessions: tuple[str, ...]
    entries: int
    unscrubbed: str = ""  # why the WAL or the free pages could not be emptied ('' when done)


class HasDerivedSessions(LedgerError):
    """The session has sessions continued from it: deleting it alone would orphan them."""

    def __init__(self, session: str, derived: Sequence[str]) -> None:
        n = len(derived)
        chats = "1 chat was" if n == 1 else f"{n} chats were"
        super().__init__(
            f"session {session} is not deleted: {chats} continued from it"
            f" ({', '.join(derived)}); delete them with it, or on their own first"
        )
        self.session = session
        self.derived = tuple(derived)


def derived_sessions(db: sqlite_utils.Database, session: str) -> list[str]:
    """Every session continued from `session`, directly or through others, oldest first."""
    found: list[str] = []
    frontier = [session]
    while frontier:
        marks = ", ".join("?" for _ in frontier)
        rows = db.execute(
            f"SELECT id FROM sessions WHERE derived_from IN ({marks}) ORDER BY created_at",
            frontier,
        ).fetchall()
        frontier = [r[0] for r in rows if r[0] not in found and r[0] != session]
        found.extend(frontier)
    return found


def session_columns(db: sqlite_utils.Database) -> list[tuple[str, str]]:
    """(table, column) of every table holding a session's rows, `sessions` itself last."""
    found = []
    for (table,) in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
    ).fetchall():
        if table in _NOT_A_SESSIONS_ROWS or table.startswith("sqlite_") or table == "sessions":
            continue
        columns = {row[1] for row in db.execute(f'PRAGMA table_info("{table}")')}
        if "session" in columns:
            found.append((table, "session"))
    return [*found, ("sessions", "id")]


Step = Callable[[str], None]  # told each step's name as it is reached (a test's injected fault)


def delete_sessions(
    db: sqlite_utils.Database,
    anchor: HeadAnchor | None,
    targets: Sequence[str],
    between: Step | None = None,
) -> Deletion:
    """Remove `targets`' rows in one transaction, rewrite the anchor without them, record the
    event, then `scrub`. The caller holds each session (`writers.py`) and checked it exists."""
    step = between or (lambda _name: None)
    conn = db.conn
    marks = ", ".join("?" for _ in targets)
    (entries,) = conn.execute(
        f"SELECT COUNT(*) FROM entries WHERE session IN ({marks})", list(targets)
    ).fetchone()
    points = read_anchor(anchor.path) if anchor is not None else None
    gone = [p for s, p in (points or {}).items() if s in targets]
    if anchor is not None and points is not None:
        kept = [p for s, p in points.items() if s not in targets]
        anchor.replace(kept, read_events(anchor.path))
    step("anchor rewritten")
    (secure,) = conn.execute("PRAGMA secure_delete").fetchone()
    conn.execute("PRAGMA secure_delete = ON")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(f"INSERT INTO {MARKER} (session) VALUES (?)", [(s,) for s in targets])
            step("marked")
            for table, column in session_columns(db):
                conn.execute(f'DELETE FROM "{table}" WHERE "{column}" IN ({marks})', list(targets))
                step(f"deleted from {table}")
            conn.execute(f"DELETE FROM {MARKER}")
            record_event(db, utc_now(), SESSION_DELETED, _event_text(len(targets), entries))
            step("recorded")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if anchor is not None and gone:
                anchor.record(gone)  # the session is whole again: so is its anchor
            raise
    finally:
        conn.execute(f"PRAGMA secure_delete = {int(secure)}")
    step("committed")
    return Deletion(tuple(targets), int(entries), compact(db))


def compact(db: sqlite_utils.Database) -> str:
    """`scrub`, then record that it was done ('' when it was, else why not): until then the
    next open does it (`finish_compaction`), so a process killed after the commit, or a
    reader that kept the WAL from being emptied, leaves the text on disk only until then."""
    why = scrub(db)
    if not why:
        record_event(db, utc_now(), SESSION_COMPACTED, "the file was compacted after it")
        with contextlib.suppress(sqlite3.OperationalError):  # that one frame: tidiness only
            db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return why


def finish_compaction(db: sqlite_utils.Database) -> bool:
    """At open: compact the file if the newest deletion was never compacted after (one
    indexed read of `ledger_events` when it was). True when it compacted now."""
    row = db.execute(
        "SELECT kind FROM ledger_events WHERE kind IN (?, ?) ORDER BY seq DESC LIMIT 1",
        [SESSION_DELETED, SESSION_COMPACTED],
    ).fetchone()
    if row is None or row[0] != SESSION_DELETED:
        return False
    return not compact(db)


def _event_text(sessions: int, entries: int) -> str:
    entry_s = "entry" if entries == 1 else "entries"
    if sessions == 1:
        return f"deleted one session, {entries} {entry_s}"
    return f"deleted {sessions} sessions (one and those continued from it), {entries} {entry_s}"


def scrub(db: sqlite_utils.Database) -> str:
    """Empty the WAL into the file and VACUUM it, so no free page or WAL frame keeps what was
    deleted. '' when done, else why not (another connection reading or writing meanwhile)."""
    conn = db.conn
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        busy, _frames, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.OperationalError as exc:
        return f"the file could not be compacted ({exc})"
    if busy:
        return "another connection was reading the ledger, so its WAL could not be emptied"
    return ""


def deletions(db: sqlite_utils.Database) -> int:
    """How many deletions `ledger_events` records."""
    (n,) = db.execute(
        "SELECT COUNT(*) FROM ledger_events WHERE kind = ?", [SESSION_DELETED]
    ).fetchone()
    return int(n)


def markers_left(db: sqlite_utils.Database) -> int:
    """Rows in `_vak_deleting` outside a deletion: someone wrote them outside Vak."""
    if MARKER not in db.table_names():
        return 0
    (n,) = db.execute(f"SELECT COUNT(*) FROM {MARKER}").fetchone()
    return int(n)
