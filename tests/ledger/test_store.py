"""The ledger: append-only, hash-chained, verifiable, branchable."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Directive,
    EvidenceBody,
    ToolCall,
)
from vak_desktop.ledger import Ledger, UnknownEntry, UnknownSession
from vak_desktop.ledger.migrations import MIGRATIONS, applied


def _tamper(path: Path, seq: int) -> None:
    """Change one byte of one stored payload the way an outsider would: with the sqlite3 shell,
    dropping the guard trigger first (the shell is Debian's sqlite3; Python's module if absent)."""
    sql = (
        "DROP TRIGGER entries_no_update;"
        f"UPDATE entries SET payload = replace(payload, 'secret', 'secreT') WHERE seq = {seq};"
    )
    shell = shutil.which("sqlite3")
    if shell:
        subprocess.run([shell, str(path), sql], check=True, capture_output=True)
    else:
        with sqlite3.connect(path) as conn:
            conn.executescript(sql)


def test_append_links_each_entry_to_the_previous_one(ledger: Ledger) -> None:
    session = ledger.create_session().id
    first = ledger.append(session, Directive(text="hello"))
    second = ledger.append(session, AssistantStep(text="hi", tool_calls=(ToolCall("c", "t"),)))
    assert first.parent is None
    assert second.parent == first.id
    assert [e.id for e in ledger.chain_to_root(session)] == [first.id, second.id]
    assert ledger.chain_to_root(session)[1].payload == second.payload


def test_first_directive_titles_the_session(ledger: Ledger) -> None:
    session = ledger.create_session().id
    ledger.append(session, Directive(text="What is the boiling point of water at altitude?\nmore"))
    assert ledger.session(session).title == "What is the boiling point of water at altitude?"


def test_a_branch_keeps_the_old_entries_and_moves_the_head(ledger: Ledger) -> None:
    session = ledger.create_session().id
    ask = ledger.append(session, Directive(text="first"))
    ledger.append(session, AssistantStep(text="old answer"))
    edited = ledger.append(session, Directive(text="first, edited"), parent=None)
    assert [e.id for e in ledger.chain_to_root(session)] == [edited.id]
    assert [e.id for e in ledger.chain_to_root(session, head=ask.id)] == [ask.id]
    assert len(list(ledger.entries(session))) == 3
    assert ledger.verify().ok


def test_parent_must_exist_in_the_same_session(ledger: Ledger) -> None:
    a, b = ledger.create_session().id, ledger.create_session().id
    entry = ledger.append(a, Directive(text="x"))
    with pytest.raises(UnknownEntry, match="another session"):
        ledger.append(b, Directive(text="y"), parent=entry.id)
    with pytest.raises(UnknownEntry, match="does not exist"):
        ledger.append(b, Directive(text="y"), parent="b3:00")
    with pytest.raises(UnknownSession):
        ledger.append("nope", Directive(text="y"))


def test_update_and_delete_are_refused_by_the_database(ledger: Ledger, tmp_path: Path) -> None:
    session = ledger.create_session().id
    ledger.append(session, Directive(text="keep me"))
    with sqlite3.connect(tmp_path / "ledger.sqlite3") as conn:
        with pytest.raises(sqlite3.IntegrityError, match="append-only: UPDATE refused"):
            conn.execute("UPDATE entries SET payload = '{}'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only: DELETE refused"):
            conn.execute("DELETE FROM entries")
    assert ledger.chain_to_root(session)[0].payload == Directive(text="keep me")


@pytest.mark.allow_log_warnings  # the dropped trigger is restored, with a warning
def test_verify_names_the_tampered_entry_as_first_broken(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    store = Ledger.open(path)
    session = store.create_session().id
    store.append(session, Directive(text="one"))
    target = store.append(session, Activity(type="note", message="a secret"))
    store.append(session, Directive(text="three"))
    assert store.verify().ok
    store.close()
    _tamper(path, target.seq)
    store = Ledger.open(path)
    report = store.verify()
    assert not report.ok
    assert report.first_broken is not None
    assert report.first_broken.id == target.id
    assert "altered" in report.first_broken.reason
    assert report.entries == 3
    store.close()


@pytest.mark.allow_log_warnings  # the dropped trigger is restored, with a warning
def test_verify_catches_a_byte_that_is_not_even_utf8(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    store = Ledger.open(path)
    session = store.create_session().id
    target = store.append(session, Activity(type="note", message="plain"))
    store.close()
    with sqlite3.connect(path) as conn:
        conn.executescript("DROP TRIGGER entries_no_update;")
        conn.execute(
            "UPDATE entries SET payload = CAST(CAST(payload AS BLOB) || x'ff' AS TEXT) WHERE seq=?",
            [target.seq],
        )
    store = Ledger.open(path)
    assert store.verify().first_broken is not None
    store.close()


def test_a_ten_megabyte_result_is_stored_whole_and_verifies(ledger: Ledger) -> None:
    session = ledger.create_session().id
    content = "".join(f"{i:08d} ünïcode line\n" for i in range(460_000))
    assert len(content) > 10_000_000
    body = ledger.append(session, EvidenceBody("c1", "read", content, len(content)))
    stored = ledger.entry(body.id).payload
    assert isinstance(stored, EvidenceBody)
    assert stored.content == content
    assert ledger.verify().ok


def test_find_resolves_a_unique_prefix_within_the_session(ledger: Ledger) -> None:
    session = ledger.create_session().id
    entry = ledger.append(session, Directive(text="x"))
    assert ledger.find(session, entry.id[3:15]).id == entry.id
    assert ledger.find(session, entry.id[:20]).id == entry.id
    with pytest.raises(UnknownEntry, match="at least 6"):
        ledger.find(session, "ab")
    other = ledger.create_session().id
    with pytest.raises(UnknownEntry):
        ledger.find(other, entry.id[3:15])


def test_migrations_are_named_once_and_reopening_runs_none(tmp_path: Path) -> None:
    names = [m.name for m in MIGRATIONS]
    assert len(names) == len(set(names))
    store = Ledger.open(tmp_path / "l.sqlite3")
    assert applied(store._db) == names
    store.close()
    again = Ledger.open(tmp_path / "l.sqlite3")
    assert applied(again._db) == names
    again.close()


def test_sessions_list_newest_activity_first_and_archive_hides(ledger: Ledger) -> None:
    old, new = ledger.create_session("old").id, ledger.create_session("new").id
    ledger.append(new, Directive(text="n"))
    ledger.append(old, Directive(text="o"))
    assert [s.id for s in ledger.sessions()] == [old, new]
    ledger.archive_session(old)
    assert [s.id for s in ledger.sessions()] == [new]
    assert ledger.chain_to_root(old)  # archived, not deleted


def test_only_the_kinds_read_across_sessions_are_indexed_and_their_reads_use_it(
    ledger: Ledger,
) -> None:
    """An index over every kind cost each append one more page (bench/ledger.py); the kinds
    `entries_of_kind` reads across sessions keep theirs, and the query takes it."""
    session = ledger.create_session().id
    ledger.append(session, Directive(text="q"))
    ledger.append(session, Activity(type="t", message="m"))
    ledger.append(session, AssistantStep(text="a"))
    indexes = {
        r[0] for r in ledger._db.execute("SELECT name FROM sqlite_master WHERE type='index'")
    }
    assert "entries_by_kind" not in indexes and "entries_of_read_kinds" in indexes
    rows = ledger._db.execute(
        "SELECT COUNT(*) FROM entries INDEXED BY entries_of_read_kinds"
        " WHERE kind IN ('activity', 'turn_card')"
    ).fetchone()
    assert rows[0] == 1  # the activity only: a directive or a step costs the index nothing
    statements: list[str] = []
    ledger._db.conn.set_trace_callback(statements.append)
    assert [e.kind for e in ledger.entries_of_kind("activity")] == ["activity"]
    ledger._db.conn.set_trace_callback(None)
    assert [e.kind for e in ledger.entries_of_kind("directive")] == ["directive"]
    plan = ledger._db.execute("EXPLAIN QUERY PLAN " + statements[0]).fetchall()
    assert "USING INDEX entries_of_read_kinds" in str(plan[0])


def test_a_streams_journal_rows_go_when_its_step_is_appended_and_not_before(
    ledger: Ledger,
) -> None:
    """The journal kept every answer beside its step (stored twice); now the step's append
    folds it, and the database still refuses to delete rows no step holds."""
    session = ledger.create_session().id
    ledger.append(session, Directive(text="q"))
    base = ledger.last_seq()
    ledger.checkpoint(session, "s1", base, "streamed so far", "")
    with pytest.raises(sqlite3.IntegrityError, match="until a step holds it"):
        ledger._db.execute("DELETE FROM stream_journal")
    assert ledger.unfolded_stream(session) == ("streamed so far", "")
    ledger.append(session, Activity(type="t", message="not a step: folds nothing"))
    assert ledger._db.execute("SELECT COUNT(*) FROM stream_journal").fetchone()[0] == 1
    ledger.append(session, AssistantStep(text="streamed so far, and the rest"))
    assert ledger._db.execute("SELECT COUNT(*) FROM stream_journal").fetchone()[0] == 0
    assert ledger.unfolded_stream(session) is None and ledger.verify().ok


def test_a_ledger_from_before_the_fold_gets_the_new_trigger_without_a_restore_note(
    tmp_path: Path,
) -> None:
    """Migration 0007 swaps the journal's DELETE trigger and drops the rows already folded;
    the open's trigger check then finds nothing altered."""
    path = tmp_path / "l.sqlite3"
    store = Ledger.open(path)
    session = store.create_session().id
    store.checkpoint(session, "s1", 0, "kept twice", "")
    store._db.execute("DROP TRIGGER stream_journal_no_delete")
    store._db.execute(
        "CREATE TRIGGER stream_journal_no_delete BEFORE DELETE ON stream_journal"
        " BEGIN SELECT RAISE(ABORT, 'the stream journal is insert-only'); END"
    )
    store._journalled.clear()  # as an older build: it never folded
    store.append(session, AssistantStep(text="kept twice"))
    for name in ("_vak_migrations_no_delete", "_vak_migrations_no_update"):
        store._db.execute(f"DROP TRIGGER {name}")  # as an older build: unguarded
    _undo_0009(store)
    store._db.execute(
        "DELETE FROM _vak_migrations WHERE name IN"
        " ('0007_fold_the_stream_journal', '0008_guard_every_table')"
    )
    store.close()
    again = Ledger.open(path)
    assert again.restored_triggers == []
    assert again._db.execute("SELECT COUNT(*) FROM stream_journal").fetchone()[0] == 0
    assert again.verify().ok
    again.close()


