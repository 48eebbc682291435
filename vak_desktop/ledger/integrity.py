"""The database's own refusals: every trigger that keeps the ledger append-only, checked at open.

SQLite offers more ways to rewrite or remove a row than UPDATE and DELETE: `REPLACE` (and
`INSERT OR REPLACE`) deletes the conflicting row *without* firing DELETE triggers unless the
connection turned `recursive_triggers` on, which a `sqlite3` shell never does; an UPSERT
(`INSERT … ON CONFLICT DO UPDATE`) updates. So besides BEFORE UPDATE / BEFORE DELETE, each
protected table has a BEFORE INSERT trigger that refuses a row whose key already exists: a
REPLACE or UPSERT can only conflict on a key, and that trigger fires before the conflict is
resolved, whatever the connection's pragmas.

- `entries`: no UPDATE, no DELETE, no insert over an existing `seq` or `id`.
- `sessions`: no DELETE (archiving hides a session), no insert over an existing id, and an
  UPDATE may change only the title and the archive flag (its id, creation time and
  `derived_from` are fixed).
- `capacity_profiles`: insert-only like entries.
- `stream_journal`: no UPDATE, no insert over an existing seq; a DELETE only of a folded
  stream's rows (`journal.py`).
- a session's rows in `entries`, `sessions` and `stream_journal` go only while its marker is in
  `_vak_deleting`, inside the one transaction that deletes it for good (`deletion.py`); the
  marker can be forged by anyone who can write the file, so what a forged one removed is the
  head anchor's to detect, as for a dropped trigger.
- `ledger_events` and `_vak_migrations`: insert-only like entries (a deleted migration row used
  to make every later open re-run it and fail with "table entries already exists").

A rowid table whose key is not its rowid (`sessions`, `_vak_migrations`) can also conflict on
the rowid itself (`REPLACE INTO sessions (rowid, …)`), so its insert trigger checks both.
`TABLES` says what each table is; a test enumerates `sqlite_master` against it.

A trigger can still be dropped by anyone who can write the file. `check_triggers` runs at every
open: a missing or altered trigger is restored, logged, and recorded in `ledger_events`
(itself insert-only), which `vak ledger verify` reports. What was done while the trigger was
gone is the head anchor's to detect (`anchor.py`).
"""

from __future__ import annotations

import json
import logging

import blake3

from vak_desktop.ledger.sqlite_import import sqlite_utils

log = logging.getLogger(__name__)


def _refuse(name: str, when: str, table: str, message: str, condition: str = "") -> str:
    cond = f" WHEN {condition}" if condition else ""
    return (
        f"CREATE TRIGGER {name} BEFORE {when} ON {table}{cond} "
        f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
    )


# A journal row may go once its stream is folded: an assistant step of its session was appended
# after the stream began, and holds the text (`journal.py`).
FOLDED_NOT = (
    "NOT EXISTS (SELECT 1 FROM entries WHERE session = OLD.session"
    " AND kind = 'assistant_step' AND seq > OLD.base_seq)"
)

# A session's rows may go while its deletion marker is in place: only inside the one
# transaction of `deletion.delete_sessions`, which inserts the marker and removes it again.
MARKER = "_vak_deleting"
NOT_DELETING = f"NOT EXISTS (SELECT 1 FROM {MARKER} WHERE session = OLD.session)"

