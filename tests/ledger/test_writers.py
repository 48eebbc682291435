"""One writer per session (issue 13 item 5): a second holder is refused while the first holds
the session, in the same process as across processes, and a killed holder frees it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vak_desktop.ledger import Ledger, SessionBusy


def test_a_held_session_refuses_a_second_writer_until_released(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path / "ledger.sqlite3")
    other = Ledger.open(tmp_path / "ledger.sqlite3")  # a second window
    session = ledger.create_session().id
    with ledger.hold(session):
        with (
            pytest.raises(SessionBusy, match=f"session {session} is busy") as caught,
            other.hold(session),
        ):
            pass
        assert f"process {os.getpid()}" in str(caught.value)
        with other.hold(ledger.create_session().id):  # another session is free
            pass
    with other.hold(session):  # released
        pass
    ledger.close()
    other.close()


def test_an_in_memory_ledger_is_held_too() -> None:
    ledger = Ledger.open(":memory:")
    session = ledger.create_session().id
    with ledger.hold(session), pytest.raises(SessionBusy), ledger.hold(session):
        pass
    ledger.close()


@pytest.mark.slow
def test_a_killed_holder_frees_the_session(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger.open(path)
    session = ledger.create_session().id
    holder = (
        "import sys, time\nfrom vak_desktop.ledger import Ledger\n"
        f"l = Ledger.open({str(path)!r})\n"
        f"with l.hold({session!r}):\n    print('held', flush=True)\n    time.sleep(60)\n"
    )
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen(
        [sys.executable, "-c", holder],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stdout=subprocess.PIPE,
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline() == b"held\n"
        with pytest.raises(SessionBusy, match=f"process {child.pid}"), ledger.hold(session):
            pass
    finally:
        child.kill()  # SIGKILL, or TerminateProcess on Windows
        child.wait(timeout=10)
        child.stdout.close()
    deadline = time.monotonic() + 5
    while True:
        try:
            with ledger.hold(session):
                break
        except SessionBusy:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    ledger.close()