def _undo_0009(store: Ledger) -> None:
    """Make the ledger one an older build wrote: no deletion marker, no `derived_from`."""
    db = store._db
    db.execute("DROP TRIGGER IF EXISTS _vak_migrations_no_delete")
    db.execute("DELETE FROM _vak_migrations WHERE name = '0009_deletion_and_origin'")
    for name in ("entries_no_delete", "sessions_no_delete", "sessions_fixed_identity"):
        db.execute(f"DROP TRIGGER {name}")
    db.execute(
        "CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries"
        " BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only: DELETE refused'); END"
    )
    db.execute("DROP INDEX sessions_by_origin")
    db.execute("ALTER TABLE sessions DROP COLUMN derived_from")
    db.execute("DROP TABLE _vak_deleting")


def test_a_ledger_from_before_deletion_upgrades_and_deletes(tmp_path: Path) -> None:
    """Migration 0009 adds the marker and `derived_from` and rewrites the DELETE triggers;
    the open's check finds them as written, and the old sessions can be deleted."""
    path = tmp_path / "l.sqlite3"
    store = Ledger.open(path)
    doomed, kept = store.create_session().id, store.create_session().id
    for session in (doomed, kept):
        store.append(session, Directive(text=f"hello from {session}"))
        store.append(session, AssistantStep(text="hi"))
    store.checkpoint(doomed, "s1", 0, "streamed", "")
    _undo_0009(store)
    store.close()
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert "_vak_deleting" not in names
    again = Ledger.open(path)
    assert again.restored_triggers == []
    assert again.session(kept).derived_from is None
    done = again.delete_session(doomed)
    assert done.entries == 2
    report = again.verify()
    assert report.ok and report.deletions == 1
    again.close()


