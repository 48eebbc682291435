"""Reading the ledger: entries by id, prefix, session or kind, a session's chain, its rows.

The `Reading` half of `Ledger` (`store.py`): every SELECT of entries goes through `_select`, so
that a row changed outside Vak to bytes that no longer decode is a `DamagedEntry` naming its
seq rather than SQLite's bare error.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.codec import decode_payload
from vak_desktop.context.payloads import Payload
from vak_desktop.ledger.canonical import ID_PREFIX
from vak_desktop.ledger.errors import DamagedEntry, LedgerError
from vak_desktop.ledger.migrations import KINDS_READ_ACROSS_SESSIONS
from vak_desktop.ledger.sqlite_import import sqlite_utils

STAGED = 2  # `sessions.archived` of an import not yet complete (`appending.Appending.staged`)


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
    derived_from: str | None = None  # the session it was continued from (`continuing.py`)


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


class Reading:
    """The reads of `Ledger`: sessions' rows and entries."""

    _db: sqlite_utils.Database

    def session(self, session: str) -> SessionInfo:
        row = self._db.execute(
            "SELECT id, created_at, title, archived, derived_from FROM sessions WHERE id = ?",
            [session],
        ).fetchone()
        if row is None:
            raise UnknownSession(session)
        return SessionInfo(row[0], row[1], row[2], bool(row[3]), row[4])

    def sessions(self, include_archived: bool = False) -> list[SessionInfo]:
        """Sessions, most recently active first."""
        rows = self._db.execute(
            """
            SELECT s.id, s.created_at, s.title, s.archived, s.derived_from,
                   COALESCE((SELECT MAX(seq) FROM entries e WHERE e.session = s.id), 0) AS last
            FROM sessions s
            WHERE (? OR s.archived = 0) AND s.archived != 2
            ORDER BY last DESC, s.created_at DESC
            """,
            [int(include_archived)],
        ).fetchall()
        return [SessionInfo(r[0], r[1], r[2], bool(r[3]), r[4]) for r in rows]

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
