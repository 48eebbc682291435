"""Imports are one transaction, and a failing disk or a locked file is one line naming cause
and path (issue 13 items 10, 11 and 13)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import vak
from vak_desktop.context.payloads import AssistantStep, Directive
from vak_desktop.ledger import Ledger, StorageError


def _sessions(capsys: pytest.CaptureFixture[str]) -> list[object]:
    code, out, _ = vak(capsys, "sessions", "--json")
    assert code == 0
    listed: list[object] = json.loads(out)
    return listed


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            {
                "messages": [
                    {"role": "assistant", "content": "hi"},
                    {"role": "user", "content": "x"},
                ]
            },
            "before any user message",
        ),
        ('{"messages": [{"role": "user", "content": "\\ud800"}]}', "lone surrogate"),
        ('{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
        ('{"messages": [{"role": "user", "content": "x"}], "n": ' + "9" * 5000 + "}", "digits"),
    ],
    ids=["rejected-mid-write", "lone-surrogate", "deeply-nested", "huge-number"],
)
def test_a_rejected_import_says_why_in_one_line_and_leaves_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, body: object, said: str
) -> None:
    path = tmp_path / "chat.json"
    path.write_text(body if isinstance(body, str) else json.dumps(body))
    code, out, err = vak(capsys, "import", str(path))
    assert code == 2 and out == ""
    assert said in err and len(err.strip().splitlines()) == 1, err
    assert _sessions(capsys) == []  # no empty "Untitled" session left behind


def test_a_full_disk_is_one_error_naming_the_cause_and_nothing_is_half_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger.open(path)
    session = ledger.create_session().id
    ledger.append(session, Directive(text="fits"))
    (pages,) = ledger._db.conn.execute("PRAGMA page_count").fetchone()
    ledger._db.conn.execute(f"PRAGMA max_page_count = {pages}")  # the disk is now full
    with pytest.raises(StorageError) as caught:
        ledger.append(session, Directive(text="does not fit " * 2000))
    assert str(caught.value) == f"cannot write the ledger {path}: the disk is full"
    ledger._db.conn.execute("PRAGMA max_page_count = 1073741823")
    assert [e.payload for e in ledger.entries(session)] == [Directive(text="fits")]
    assert ledger.verify().ok
    ledger.close()


@pytest.mark.slow
def test_a_locked_database_is_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    Ledger.open(data / "ledger.sqlite3").close()
    holder = sqlite3.connect(data / "ledger.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        code, _, err = vak(capsys, "import", str(_small_chat(tmp_path)), "--data-dir", str(data))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 1
    assert err.strip() == (
        f"vak: cannot write the ledger {data / 'ledger.sqlite3'}: another program holds it "
        "locked (close it and try again)"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_data_directory_that_cannot_be_written_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data directory should be")
    code, _, err = vak(capsys, "import", str(_small_chat(tmp_path)), "--data-dir", str(blocker))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert str(blocker) in err


def _small_chat(tmp_path: Path) -> Path:
    path = tmp_path / "small.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hello"}]}))
    return path


def test_a_server_that_answers_404_is_could_not_start(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 13 item 13: not the server we expected is exit 2 (could not start), not 1."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class NotFound(BaseHTTPRequestHandler):
        def _404(self) -> None:
            self.send_response(404)
            self.send_header("Content-Length", "9")
            self.end_headers()
            self.wfile.write(b"not found")

        do_GET = do_POST = _404

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        code, out, err = vak(capsys, "chat", "llama3.2", "hi", "--host", url)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err


@pytest.mark.allow_log_warnings  # the dropped trigger is restored, with a warning
@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("CAST(CAST(payload AS BLOB) || x'ff' AS TEXT)", "its text is not UTF-8 at byte"),
        ("'not json'", "its assistant_step payload does not read back"),
        ("'{\"text\": 5}'", "its assistant_step payload does not read back"),
    ],
    ids=["not-utf8", "not-json", "wrong-shape"],
)
def test_show_of_an_entry_changed_outside_vak_is_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, change: str, said: str
) -> None:
    """Issue 13 item 13: `vak show` of a tampered payload was a traceback (SQLite's decode
    error names neither the entry nor the cause)."""
    data = tmp_path / "data"
    ledger = Ledger.open(data / "ledger.sqlite3")
    session = ledger.create_session().id
    ledger.append(session, Directive(text="hello"))
    step = ledger.append(session, AssistantStep(text="plain answer"))
    ledger.close()
    with sqlite3.connect(data / "ledger.sqlite3") as conn:
        conn.execute("DROP TRIGGER entries_no_update")
        conn.execute(f"UPDATE entries SET payload = {change} WHERE seq = ?", [step.seq])
    conn.close()
    for command in ("show", "export"):
        code, out, err = vak(capsys, command, session, "--data-dir", str(data))
        assert code == 1 and out == "", (command, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and f"entry {step.seq} of the ledger cannot be read" in lines[0]
        assert said in lines[0] and "vak ledger verify" in lines[0]


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")
def test_verify_and_show_still_read_a_ledger_on_a_full_disk(tmp_path: Path) -> None:
    """Issue 13 item 11: on a full disk even `vak ledger verify` died with "disk I/O error"
    (SQLite could not create the WAL's shared index as it opened). The disk is full for the
    child: no file may grow (RLIMIT_FSIZE 0), and the ledger has a WAL not yet checkpointed."""
    import shutil
    import subprocess

    source, data = tmp_path / "source", tmp_path / "data"
    ledger = Ledger.open(source / "ledger.sqlite3")
    session = ledger.create_session().id
    for i in range(3):
        ledger.append(session, Directive(text=f"question {i}"))
    data.mkdir()
    for name in ("ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3.anchor"):
        shutil.copy(source / name, data / name)  # as a crash leaves them: no shared index
    ledger.close()
    full = (
        "import resource, runpy, signal, sys;"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN);"  # a write past the limit fails instead
        "resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0));"
        "sys.argv = ['vak', *sys.argv[1:]];"
        "runpy.run_module('vak_desktop.cli', run_name='__main__')"
    )
    for argv, shows in ((["ledger", "verify", "--json"], '"ok": true'), (["sessions"], "3 turns")):
        done = subprocess.run(
            [sys.executable, "-c", full, *argv, "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=Path(__file__).resolve().parents[2],
        )
        assert done.returncode == 0, done.stderr
        assert shows in done.stdout and "is the disk full?" in done.stderr
