"""`vak delete SESSION` (issue 25 item 7): refuses off a terminal without --yes, refuses a
session others continue without --with-branches, deletes for good otherwise; `vak ledger
verify` then counts the deletion. Run as a real process on a real ledger file."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vak_desktop.context.payloads import AssistantStep, Directive
from vak_desktop.ledger import Ledger


def _vak(
    data: Path, *argv: str, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vak_desktop.cli", "--data-dir", str(data), *argv],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _ledger(data: Path) -> tuple[str, str, str]:
    store = Ledger.open(data / "ledger.sqlite3")
    ids = []
    for word in ("kept", "doomed"):
        session = store.create_session().id
        store.append(session, Directive(text=f"{word} unique-cli-text"))
        store.append(session, AssistantStep(text=f"{word} answer", model="m"))
        ids.append(session)
    child = store.create_session(derived_from=ids[1]).id
    store.append(child, Directive(text="child text"))
    store.close()
    return ids[0], ids[1], child


def test_delete_refuses_off_a_terminal_and_with_continuations(tmp_path: Path) -> None:
    kept, doomed, _child = _ledger(tmp_path)
    run = _vak(tmp_path, "delete", kept)
    assert run.returncode == 2
    assert run.stderr.strip() == (
        f"vak: not deleting session {kept} without --yes: there is no terminal to ask on"
    )
    run = _vak(tmp_path, "delete", doomed, "--yes")
    assert run.returncode == 2
    assert "1 chat was continued from it" in run.stderr and "--with-branches" in run.stderr
    run = _vak(tmp_path, "delete", "0123456789abcdef", "--yes")
    assert run.returncode == 2 and "nothing was deleted" in run.stderr
    listed = json.loads(_vak(tmp_path, "sessions", "--json").stdout)
    assert len(listed) == 3
    assert {row["id"]: row["derived_from"] for row in listed}[_child] == doomed


def test_delete_with_branches_then_verify_counts_it(tmp_path: Path) -> None:
    kept, doomed, child = _ledger(tmp_path)
    run = _vak(tmp_path, "delete", doomed, "--with-branches", "--yes", "--json")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out == {"deleted": [doomed, child], "entries": 3, "compacted": True, "why_not": None}
    assert [s["id"] for s in json.loads(_vak(tmp_path, "sessions", "--json").stdout)] == [kept]
    data = (tmp_path / "ledger.sqlite3").read_bytes()
    assert b"doomed unique-cli-text" not in data and b"kept unique-cli-text" in data
    verify = _vak(tmp_path, "ledger", "verify")
    assert verify.returncode == 0, verify.stdout
    assert "1 deletion recorded" in verify.stdout
    assert "ok: 2 entries in 1 sessions verify" in verify.stdout
    assert json.loads(_vak(tmp_path, "ledger", "verify", "--json").stdout)["deletions"] == 1


def _on_a_terminal(data: Path, session: str, answer: bytes) -> tuple[int, str]:
    """Run `vak delete SESSION` with a pseudo-terminal as its stdin, answering the question."""
    pty = importlib.import_module("pty")  # POSIX only: the test using it is skipped elsewhere
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execv(
            sys.executable,
            [sys.executable, "-m", "vak_desktop.cli", "--data-dir", str(data), "delete", session],
        )
    seen = b""
    while b"[y/N]" not in seen:
        seen += os.read(fd, 1024)
    os.write(fd, answer)
    try:
        while chunk := os.read(fd, 1024):
            seen += chunk
    except OSError:  # the child closed the terminal
        pass
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), seen.decode()


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals on this OS")
def test_delete_asks_on_a_terminal(tmp_path: Path) -> None:
    kept, _, _ = _ledger(tmp_path)
    code, shown = _on_a_terminal(tmp_path, kept, b"n\n")
    assert code == 2 and 'Delete "kept unique-cli-text"' in shown and "not deleted" in shown
    assert len(json.loads(_vak(tmp_path, "sessions", "--json").stdout)) == 3
    code, shown = _on_a_terminal(tmp_path, kept, b"y\n")
    assert code == 0 and f"deleted session {kept}" in shown
    assert len(json.loads(_vak(tmp_path, "sessions", "--json").stdout)) == 2
