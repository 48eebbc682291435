"""Opening the ledger: the connection, the migrations, the trigger check and the head anchor.

What `Ledger.open` (`store.py`) does before the first read: a WAL connection (in this process's
memory when the disk is too full for the shared index), the named migrations, the append-only
triggers checked and restored, and the head anchor started or found missing — each event of
the ledger's own then committed to in the anchor, so that verify recomputes them.
"""

from __future__ import annotations

import logging
import sqlite3

from vak_desktop.ledger.anchor import AnchorPoint, EventsPoint, HeadAnchor
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.ledger.integrity import (
    ANCHOR_MISSING,
    ANCHOR_STARTED,
    events,
    events_digest,
    record_event,
)
from vak_desktop.ledger.sqlite_import import sqlite_utils

log = logging.getLogger(__name__)


def connect(where: str) -> sqlite3.Connection:
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


def start_anchor(db: sqlite_utils.Database, anchor: HeadAnchor | None, had_one: bool) -> bool:
    """Anchor every session's current head if the anchor file is new; a missing file for a
    ledger that had one (`had_one`: an earlier open ran the migration that starts it, or
    the events say one was started) is recorded (verify reports it) before it is started
    again. True when it recorded an event."""
    if anchor is None:
        return False
    if anchor.exists():
        anchor.compact_if_large()
        return False
    now = utc_now()
    if events(db, ANCHOR_STARTED) or had_one:
        message = (
            f"the head anchor {anchor.path} was missing at open: entries removed before "
            f"{now} cannot be detected"
        )
        record_event(db, now, ANCHOR_MISSING, message)
        log.warning("%s", message)
    anchor.replace(current_heads(db))
    record_event(db, now, ANCHOR_STARTED, f"head anchor started at {anchor.path}")
    return True


def anchor_events(db: sqlite_utils.Database, anchor: HeadAnchor | None) -> None:
    """Record in the anchor how many ledger events there are and their digest, so that
    verify recomputes them instead of trusting the rows (`anchor.py`)."""
    if anchor is None:
        return
    try:
        anchor.record_events(EventsPoint(*events_digest(db)))
    except OSError as exc:  # a full disk: the next open that records an event retries
        log.warning("cannot record the ledger's events in %s: %s", anchor.path, exc)


def current_heads(db: sqlite_utils.Database) -> list[AnchorPoint]:
    rows = db.execute(
        "SELECT e.session, e.seq, e.id, c.n FROM"
        " (SELECT session, MAX(seq) AS last, COUNT(*) AS n FROM entries GROUP BY session) c"
        " JOIN entries e ON e.seq = c.last"
    ).fetchall()
    return [AnchorPoint(r[0], r[1], r[2], r[3]) for r in rows]