def test_an_append_after_this_process_own_head_is_one_statement(ledger: Ledger) -> None:
    """The head this process last wrote is kept in memory; the append checks it is still the
    session's newest inside its one INSERT instead of reading it first (bench/ledger.py)."""
    session = ledger.create_session().id
    ledger.append(session, Directive(text="titles the session"))
    statements: list[str] = []
    ledger._db.conn.set_trace_callback(statements.append)
    step = ledger.append(session, AssistantStep(text="after the known head"))
    ask = ledger.append(session, Directive(text="a titled session's next directive"))
    ledger._db.conn.set_trace_callback(None)
    # (the trace repeats a statement when its trigger program starts)
    assert len(set(statements)) == 2
    assert all(s.startswith("INSERT INTO entries") for s in statements)  # no BEGIN, no SELECT
    assert ask.parent == step.id and ledger.session(session).title == "titles the session"
    assert ledger.verify().ok


def test_appends_from_two_connections_to_one_session_stay_one_chain(tmp_path: Path) -> None:
    """Another writer's append makes this process's known head stale: the one-statement append
    refuses its row, and the append reads the real head (and count) instead of forking."""
    path = tmp_path / "ledger.sqlite3"
    first, second = Ledger.open(path), Ledger.open(path)
    session = first.create_session().id
    written = [first.append(session, Directive(text="q"))]
    for i in range(6):
        writer = first if i % 3 else second
        written.append(writer.append(session, AssistantStep(text=f"step {i}")))
    assert [e.parent for e in written[1:]] == [e.id for e in written[:-1]]
    assert [e.id for e in first.chain_to_root(session)] == [e.id for e in written]
    report = first.verify()
    assert report.ok, report
    first.close()
    second.close()
