"""Named schema migrations, applied in order and only ever appended to.

A migration's name is recorded in `_vak_migrations` when it runs. Never edit or reorder a
migration that has shipped: add a new one at the end. A test checks the names are unique and
that an existing ledger's applied names are a prefix of this list.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from vak_desktop.ledger.errors import LedgerError
from vak_desktop.ledger.integrity import MARKER, create_events_table, create_missing_triggers
from vak_desktop.ledger.journal import create_journal, replace_delete_trigger
from vak_desktop.ledger.sqlite_import import sqlite_utils


@dataclass(frozen=True)
class Migration:
    name: str
    apply: Callable[[sqlite_utils.Database], None]


def _create_entries(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE entries (
            seq        INTEGER PRIMARY KEY,
            id         TEXT NOT NULL UNIQUE,
            parent     TEXT,
            session    TEXT NOT NULL,
            kind       TEXT NOT NULL,
            payload    TEXT NOT NULL,
            created_at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX entries_by_session ON entries(session, seq)")
    db.execute("CREATE INDEX entries_by_kind ON entries(kind, session)")
    # The ledger is append-only: the database itself refuses to change or remove an entry.
    db.execute(
        """
        CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
        BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only: UPDATE refused'); END
        """
    )
    db.execute(
        """
        CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries
        BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only: DELETE refused'); END
        """
    )


def _create_sessions(db: sqlite_utils.Database) -> None:
    # Session metadata the user edits (title, archive flag). Never holds conversation content:
    # that lives only in entries.
    db.execute(
        """
        CREATE TABLE sessions (
            id         TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            title      TEXT NOT NULL DEFAULT '',
            archived   INTEGER NOT NULL DEFAULT 0
        )
        """
    )


def _create_capacity_profiles(db: sqlite_utils.Database) -> None:
    # Measured CapacityProfiles outside any session (`vak probe`, the background probe), with
    # the probe Activity that produced each. Insert-only like `entries`: a re-probe adds a row,
    # the newest by probed_at wins. Sessions get their own copy as ledger entries at the next
    # bind, so a conversation's chain still holds every profile it was planned against.
    db.execute(
        """
        CREATE TABLE capacity_profiles (
            seq          INTEGER PRIMARY KEY,
            provider     TEXT NOT NULL,
            model        TEXT NOT NULL,
            quantisation TEXT NOT NULL,
            probed_at    TEXT NOT NULL,
            profile      TEXT NOT NULL,
            activity     TEXT NOT NULL,
            recorded_at  TEXT NOT NULL
        )
        """
    )
    db.execute(
        "CREATE INDEX capacity_profiles_by_key"
        " ON capacity_profiles(provider, model, quantisation, probed_at)"
    )
    for verb in ("UPDATE", "DELETE"):
        db.execute(
            f"""
            CREATE TRIGGER capacity_profiles_no_{verb.lower()} BEFORE {verb} ON capacity_profiles
            BEGIN SELECT RAISE(ABORT, 'capacity profiles are insert-only: {verb} refused'); END
            """
        )


def _refuse_every_rewrite(db: sqlite_utils.Database) -> None:
    # REPLACE and UPSERT bypass BEFORE DELETE; sessions were deletable (`integrity.py`)
    create_events_table(db)
    create_missing_triggers(db)


# The kinds `Ledger.entries_of_kind` reads across every session (session search reads turn
# cards, MCP observation reads activities). Indexed alone: an index over every kind cost each
# append one more B-tree page written to the WAL (~5 µs of a ~40 µs append, bench/ledger.py)
# for lookups no one makes. Adding a kind here needs a new migration that rebuilds the index.
KINDS_READ_ACROSS_SESSIONS = ("activity", "turn_card")


def _index_only_kinds_read_across_sessions(db: sqlite_utils.Database) -> None:
    kinds = ", ".join(f"'{kind}'" for kind in KINDS_READ_ACROSS_SESSIONS)
    db.execute("DROP INDEX IF EXISTS entries_by_kind")
    db.execute(f"CREATE INDEX entries_of_read_kinds ON entries(kind, seq) WHERE kind IN ({kinds})")


def _guard_every_table(db: sqlite_utils.Database) -> None:
    # REPLACE over `ledger_events` and `stream_journal` rows, and any rewrite of
    # `_vak_migrations`, got past the UPDATE/DELETE triggers (issue 24 F1, F7)
    create_missing_triggers(db)


def _deletion_and_origin(db: sqlite_utils.Database) -> None:
    # Delete for good (`deletion.py`): the marker whose presence lets a session's rows go, the
    # DELETE triggers that read it; and a session continued from another one names it.
    db.execute(f"CREATE TABLE {MARKER} (session TEXT PRIMARY KEY)")
    db.execute("ALTER TABLE sessions ADD COLUMN derived_from TEXT")
    db.execute("CREATE INDEX sessions_by_origin ON sessions(derived_from)")
    create_missing_triggers(db)


MIGRATIONS: tuple[Migration, ...] = (
    Migration("0001_entries", _create_entries),
    Migration("0002_sessions", _create_sessions),
    Migration("0003_capacity_profiles", _create_capacity_profiles),
    Migration("0004_refuse_every_rewrite", _refuse_every_rewrite),
    Migration("0005_stream_journal", create_journal),
    Migration("0006_index_only_kinds_read_across_sessions", _index_only_kinds_read_across_sessions),
    Migration("0007_fold_the_stream_journal", replace_delete_trigger),
    Migration("0008_guard_every_table", _guard_every_table),
    Migration("0009_deletion_and_origin", _deletion_and_origin),
)

STARTS_THE_ANCHOR = "0004_refuse_every_rewrite"  # the first open past it starts an anchor


def applied(db: sqlite_utils.Database) -> list[str]:
    """Names of the migrations this database has run, in the order they ran."""
    if "_vak_migrations" not in db.table_names():
        return []
    return [row[0] for row in db.execute("SELECT name FROM _vak_migrations ORDER BY rowid")]


def migrate(db: sqlite_utils.Database, now: str) -> list[str]:
    """Run every migration not yet applied, each in its own transaction. Returns their names."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS _vak_migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
    )
    done = applied(db)
    known = [m.name for m in MIGRATIONS]
    if done != known[: len(done)]:
        raise RuntimeError(
            f"this ledger's migrations {done} are not a prefix of this version's {known}: "
            "it was written by a different build of Vak"
        )
    ran = []
    for migration in MIGRATIONS[len(done) :]:
        db.execute("BEGIN IMMEDIATE")
        try:
            try:
                migration.apply(db)
            except sqlite3.OperationalError as exc:
                if "already exists" not in str(exc):
                    raise
                raise LedgerError(
                    f"this ledger's record of its migrations (_vak_migrations) lacks {migration.name},"
                    f" yet its schema already has what it makes ({exc}): the record was changed"
                    " outside Vak"
                ) from None
            db.execute(
                "INSERT INTO _vak_migrations (name, applied_at) VALUES (?, ?)",
                [migration.name, now],
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        ran.append(migration.name)
    return ran
