"""The stream journal: text a model is streaming, on disk while it streams.

A step becomes a ledger entry only when its stream ends, so a process killed mid-stream used to
lose everything the user had already read. While a step streams, `stream_step` writes what
arrived since its last checkpoint (every quarter second or 16 KB) as a journal row: the delta,
never the whole text again, so the cost is linear in the answer. Rows are insert-only like
entries, and outside the hash chain: they are a staging area, not the record.

A journal stream is *folded* once an assistant step of its session was appended after the
stream began (the step holds the whole text, so the rows are redundant from then on): the
append that folds it deletes its rows in the same transaction (`fold`), so an answer is stored
once, not once in the journal and again in its step. The database refuses a DELETE of rows not
yet folded (`integrity.py`). A stream left unfolded is what a killed process was showing: the
next turn of the session appends it as an assistant step marked interrupted
(`runtime/turn/closing.py`), which folds it.
"""

from __future__ import annotations

import sqlite3

from vak_desktop.ledger.integrity import create_missing_triggers
from vak_desktop.ledger.sqlite_import import sqlite_utils


def create_journal(db: sqlite_utils.Database) -> None:
    """Migration 0005: the journal table (and its insert-only triggers)."""
    db.execute(
        """
        CREATE TABLE stream_journal (
            seq      INTEGER PRIMARY KEY,
            session  TEXT NOT NULL,
            stream   TEXT NOT NULL,
            base_seq INTEGER NOT NULL,
            text     TEXT NOT NULL,
            thinking TEXT NOT NULL,
            at       TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX stream_journal_by_session ON stream_journal(session, seq)")
    create_missing_triggers(db)


def replace_delete_trigger(db: sqlite_utils.Database) -> None:
    """Migration 0007: the journal's DELETE trigger allows removing folded rows (before, every
    answer stayed on disk twice). Dropped here so that the open's trigger check finds it as
    written rather than "altered"."""
    db.execute("DROP TRIGGER IF EXISTS stream_journal_no_delete")
    create_missing_triggers(db)
    db.execute(
        "DELETE FROM stream_journal WHERE EXISTS (SELECT 1 FROM entries e"
        " WHERE e.session = stream_journal.session AND e.kind = 'assistant_step'"
        " AND e.seq > stream_journal.base_seq)"
    )


def fold(conn: sqlite3.Connection, session: str, step_seq: int) -> None:
    """Remove the session's journal rows an assistant step at `step_seq` now holds (inside the
    append's transaction)."""
    conn.execute(
        "DELETE FROM stream_journal WHERE session = ? AND base_seq < ?", [session, step_seq]
    )


def unfolded(db: sqlite_utils.Database, session: str) -> tuple[str, str] | None:
    """(text, thinking) of the session's newest journal stream if no assistant step was
    appended after it began; None when there is none or it is folded."""
    row = db.execute(
        "SELECT stream, base_seq FROM stream_journal WHERE session = ? ORDER BY seq DESC LIMIT 1",
        [session],
    ).fetchone()
    if row is None:
        return None
    stream, base_seq = row
    stored = db.execute(
        "SELECT 1 FROM entries WHERE session = ? AND kind = 'assistant_step' AND seq > ? LIMIT 1",
        [session, base_seq],
    ).fetchone()
    if stored is not None:
        return None
    rows = db.execute(
        "SELECT text, thinking FROM stream_journal WHERE stream = ? ORDER BY seq", [stream]
    ).fetchall()
    return "".join(r[0] for r in rows), "".join(r[1] for r in rows)