TRIGGERS: dict[str, str] = {
    "entries_no_update": _refuse(
        "entries_no_update", "UPDATE", "entries", "ledger entries are append-only: UPDATE refused"
    ),
    "entries_no_delete": _refuse(
        "entries_no_delete",
        "DELETE",
        "entries",
        "ledger entries are append-only: DELETE refused",
        NOT_DELETING,
    ),
    "entries_no_replace": _refuse(
        "entries_no_replace",
        "INSERT",
        "entries",
        "ledger entries are append-only: an entry with this seq or id exists (REPLACE refused)",
        "EXISTS (SELECT 1 FROM entries WHERE seq = NEW.seq)"
        " OR EXISTS (SELECT 1 FROM entries WHERE id = NEW.id)",
    ),
    "sessions_no_delete": _refuse(
        "sessions_no_delete",
        "DELETE",
        "sessions",
        "sessions are deleted only by Vak (`vak delete`): DELETE refused",
        f"NOT EXISTS (SELECT 1 FROM {MARKER} WHERE session = OLD.id)",
    ),
    "sessions_no_replace": _refuse(
        "sessions_no_replace",
        "INSERT",
        "sessions",
        "a session with this id exists (REPLACE refused)",
        "EXISTS (SELECT 1 FROM sessions WHERE id = NEW.id)"
        " OR EXISTS (SELECT 1 FROM sessions WHERE rowid = NEW.rowid)",
    ),
    "sessions_fixed_identity": _refuse(
        "sessions_fixed_identity",
        "UPDATE",
        "sessions",
        "a session keeps its id, creation time and origin: UPDATE refused",
        "NEW.id IS NOT OLD.id OR NEW.created_at IS NOT OLD.created_at"
        " OR NEW.rowid IS NOT OLD.rowid OR NEW.derived_from IS NOT OLD.derived_from",
    ),
    "capacity_profiles_no_update": _refuse(
        "capacity_profiles_no_update",
        "UPDATE",
        "capacity_profiles",
        "capacity profiles are insert-only: UPDATE refused",
    ),
    "capacity_profiles_no_delete": _refuse(
        "capacity_profiles_no_delete",
        "DELETE",
        "capacity_profiles",
        "capacity profiles are insert-only: DELETE refused",
    ),
    "capacity_profiles_no_replace": _refuse(
        "capacity_profiles_no_replace",
        "INSERT",
        "capacity_profiles",
        "capacity profiles are insert-only: a row with this seq exists (REPLACE refused)",
        "EXISTS (SELECT 1 FROM capacity_profiles WHERE seq = NEW.seq)",
    ),
    "stream_journal_no_replace": _refuse(
        "stream_journal_no_replace",
        "INSERT",
        "stream_journal",
        "the stream journal is insert-only: a row with this seq exists (REPLACE refused)",
        "EXISTS (SELECT 1 FROM stream_journal WHERE seq = NEW.seq)",
    ),
    "stream_journal_no_update": _refuse(
        "stream_journal_no_update", "UPDATE", "stream_journal", "the stream journal is insert-only"
    ),
    "stream_journal_no_delete": _refuse(
        "stream_journal_no_delete",
        "DELETE",
        "stream_journal",
        "the stream journal keeps a stream until a step holds it: DELETE refused",
        f"{FOLDED_NOT} AND {NOT_DELETING}",
    ),
    "ledger_events_no_update": _refuse(
        "ledger_events_no_update", "UPDATE", "ledger_events", "ledger events are insert-only"
    ),
    "ledger_events_no_delete": _refuse(
        "ledger_events_no_delete", "DELETE", "ledger_events", "ledger events are insert-only"
    ),
    "ledger_events_no_replace": _refuse(
        "ledger_events_no_replace",
        "INSERT",
        "ledger_events",
        "ledger events are insert-only: an event with this seq exists (REPLACE refused)",
        "EXISTS (SELECT 1 FROM ledger_events WHERE seq = NEW.seq)",
    ),
    "_vak_migrations_no_update": _refuse(
        "_vak_migrations_no_update",
        "UPDATE",
        "_vak_migrations",
        "the record of applied migrations is insert-only: UPDATE refused",
    ),
    "_vak_migrations_no_delete": _refuse(
        "_vak_migrations_no_delete",
        "DELETE",
        "_vak_migrations",
        "the record of applied migrations is insert-only: DELETE refused",
    ),
    "_vak_migrations_no_replace": _refuse(
        "_vak_migrations_no_replace",
        "INSERT",
        "_vak_migrations",
        "the record of applied migrations is insert-only: this migration or rowid exists"
        " (REPLACE refused)",
        "EXISTS (SELECT 1 FROM _vak_migrations WHERE name = NEW.name)"
        " OR EXISTS (SELECT 1 FROM _vak_migrations WHERE rowid = NEW.rowid)",
    ),
}

# Triggers that read what migration 0009 made (the marker table, `sessions.derived_from`): an
# earlier migration leaves the older form in place until 0009 replaces it.
NEEDS_MARKER = frozenset(
    {
        "entries_no_delete",
        "sessions_no_delete",
        "sessions_fixed_identity",
        "stream_journal_no_delete",
    }
)

