"""OpenAI-format import: one transaction, and work linear in the number of turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vak_desktop.ledger import Ledger
from vak_desktop.runtime.sessions.interchange import import_openai


def _conversation(turns: int) -> dict[str, Any]:
    messages: list[dict[str, str]] = []
    for i in range(turns):
        messages.append({"role": "user", "content": f"question {i} about the ledger"})
        messages.append({"role": "assistant", "content": f"answer {i}: appended, never rewritten"})
    return {"messages": messages}


def _sqlite_work(path: Path, turns: int) -> int:
    """SQLite's virtual-machine steps (in thousands) to import a `turns`-turn conversation: a
    count of the work done, where a time would be a figure for bench/, not a test."""
    ledger = Ledger.open(path)
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0  # go on

    ledger._db.conn.set_progress_handler(count, 1000)
    report = import_openai(ledger, _conversation(turns))
    ledger._db.conn.set_progress_handler(None, 0)
    ledger.close()
    assert report.turns == turns
    return steps


def test_an_import_does_work_linear_in_its_turns(tmp_path: Path) -> None:
    """Issue 13 item 10: each imported turn re-read the whole chain to close itself (3,288 of
    10,000 turns after 1,025 s). Four times the turns is now about four times the work
    (quadratic would be sixteen; the old code did 14x)."""
    small = _sqlite_work(tmp_path / "small.sqlite3", 100)
    large = _sqlite_work(tmp_path / "large.sqlite3", 400)
    assert small > 0 and large < 6 * small, (small, large)
