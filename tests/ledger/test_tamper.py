"""Every way SQLite offers to rewrite or remove a ledger row, tried from outside (a fresh
`sqlite3` connection, as the shell would): refused while the triggers stand, named by
`verify` once they are dropped (issue 13 items 1 and 2). `TAMPERS` is also what the
crash-and-tamper harness counts (tests/cli/test_crash_harness.py)."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from vak_desktop.context.payloads import Activity, AssistantStep, Directive
from vak_desktop.ledger import Ledger
from vak_desktop.ledger.anchor import anchor_path
from vak_desktop.ledger.canonical import entry_id, envelope_bytes


def _ledger(path: Path) -> tuple[str, str]:
    """Two sessions of two turns each; returns (first session, second session)."""
    store = Ledger.open(path)
    ids = []
    for name in ("alpha", "beta"):
        session = store.create_session().id
        for turn in range(2):
            store.append(session, Directive(text=f"{name} question {turn}"))
            store.append(session, AssistantStep(text=f"{name} answer {turn}", model="m"))
            store.append(session, Activity(type="turn_closed", detail={"outcome": "completed"}))
        ids.append(session)
    assert store.verify().ok
    store.close()
    return ids[0], ids[1]


def _outside(path: Path, *sql: str, recursive: bool = False) -> None:
    with sqlite3.connect(path, isolation_level=None) as conn:
        if recursive:
            conn.execute("PRAGMA recursive_triggers = ON")
        for statement in sql:
            conn.execute(statement)
    conn.close()


def _last_seq(path: Path, session: str) -> int:
    with sqlite3.connect(path) as conn:
        seq = conn.execute("SELECT MAX(seq) FROM entries WHERE session = ?", [session]).fetchone()
    conn.close()
    return int(seq[0])


REFUSED = [
    # item 1 as reported: REPLACE over the last entry with a re-hashed id
    "REPLACE INTO entries (seq, id, parent, session, kind, payload, created_at)"
    " SELECT seq, 'b3:' || hex(randomblob(32)), parent, session, kind, payload, created_at"
    " FROM entries WHERE seq = (SELECT MAX(seq) FROM entries)",
    "INSERT OR REPLACE INTO entries (seq, id, parent, session, kind, payload, created_at)"
    " SELECT seq + 1000, id, parent, session, kind, '{}', created_at FROM entries WHERE seq = 2",
    "INSERT INTO entries (seq, id, parent, session, kind, payload, created_at)"
    " SELECT seq, id, parent, session, kind, payload, created_at FROM entries WHERE seq = 3"
    " ON CONFLICT(seq) DO UPDATE SET payload = '{}'",
    "INSERT INTO entries (seq, id, parent, session, kind, payload, created_at)"
    " SELECT NULL, id, parent, session, kind, payload, created_at FROM entries WHERE seq = 3"
    " ON CONFLICT(id) DO UPDATE SET payload = '{}'",
    "UPDATE entries SET payload = '{}' WHERE seq = 1",
    "UPDATE OR REPLACE entries SET seq = 1 WHERE seq = 2",
    "DELETE FROM entries WHERE seq = 6",
    "DELETE FROM sessions",
    "REPLACE INTO sessions (id, created_at, title, archived)"
    " SELECT id, created_at, 'renamed', 0 FROM sessions LIMIT 1",
    "INSERT INTO sessions (id, created_at, title, archived)"
    " SELECT id, created_at, '', 0 FROM sessions LIMIT 1 ON CONFLICT(id) DO NOTHING",
    "UPDATE sessions SET id = 'elsewhere'",
    "UPDATE sessions SET created_at = '2020-01-01T00:00:00.000000Z'",
    "DELETE FROM ledger_events",
    # issue 24 F1: REPLACE got past the UPDATE/DELETE triggers of these two
    "REPLACE INTO ledger_events (seq, at, kind, message)"
    " SELECT seq, at, kind, 'nothing happened' FROM ledger_events LIMIT 1",
    "INSERT INTO ledger_events (seq, at, kind, message) SELECT seq, at, kind, message"
    " FROM ledger_events LIMIT 1 ON CONFLICT DO UPDATE SET message = 'nothing'",
    # F7: the record of migrations had no trigger at all
    "DELETE FROM _vak_migrations",
    "UPDATE _vak_migrations SET name = 'renamed'",
    "REPLACE INTO _vak_migrations (name, applied_at) SELECT name, 'later' FROM _vak_migrations",
]


@pytest.mark.parametrize("recursive", [False, True], ids=["plain", "recursive_triggers"])
@pytest.mark.parametrize("sql", REFUSED)
def test_every_rewrite_sqlite_offers_is_refused(tmp_path: Path, sql: str, recursive: bool) -> None:
    path = tmp_path / "ledger.sqlite3"
    _ledger(path)
    with pytest.raises(sqlite3.IntegrityError, match=r"refused|insert-only|never deleted"):
        _outside(path, sql, recursive=recursive)
    store = Ledger.open(path)
    report = store.verify()
    assert report.ok and report.entries == 12 and report.sessions == 2
    store.close()


def test_a_replace_over_an_unfolded_journal_row_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    first, _second = _ledger(path)
    store = Ledger.open(path)
    store.checkpoint(first, "s1", store.last_seq(), "what streamed", "")
    store.close()
    with pytest.raises(sqlite3.IntegrityError, match="REPLACE refused"):
        _outside(
            path,
            "REPLACE INTO stream_journal (seq, session, stream, base_seq, text, thinking, at)"
            " SELECT seq, session, stream, base_seq, 'forged', thinking, at FROM stream_journal",
        )
    store = Ledger.open(path)
    assert store.unfolded_stream(first) == ("what streamed", "")
    store.close()


@pytest.mark.allow_log_warnings  # the anchor is found missing, with a warning
def test_the_anchor_missing_note_cannot_be_replaced_away(tmp_path: Path) -> None:
    """F1 as reported: with every trigger in place, `REPLACE INTO ledger_events` overwrote the
    note, and a ledger whose last entry was deleted then verified ok."""
    path = tmp_path / "ledger.sqlite3"
    _first, second = _ledger(path)
    _outside(path, *DROP, f"DELETE FROM entries WHERE seq = {_last_seq(path, second)}")
    anchor_path(path).unlink()
    Ledger.open(path).close()
    with pytest.raises(sqlite3.IntegrityError, match="REPLACE refused"):
        _outside(
            path,
            "REPLACE INTO ledger_events (seq, at, kind, message) SELECT seq, at,"
            " 'anchor_started', 'fine' FROM ledger_events WHERE kind = 'anchor_missing'",
        )
    store = Ledger.open(path)
    report = store.verify()
    assert not report.ok and report.anchor_lost and not report.events_changed
    store.close()


@pytest.mark.allow_log_warnings
def test_verify_recomputes_the_events_instead_of_trusting_them(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    _ledger(path)
    _outside(
        path,
        *_triggers(path),
        "UPDATE ledger_events SET message = 'something else'",
    )
    store = Ledger.open(path)
    report = store.verify()
    assert not report.ok and "ledger events were rewritten" in report.events_changed
    store.close()


@pytest.mark.parametrize("sql", ["REPLACE INTO entries SELECT * FROM entries LIMIT 0"])
def test_a_statement_that_changes_nothing_is_still_allowed(tmp_path: Path, sql: str) -> None:
    path = tmp_path / "ledger.sqlite3"
    _ledger(path)
    _outside(path, sql)


def _unused(path: Path, sql: str, recursive: bool) -> None:
    with pytest.raises(sqlite3.IntegrityError, match=r"refused|insert-only|never deleted"):
        _outside(path, sql, recursive=recursive)
    store = Ledger.open(path)
    report = store.verify()
    assert report.ok and report.entries == 12 and report.sessions == 2
    store.close()


def test_a_session_can_still_be_renamed_and_archived(ledger: Ledger) -> None:
    session = ledger.create_session("old").id
    ledger.rename_session(session, "new")
    ledger.archive_session(session)
    assert ledger.session(session).title == "new" and ledger.session(session).archived


def test_a_capacity_profile_cannot_be_replaced(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    Ledger.open(path).close()
    _outside(
        path,
        "INSERT INTO capacity_profiles (seq, provider, model, quantisation, probed_at, profile,"
        " activity, recorded_at) VALUES (1, 'p', 'm', 'q', 't', '{}', '{}', 't')",
    )
    with pytest.raises(sqlite3.IntegrityError, match="REPLACE refused"):
        _outside(
            path,
            "REPLACE INTO capacity_profiles (seq, provider, model, quantisation, probed_at,"
            " profile, activity, recorded_at) VALUES (1, 'p', 'm', 'q', 't', '{\"x\":1}', '{}', 't')",
        )


# -- with the triggers dropped: what verify names --------------------------------------------

DROP = [
    "DROP TRIGGER entries_no_update",
    "DROP TRIGGER entries_no_delete",
    "DROP TRIGGER entries_no_replace",
    "DROP TRIGGER sessions_no_delete",
]


def _rehash_tail(path: Path, session: str) -> None:
    """Rewrite the session's last entry and recompute its id, as a careful forger would."""
    with sqlite3.connect(path) as conn:
        seq, parent, kind, created_at = conn.execute(
            "SELECT seq, parent, kind, created_at FROM entries WHERE session = ?"
            " ORDER BY seq DESC LIMIT 1",
            [session],
        ).fetchone()
        payload = '{"detail":{"outcome":"failed"},"message":"","type":"turn_closed"}'
        new_id = entry_id(
            envelope_bytes(
                created_at=created_at, kind=kind, parent=parent, payload=payload, session=session
            )
        )
        conn.execute("UPDATE entries SET id = ?, payload = ? WHERE seq = ?", [new_id, payload, seq])
    conn.close()


