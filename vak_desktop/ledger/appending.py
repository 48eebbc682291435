"""Appending to the ledger: the hash chain's next link, one transaction or bounded chunks.

The `Appending` half of `Ledger` (`store.py`). An append after the head this process last wrote
is one autocommitted INSERT that checks that head is still the session's newest
(`_AFTER_KNOWN_HEAD`); any other append reads the head, title and count under BEGIN IMMEDIATE.
Each commit is followed by the head anchor's line (`anchor.py`). `transaction()` makes many
appends one all-or-nothing commit; the stream journal's checkpoints are written here too and
folded by the step that ends their stream (`journal.py`).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vak_desktop.context.codec import decode_payload, to_json_value
from vak_desktop.context.payloads import AssistantStep, Directive, Payload
from vak_desktop.ledger.anchor import AnchorPoint, HeadAnchor
from vak_desktop.ledger.canonical import canonical_form, entry_id, envelope_bytes, utc_now
from vak_desktop.ledger.errors import LedgerError, StorageError, storage
from vak_desktop.ledger.journal import fold, unfolded
from vak_desktop.ledger.reading import STAGED, Entry, Reading, UnknownSession
from vak_desktop.redaction import redact

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


# A staged write commits after this much writing, then leaves the lock to others for
# YIELD_SECONDS: SQLite's busy handler polls a waiting writer every 25-100 ms, so a 20 ms gap
# every 0.25 s lets it in within a few chunks (bench/importing.py).
CHUNK_SECONDS = 0.25
YIELD_SECONDS = 0.02


class Appending(Reading):
    """The writes of `Ledger` that add entries (and journal rows)."""

    path: Path | None
    _anchor: HeadAnchor | None
    _heads: dict[str, AnchorPoint]  # what this process last wrote, per session
    _titled: set[str]  # sessions known to have a title
    _pending: dict[str, AnchorPoint] | None  # inside `transaction()`
    _journalled: set[str]  # sessions whose journal a step append folds
    _staging: list[str] | None  # inside `staged()`: the sessions it made, hidden until done
    _chunk_ends: float | None  # inside `staged()`: when the open chunk commits

    def append(self, session: str, payload: Payload, parent: Any = _HEAD) -> Entry:
        """Append `payload` to `session`, after its head unless `parent` names another entry.

        The entry is committed before this returns: a crash right after loses nothing.
        """
        if self._chunk_ends is not None and time.monotonic() >= self._chunk_ends:
            self._next_chunk()
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
            try:
                self._anchor.record_one(point)
            except OSError as exc:  # the entry is committed; its anchor line is not
                raise StorageError(str(self._anchor.path), exc) from None

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

    @contextlib.contextmanager
    def staged(self) -> Iterator[None]:
        """A long write (an import) that other writers can work beside, all or nothing to see.

        What is appended inside is committed in chunks of at most `CHUNK_SECONDS` of writing,
        each followed by `YIELD_SECONDS` without the lock, so that another process's append
        waits at most about one chunk (one 13 s transaction used to outlast the 10 s busy
        timeout, issue 24 F6). Every session created inside is staged (`sessions.archived =
        STAGED`: left out of every list) and made visible by one UPDATE in the last chunk; if
        anything fails, the chunk being written is rolled back and the chunks already
        committed stay hidden (their entries are still links of a valid chain, as append-only
        entries must be, and verify still checks them)."""
        if self._pending is not None:
            raise LedgerError("transactions do not nest")
        self._begin()
        self._pending, self._staging = {}, []
        self._chunk_ends = time.monotonic() + CHUNK_SECONDS
        try:
            yield
            made = self._staging
            self._db.conn.executemany(
                "UPDATE sessions SET archived = 0 WHERE id = ? AND archived = ?",
                [(session, STAGED) for session in made],
            )
            self._commit()
        except BaseException:
            self._pending = None
            self._rollback()
            self._heads.clear()
            self._titled.clear()
            raise
        finally:
            self._staging = self._chunk_ends = None
        points, self._pending = self._pending, None
        if self._anchor is not None:
            self._anchor.record(points.values())

    def _next_chunk(self) -> None:
        """Commit the chunk written so far, leave the lock to others a moment, begin the next."""
        self._commit()
        points, self._pending = self._pending or {}, {}
        if self._anchor is not None:
            self._anchor.record(points.values())
        time.sleep(YIELD_SECONDS)
        self._begin()
        self._chunk_ends = time.monotonic() + CHUNK_SECONDS

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
        step's append deletes it again, `journal.fold`). A full disk is a StorageError (it
        was a 39-line traceback mid-stream, issue 24 F9); the row is then not written."""
        self._journalled.add(session)
        with storage(str(self.path or ":memory:")):
            self._checkpoint(session, stream, base_seq, text, thinking)

    def _checkpoint(
        self, session: str, stream: str, base_seq: int, text: str, thinking: str
    ) -> None:
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


def auto_title(text: str, limit: int = 60) -> str:
    """A session title from its first directive: the first line, cut at a word near `limit`."""
    line = " ".join(text.strip().split("\n", 1)[0].split())
    if len(line) <= limit:
        return line or "Untitled"
    cut = line[:limit].rsplit(" ", 1)[0] or line[:limit]
    return cut + "…"
