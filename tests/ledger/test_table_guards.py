"""Every table of the ledger database is append-only or mutable by design, and guarded so
(issue 24 item 1, F1 and F7): the tables are read from `sqlite_master`, so a table added
without saying what it is, or without its triggers, fails here. Each rewrite SQLite offers —
REPLACE, INSERT OR REPLACE, an UPSERT on every unique key (the rowid included), UPDATE,
UPDATE OR REPLACE, DELETE — is tried from a plain `sqlite3` connection, one with
`recursive_triggers` on, and the `sqlite3` shell, and must leave the table's rows as they were.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from vak_desktop.context.payloads import AssistantStep, Directive
from vak_desktop.ledger import Ledger, LedgerError
from vak_desktop.ledger.integrity import APPEND_ONLY, EMPTY_OUTSIDE_A_DELETION, TABLES

SHELL = shutil.which("sqlite3")


def _filled(path: Path) -> None:
    """A ledger with at least one row in every table (an unfolded journal stream included)."""
    store = Ledger.open(path)
    session = store.create_session().id
    store.append(session, Directive(text="question"))
    store.append(session, AssistantStep(text="answer", model="m"))
    store.checkpoint(session, "s1", store.last_seq(), "streaming", "")  # not folded
    store.checkpoint(session, "s1", store.last_seq(), " on", "")
    store.append(store.create_session().id, Directive(text="another"))
    store.close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO capacity_profiles (provider, model, quantisation, probed_at, profile,"
            " activity, recorded_at) VALUES ('p', 'm', 'q', 't', '{}', '{}', 't')"
        )
    conn.close()


def _tables(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
    conn.close()
    return sorted(r[0] for r in rows)


def _rows(path: Path, table: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(f"SELECT rowid, * FROM {table} ORDER BY rowid").fetchall()
    conn.close()
    return rows


def _rewrites(path: Path, table: str) -> list[str]:
    """Every statement that would rewrite or remove a row of `table`, built from its schema."""
    with sqlite3.connect(path) as conn:
        info = conn.execute(f"PRAGMA table_info({table})").fetchall()
        uniques = [
            [c[2] for c in conn.execute(f"PRAGMA index_info({index[1]})")]
            for index in conn.execute(f"PRAGMA index_list({table})")
            if index[2]  # unique
        ]
    conn.close()
    columns = [c[1] for c in info]
    alias = [c[1] for c in info if c[5] == 1 and c[2].upper() == "INTEGER"]  # rowid alias
    rowid = alias[0] if alias else "rowid"
    keys = [[rowid], *uniques]
    names = columns if alias else ["rowid", *columns]
    first = f"(SELECT MIN(rowid) FROM {table})"
    plain = next(c for c in columns if [c] not in keys)
    out = []
    for key in keys:
        # the row keeps the key's value and takes fresh ones for every other unique key
        others = {c for k in keys if k != key for c in k}
        values = ", ".join(
            ("NULL" if c == rowid else "'fresh-' || hex(randomblob(8))") if c in others else c
            for c in names
        )
        select = f"SELECT {values} FROM {table} WHERE rowid = {first}"
        into = f"INTO {table} ({', '.join(names)}) {select}"
        out += [
            f"REPLACE {into}",
            f"INSERT OR REPLACE {into}",
            f"INSERT {into} ON CONFLICT DO UPDATE SET {plain} = excluded.{plain}",
            f"INSERT {into} ON CONFLICT DO NOTHING",
        ]
    second = f"(SELECT MAX(rowid) FROM {table})"
    out += [
        f"UPDATE {table} SET {plain} = {plain} WHERE rowid = {first}",
        f"UPDATE OR REPLACE {table} SET {rowid} = {second} WHERE rowid = {first}",
        f"DELETE FROM {table} WHERE rowid = {first}",
        f"DELETE FROM {table}",
    ]
    return out


def test_every_table_of_the_database_says_what_it_is(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    _filled(path)
    assert _tables(path) == sorted(TABLES)
    for table, what in TABLES.items():
        if what == EMPTY_OUTSIDE_A_DELETION:  # the deletion marker (`deletion.py`)
            assert not _rows(path, table), f"{table} holds a row outside a deletion"
            continue
        assert _rows(path, table), f"the fixture leaves {table} empty: nothing would be tried"


def _all_rewrites(path: Path) -> list[tuple[str, str]]:
    return [
        (table, sql)
        for table in _tables(path)
        if TABLES.get(table) == APPEND_ONLY
        for sql in _rewrites(path, table)
    ]


@pytest.mark.parametrize("recursive", [False, True], ids=["plain", "recursive_triggers"])
def test_no_row_of_an_append_only_table_can_be_rewritten_or_removed(
    tmp_path: Path, recursive: bool
) -> None:
    path = tmp_path / "ledger.sqlite3"
    _filled(path)
    tried = _all_rewrites(path)
    got_past = []
    for table, sql in tried:
        before = _rows(path, table)
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            if recursive:
                conn.execute("PRAGMA recursive_triggers = ON")
            conn.execute(sql)
            got_past.append(sql)  # an UPSERT DO NOTHING changes nothing, but is refused too
        except sqlite3.IntegrityError as exc:
            assert "refused" in str(exc) or "insert-only" in str(exc), (sql, exc)
        finally:
            conn.close()
        if _rows(path, table) != before:
            got_past.append(f"changed {table}: {sql}")
    assert got_past == []
    assert len(tried) >= 5 * 9  # five append-only tables, at least nine statements each
    store = Ledger.open(path)
    assert store.verify().ok
    store.close()


@pytest.mark.skipif(SHELL is None, reason="the sqlite3 shell is not installed (apt sqlite3)")
def test_the_sqlite3_shell_cannot_rewrite_an_append_only_table_either(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    _filled(path)
    got_past = []
    for table, sql in _all_rewrites(path):
        before = _rows(path, table)
        done = subprocess.run(
            [str(SHELL), str(path), sql + ";"], capture_output=True, text=True, timeout=20
        )
        if done.returncode == 0 or _rows(path, table) != before:
            got_past.append(sql)
    assert got_past == []


def test_a_session_changes_only_its_title_and_archive_flag(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    _filled(path)
    refused = [s for s in _rewrites(path, "sessions") if not s.startswith("UPDATE sessions")]
    refused += [
        "REPLACE INTO sessions (rowid, id, created_at, title, archived)"
        " SELECT rowid, 'another', created_at, title, archived FROM sessions",
        "UPDATE sessions SET id = 'elsewhere'",
        "UPDATE sessions SET created_at = 'then'",
        "UPDATE sessions SET derived_from = 'another'",
        "UPDATE sessions SET rowid = rowid + 10",
        "UPDATE OR REPLACE sessions SET rowid = (SELECT MAX(rowid) FROM sessions)"
        " WHERE rowid = (SELECT MIN(rowid) FROM sessions)",
    ]
    before = _rows(path, "sessions")
    for sql in refused:
        conn = sqlite3.connect(path, isolation_level=None)
        with conn, pytest.raises(sqlite3.IntegrityError):
            conn.execute(sql)
        conn.close()
    assert _rows(path, "sessions") == before
    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("UPDATE sessions SET title = 'renamed', archived = 1")
    conn.close()
    assert [r[3:] for r in _rows(path, "sessions")] == [("renamed", 1, None)] * 2


@pytest.mark.allow_log_warnings  # the dropped triggers are restored, with a warning
def test_a_migration_record_removed_with_the_triggers_dropped_is_one_line(
    tmp_path: Path,
) -> None:
    """F7: `DELETE FROM _vak_migrations` used to be allowed; afterwards every open failed with
    SQLite's "table entries already exists". Now it is refused, and done anyway (triggers
    dropped) it is a one-line LedgerError naming the table."""
    path = tmp_path / "ledger.sqlite3"
    _filled(path)
    with sqlite3.connect(path, isolation_level=None) as conn:
        with pytest.raises(sqlite3.IntegrityError, match="DELETE refused"):
            conn.execute("DELETE FROM _vak_migrations")
        conn.execute("DROP TRIGGER _vak_migrations_no_delete")
        conn.execute("DELETE FROM _vak_migrations")
    conn.close()
    with pytest.raises(LedgerError, match=r"_vak_migrations\) lacks 0001_entries") as caught:
        Ledger.open(path)
    assert "\n" not in str(caught.value) and "changed outside Vak" in str(caught.value)