def _delete_last_turn(path: Path, session: str) -> None:
    with sqlite3.connect(path) as conn:
        (start,) = conn.execute(
            "SELECT MAX(seq) FROM entries WHERE session = ? AND kind = 'directive'", [session]
        ).fetchone()
        conn.execute("DELETE FROM entries WHERE session = ? AND seq >= ?", [session, start])
    conn.close()


def _older_copy(path: Path, session: str) -> None:
    """Put back a copy of the database taken before the last turn of `session`."""
    backup = path.with_name("backup.sqlite3")
    _delete_last_turn(path, session)  # stands in for "the copy an attacker kept"
    shutil.copy(path, backup)
    shutil.copy(backup, path)


def _triggers(path: Path) -> list[str]:
    """Every trigger of the database, as `DROP TRIGGER` statements."""
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")]
    conn.close()
    return [f"DROP TRIGGER {name}" for name in names]


def _anchor_lost_then_hidden(path: Path, session: str, how: str) -> None:
    """F1: the session's last entry deleted and the anchor removed; the next open records the
    anchor missing; then that note is rewritten away (`how`), triggers dropped again."""
    _outside(path, *_triggers(path), f"DELETE FROM entries WHERE seq = {_last_seq(path, session)}")
    anchor_path(path).unlink()
    Ledger.open(path).close()  # records "anchor_missing" and starts a new anchor
    _outside(path, *_triggers(path), how)