# What each table of the ledger database is, and so how it is guarded (a test enumerates
# `sqlite_master` against this: a table added without saying what it is fails it).
APPEND_ONLY = "append-only"
EMPTY_OUTSIDE_A_DELETION = "empty outside a deletion"
TABLES: dict[str, str] = {
    "entries": APPEND_ONLY,
    "capacity_profiles": APPEND_ONLY,
    "ledger_events": APPEND_ONLY,
    "_vak_migrations": APPEND_ONLY,
    # rows go only once folded: an assistant step holds their text (`journal.py`)
    "stream_journal": APPEND_ONLY,
    # mutable by design: the user's title and archive flag; id, creation, origin fixed
    "sessions": "title and archived mutable",
    # empty outside a deletion's transaction; a row left in it is reported by verify
    MARKER: EMPTY_OUTSIDE_A_DELETION,
}


def _table(sql: str) -> str:
    return sql.split(" ON ", 1)[1].split()[0]


def _ready(name: str, sql: str, tables: set[str]) -> bool:
    """Whether every table the trigger reads exists yet."""
    return _table(sql) in tables and (name not in NEEDS_MARKER or MARKER in tables)


def _normal(sql: str) -> str:
    return " ".join(sql.replace("\n", " ").split()).rstrip(";")


TRIGGERS_RESTORED = "triggers_restored"
ANCHOR_STARTED = "anchor_started"
ANCHOR_MISSING = "anchor_missing"


def create_events_table(db: sqlite_utils.Database) -> None:
    """What happened to the ledger itself, outside any session (migration 0004): triggers
    restored at open, the head anchor started or found missing. Insert-only."""
    db.execute(
        "CREATE TABLE ledger_events (seq INTEGER PRIMARY KEY, at TEXT NOT NULL,"
        " kind TEXT NOT NULL, message TEXT NOT NULL)"
    )


def record_event(db: sqlite_utils.Database, now: str, kind: str, message: str) -> None:
    db.execute(
        "INSERT INTO ledger_events (at, kind, message) VALUES (?, ?, ?)", [now, kind, message]
    )


def events(db: sqlite_utils.Database, kind: str | None = None) -> list[tuple[str, str, str]]:
    """Every recorded ledger event: (when, kind, message), oldest first."""
    rows = db.execute("SELECT at, kind, message FROM ledger_events ORDER BY seq").fetchall()
    return [(r[0], r[1], r[2]) for r in rows if kind is None or r[1] == kind]


def events_digest(db: sqlite_utils.Database, count: int | None = None) -> tuple[int, str]:
    """(how many, digest) of the first `count` events (all by default), in seq order: what the
    head anchor records of `ledger_events`, and verify recomputes (`anchor.py`)."""
    hasher = blake3.blake3()
    n = 0
    limit = -1 if count is None else count
    for row in db.execute(
        "SELECT seq, at, kind, message FROM ledger_events ORDER BY seq LIMIT ?", [limit]
    ):
        hasher.update(json.dumps(list(row), ensure_ascii=False).encode() + b"\n")
        n += 1
    return n, "b3:" + hasher.hexdigest()


def create_missing_triggers(db: sqlite_utils.Database) -> list[str]:
    """Create every trigger of `TRIGGERS` that is absent or not as written. Returns their names.

    Runs inside the caller's transaction (migration 0004 creates the new ones this way)."""
    present = {
        name: _normal(sql or "")
        for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
    }
    tables = set(db.table_names())
    restored = []
    for name, sql in TRIGGERS.items():
        if present.get(name) == _normal(sql) or not _ready(name, sql, tables):
            continue  # as written, or its table is not made yet (a later migration makes it)
        if name in present:
            db.execute(f"DROP TRIGGER {name}")
        db.execute(sql)
        restored.append(name)
    return restored


def check_triggers(db: sqlite_utils.Database, now: str, where: str) -> list[str]:
    """Restore any append-only trigger that was dropped or altered since the last open; say so
    in the log and in `ledger_events`. Returns the names restored."""
    present = {
        name: _normal(sql or "")
        for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
    }
    tables = set(db.table_names())
    if all(
        present.get(name) == _normal(sql) or not _ready(name, sql, tables)
        for name, sql in TRIGGERS.items()
    ):
        return []  # the common case: read-only, no transaction
    db.execute("BEGIN IMMEDIATE")
    try:
        restored = create_missing_triggers(db)
        if restored:
            message = "restored missing or altered triggers: " + ", ".join(restored)
            record_event(db, now, TRIGGERS_RESTORED, message)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    if restored:
        log.warning(
            "the ledger %s had lost its append-only triggers %s; they are restored "
            "(run `vak ledger verify` to check nothing was removed meanwhile)",
            where,
            ", ".join(restored),
        )
    return restored
