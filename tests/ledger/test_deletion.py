"""Delete a session for good (issue 25 item 7): its text leaves the database files themselves,
the other sessions still verify, verify counts the deletion, and a kill or a fault mid-way
leaves the whole session or none of it. A DELETE from outside is still refused, and rows
removed with a forged marker are still caught."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Directive,
    EvidenceBody,
    ToolCall,
    ToolResult,
)
from vak_desktop.ledger import HasDerivedSessions, Ledger, UnknownSession

PLANTED = {
    "user": "zebra-quokka-USERTEXT-7731",
    "answer": "zebra-quokka-ANSWER-4410",
    "tool": "zebra-quokka-TOOLRESULT-9052",
    "title": "zebra-quokka-TITLE-1188",
    "thinking": "zebra-quokka-THINKING-5521",
    "journal": "zebra-quokka-JOURNAL-3307",
}


def _fill(store: Ledger, session: str, word: str, turns: int = 3) -> None:
    for turn in range(turns):
        store.append(session, Directive(text=f"{word} question {turn} " + "x" * 300))
        store.append(session, AssistantStep(text=f"{word} answer {turn} " + "y" * 300, model="m"))
        store.append(session, Activity(type="turn_closed", detail={"outcome": "completed"}))


def _planted_session(store: Ledger) -> str:
    """A session holding every planted string: user text, thinking, answer, a tool's result
    (evidence and what the request carried), its title, and an unfolded stream journal row."""
    session = store.create_session().id
    _fill(store, session, "before")
    store.append(session, Directive(text=f"please look {PLANTED['user']}"))
    call = ToolCall(id="c1", name="read_file", arguments={"path": "notes.txt"})
    store.append(
        session,
        AssistantStep(thinking=PLANTED["thinking"], tool_calls=(call,), model="m"),
    )
    body = store.append(
        session, EvidenceBody("c1", "read_file", f"file says {PLANTED['tool']}", 40)
    )
    store.append(
        session, ToolResult("c1", "read_file", f"file says {PLANTED['tool']}", body.id, 40)
    )
    store.append(session, AssistantStep(text=f"it says {PLANTED['answer']}", model="m"))
    store.rename_session(session, f"chat {PLANTED['title']}")
    head = store.head(session)
    assert head is not None
    store.checkpoint(session, "s1", head.seq, f"streaming {PLANTED['journal']}", "")
    return session


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _found(folder: Path) -> dict[str, list[str]]:
    """Which planted strings occur, raw bytes, in which file of the folder."""
    found: dict[str, list[str]] = {}
    for path in _files(folder):
        data = path.read_bytes()
        for what, text in PLANTED.items():
            if text.encode() in data:
                found.setdefault(what, []).append(path.name)
    return found


@pytest.fixture
def ledger_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


def test_deleted_text_leaves_every_file_and_the_others_verify(ledger_dir: Path) -> None:
    path = ledger_dir / "ledger.sqlite3"
    store = Ledger.open(path)
    keep = store.create_session().id
    _fill(store, keep, "kept")
    doomed = _planted_session(store)
    _fill(store, keep, "kept later")
    before = _found(ledger_dir)
    assert set(before) == set(PLANTED), before  # the grep can see each one while it exists

    done = store.delete_session(doomed)

    assert done.sessions == (doomed,)
    assert done.entries == 14
    assert done.unscrubbed == ""
    assert _found(ledger_dir) == {}
    assert (
        not (ledger_dir / "ledger.sqlite3-wal").exists()
        or not (ledger_dir / "ledger.sqlite3-wal").stat().st_size
    )
    with pytest.raises(UnknownSession):
        store.session(doomed)
    assert [s.id for s in store.sessions(include_archived=True)] == [keep]
    report = store.verify()
    assert report.ok, report
    assert report.deletions == 1
    assert any("deleted one session, 14 entries" in note for note in report.notes)
    assert not any(doomed in note for note in report.notes)  # what, never which
    store.append(keep, Directive(text="still writable after"))
    store.close()

    reopened = Ledger.open(path)  # a fresh process sees the same, and its anchor agrees
    report = reopened.verify()
    assert report.ok and report.deletions == 1 and report.sessions == 1
    reopened.close()
    assert _found(ledger_dir) == {}


def test_a_session_continued_elsewhere_is_deleted_only_with_its_continuations(
    ledger_dir: Path,
) -> None:
    store = Ledger.open(ledger_dir / "ledger.sqlite3")
    origin = store.create_session().id
    _fill(store, origin, "origin")
    child = store.create_session(derived_from=origin).id
    _fill(store, child, "child")
    grandchild = store.create_session(derived_from=child).id
    _fill(store, grandchild, "grandchild")

    with pytest.raises(HasDerivedSessions, match="2 chats were continued from it"):
        store.delete_session(origin)
    assert len(store.sessions()) == 3

    done = store.delete_session(origin, with_derived=True)
    assert set(done.sessions) == {origin, child, grandchild}
    assert store.sessions(include_archived=True) == []
    report = store.verify()
    assert report.ok and report.deletions == 1
    store.close()


@pytest.mark.parametrize(
    "step",
    ["anchor rewritten", "marked", "deleted from entries", "deleted from sessions", "recorded"],
)
def test_a_fault_mid_delete_leaves_the_whole_session(ledger_dir: Path, step: str) -> None:
    path = ledger_dir / "ledger.sqlite3"
    store = Ledger.open(path)
    doomed = _planted_session(store)
    other = store.create_session().id
    _fill(store, other, "other")
    count = len(list(store.entries(doomed)))

    def fault(name: str) -> None:
        if name == step:
            raise RuntimeError(f"injected at {name}")

    with pytest.raises(RuntimeError, match="injected"):
        store.delete_session(doomed, between=fault)

    assert len(list(store.entries(doomed))) == count
    assert store.session(doomed).title.endswith(PLANTED["title"])
    report = store.verify()
    assert report.ok and report.deletions == 0, report
    store.append(doomed, Directive(text="it goes on"))
    store.close()
    tampered = _delete_with_forged_marker(path, doomed)
    assert tampered  # the anchor was put back: a removal by hand is still seen
    reopened = Ledger.open(path)
    assert not reopened.verify().ok
    reopened.close()


_KILLED = textwrap.dedent(
    """
    import sys, time
    from vak_desktop.ledger import Ledger
    store = Ledger.open(sys.argv[1])
    def kill(name):
        if name == sys.argv[3]:  # say where it is, then wait to be killed there
            print("at", name, flush=True)
            time.sleep(60)
    store.delete_session(sys.argv[2], between=kill)
    """
)


@pytest.mark.parametrize(
    ("step", "deleted"),
    [
        ("anchor rewritten", False),
        ("deleted from entries", False),
        ("recorded", False),
        ("committed", True),
    ],
)
def test_a_process_killed_mid_delete_leaves_all_or_nothing(
    ledger_dir: Path, step: str, deleted: bool
) -> None:
    path = ledger_dir / "ledger.sqlite3"
    store = Ledger.open(path)
    doomed = _planted_session(store)
    other = store.create_session().id
    _fill(store, other, "other")
    count = len(list(store.entries(doomed)))
    store.close()

    with subprocess.Popen(
        [sys.executable, "-c", _KILLED, str(path), doomed, step], stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None and child.stdout.readline().strip() == f"at {step}"
        child.kill()  # SIGKILL, or TerminateProcess on Windows: no clean-up of any kind
        child.wait(timeout=30)

    reopened = Ledger.open(path)
    left = len(list(reopened.entries(doomed)))
    assert left == (0 if deleted else count)
    assert (doomed in {s.id for s in reopened.sessions()}) is not deleted
    report = reopened.verify()
    assert report.ok, report
    assert report.deletions == int(deleted)
    assert len(list(reopened.entries(other))) == 9
    reopened.close()
    # killed after the commit, before the file was compacted: the next open compacted it
    assert _found(ledger_dir) == ({} if deleted else _found(ledger_dir))
    if deleted:
        assert reopened_twice_is_quiet(path)


def reopened_twice_is_quiet(path: Path) -> bool:
    """A second open finds the deletion compacted and does nothing more."""
    store = Ledger.open(path)
    (events,) = store._db.execute("SELECT COUNT(*) FROM ledger_events").fetchone()
    store.close()
    store = Ledger.open(path)
    (again,) = store._db.execute("SELECT COUNT(*) FROM ledger_events").fetchone()
    ok = store.verify().ok
    store.close()
    return ok and events == again


def _delete_with_forged_marker(path: Path, session: str) -> bool:
    """What someone with the file and a `sqlite3` shell can do: forge the marker, delete."""
    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("INSERT INTO _vak_deleting (session) VALUES (?)", [session])
        for table, column in (
            ("entries", "session"),
            ("stream_journal", "session"),
            ("sessions", "id"),
        ):
            conn.execute(f"DELETE FROM {table} WHERE {column} = ?", [session])
        conn.execute("DELETE FROM _vak_deleting")
        (left,) = conn.execute(
            "SELECT COUNT(*) FROM entries WHERE session = ?", [session]
        ).fetchone()
    conn.close()
    return left == 0


def test_deleting_by_hand_is_refused_and_a_forged_marker_is_caught(ledger_dir: Path) -> None:
    path = ledger_dir / "ledger.sqlite3"
    store = Ledger.open(path)
    victim = store.create_session().id
    _fill(store, victim, "victim")
    store.close()
    with sqlite3.connect(path, isolation_level=None) as conn:
        for sql in ("DELETE FROM entries WHERE session = ?", "DELETE FROM sessions WHERE id = ?"):
            with pytest.raises(sqlite3.IntegrityError, match="refused"):
                conn.execute(sql, [victim])
        conn.execute("INSERT INTO _vak_deleting (session) VALUES ('someone-else')")
        with pytest.raises(sqlite3.IntegrityError, match="refused"):
            conn.execute("DELETE FROM entries WHERE session = ?", [victim])
    conn.close()
    reopened = Ledger.open(path)
    report = reopened.verify()
    assert not report.ok and report.markers_left == 1  # a marker left behind is named
    reopened.close()

    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("DELETE FROM _vak_deleting")
    conn.close()
    assert _delete_with_forged_marker(path, victim)
    reopened = Ledger.open(path)
    report = reopened.verify()
    assert not report.ok
    assert report.deletions == 0
    assert any(victim in gone.session and "was removed" in gone.reason for gone in report.removed)
    reopened.close()


def test_an_anchor_replaced_by_another_connection_is_written_to_anew(ledger_dir: Path) -> None:
    """The window deletes on a second connection (off its thread): the first one's appends
    must land in the new anchor file, not the unlinked old one."""
    path = ledger_dir / "ledger.sqlite3"
    window = Ledger.open(path)
    keep = window.create_session().id
    _fill(window, keep, "kept")
    doomed = window.create_session().id
    _fill(window, doomed, "doomed")
    worker = Ledger.open(path)
    worker.delete_session(doomed)
    worker.close()
    window.append(keep, Directive(text="after the delete"))
    window.append(keep, AssistantStep(text="answered", model="m"))
    window.close()
    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("INSERT INTO _vak_deleting (session) VALUES (?)", [keep])
        last = conn.execute("SELECT MAX(seq) FROM entries").fetchone()[0]
        conn.execute("DELETE FROM entries WHERE seq = ?", [last])  # the unanchored tail?
        conn.execute("DELETE FROM _vak_deleting")
    conn.close()
    reopened = Ledger.open(path)
    assert not reopened.verify().ok  # the removed last entry was anchored in the new file
    reopened.close()