TAMPERS: dict[str, Callable[[Path, str, str], None]] = {
    "delete the session's last entry": lambda p, s, _o: _outside(
        p, *DROP, f"DELETE FROM entries WHERE seq = {_last_seq(p, s)}"
    ),
    "delete the session's whole last turn": lambda p, s, _o: (
        _outside(p, *DROP),
        _delete_last_turn(p, s),
    )[0],
    "delete a whole session": lambda p, s, _o: _outside(
        p,
        *DROP,
        f"DELETE FROM entries WHERE session = '{s}'",
        f"DELETE FROM sessions WHERE id = '{s}'",
    ),
    "delete only the sessions row": lambda p, s, _o: _outside(
        p, *DROP, f"DELETE FROM sessions WHERE id = '{s}'"
    ),
    "rewrite and re-hash the tail": lambda p, s, _o: (_outside(p, *DROP), _rehash_tail(p, s))[0],
    "REPLACE with the triggers dropped": lambda p, s, _o: _outside(
        p,
        *DROP,
        "REPLACE INTO entries (seq, id, parent, session, kind, payload, created_at)"
        " SELECT seq, 'b3:' || lower(hex(randomblob(32))), parent, session, kind, payload,"
        f" created_at FROM entries WHERE seq = {_last_seq(p, s)}",
    ),
    "delete every entry of every session": lambda p, _s, _o: _outside(
        p, *DROP, "DELETE FROM entries", "DELETE FROM sessions"
    ),
    "delete the other session's tail too": lambda p, s, o: _outside(
        p,
        *DROP,
        f"DELETE FROM entries WHERE seq = {_last_seq(p, s)}",
        f"DELETE FROM entries WHERE seq = {_last_seq(p, o)}",
    ),
    "put back an older copy of the database": lambda p, s, _o: (
        _outside(p, *DROP),
        _older_copy(p, s),
    )[0],
    # issue 24 F1: the ledger's own events, which verify now recomputes
    "REPLACE the anchor_missing note away": lambda p, s, _o: _anchor_lost_then_hidden(
        p,
        s,
        "REPLACE INTO ledger_events (seq, at, kind, message) SELECT seq, at, 'anchor_started',"
        " 'head anchor started' FROM ledger_events WHERE kind = 'anchor_missing'",
    ),
    "delete the anchor_missing note": lambda p, s, _o: _anchor_lost_then_hidden(
        p, s, "DELETE FROM ledger_events WHERE kind = 'anchor_missing'"
    ),
    "delete every ledger event": lambda p, _s, _o: _outside(
        p, *_triggers(p), "DELETE FROM ledger_events"
    ),
    "delete the anchor and the event that it started": lambda p, s, _o: (
        _outside(
            p,
            *_triggers(p),
            f"DELETE FROM entries WHERE seq = {_last_seq(p, s)}",
            "DELETE FROM ledger_events",
        ),
        anchor_path(p).unlink(),
    )[0],
    "REPLACE the last entry with every trigger dropped": lambda p, s, _o: _outside(
        p,
        *_triggers(p),
        "REPLACE INTO entries (seq, id, parent, session, kind, payload, created_at)"
        " SELECT seq, id, parent, session, kind, '{}', created_at FROM entries"
        f" WHERE seq = {_last_seq(p, s)}",
    ),
}


@pytest.mark.allow_log_warnings  # the dropped triggers are restored, with a warning
@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_verify_names_every_removal_made_with_the_triggers_dropped(
    tmp_path: Path, tamper: str
) -> None:
    path = tmp_path / "ledger.sqlite3"
    first, second = _ledger(path)
    TAMPERS[tamper](path, second, first)
    store = Ledger.open(path)
    report = store.verify()
    assert not report.ok, tamper
    assert report.removed or report.first_broken or report.anchor_lost or report.events_changed
    store.close()


@pytest.mark.allow_log_warnings
def test_dropped_triggers_are_restored_at_open_and_said_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ledger.sqlite3"
    _ledger(path)
    _outside(path, *DROP)
    store = Ledger.open(path)
    assert store.restored_triggers == [name.split()[-1] for name in DROP]
    assert any("lost its append-only triggers" in r.getMessage() for r in caplog.records)
    report = store.verify()
    assert report.ok  # nothing was removed while they were gone
    assert any("restored missing or altered triggers" in note for note in report.notes)
    store.close()
    with pytest.raises(sqlite3.IntegrityError, match="DELETE refused"):
        _outside(path, "DELETE FROM entries")


@pytest.mark.allow_log_warnings
def test_a_trigger_rewritten_to_do_nothing_is_restored(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    _ledger(path)
    _outside(
        path,
        "DROP TRIGGER entries_no_delete",
        "CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries BEGIN SELECT 1; END",
    )
    store = Ledger.open(path)
    assert store.restored_triggers == ["entries_no_delete"]
    store.close()


@pytest.mark.allow_log_warnings
def test_a_removed_anchor_file_is_recorded_and_fails_verify(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    _ledger(path)
    anchor_path(path).unlink()
    store = Ledger.open(path)
    report = store.verify()
    assert not report.ok and report.anchor_lost
    assert any("was missing at open" in note for note in report.notes)
    store.close()


def test_an_untouched_ledger_verifies_across_reopen_and_more_turns(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    first, _second = _ledger(path)
    store = Ledger.open(path)
    store.append(first, Directive(text="again"))
    assert store.verify().ok
    store.close()
    store = Ledger.open(path)
    report = store.verify()
    assert report.ok and report.entries == 13 and not report.removed
    store.close()
