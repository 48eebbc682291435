"""Import speed, and how long an import keeps every other writer waiting.

    python bench/importing.py [--turns 10000]

Writes a `--turns`-turn OpenAI chat document, imports it with `import_openai` into a fresh
ledger, and meanwhile a second process appends to its own session of the same ledger every
50 ms, timing each append: its longest wait is how long the import held the write lock at once
(issue 24 F6: one transaction of ~13 s, longer than the 10 s busy timeout, so concurrent chats
failed). Baseline in the same run: the same document's entries inserted in one transaction
into a plain table (no chain, no cards).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vak_desktop.ledger import Ledger
from vak_desktop.runtime.sessions.interchange import import_openai

WRITER = """
import os, sys, time
from vak_desktop.context.payloads import Directive
from vak_desktop.ledger import Ledger, LedgerError
store = Ledger.open(sys.argv[1])
session = store.create_session("beside the import").id
print("ready", flush=True)
waits, failed = [], 0
while not os.path.exists(sys.argv[2]):
    started = time.monotonic()
    try:
        store.append(session, Directive(text="a chat beside the import"))
    except LedgerError:
        failed += 1
    waits.append(time.monotonic() - started)
    time.sleep(0.05)
print(max(waits), len(waits), failed, flush=True)
"""


def document(turns: int) -> dict[str, object]:
    messages: list[dict[str, str]] = []
    for i in range(turns):
        messages.append({"role": "user", "content": f"question {i}: " + "words " * 20})
        messages.append({"role": "assistant", "content": f"answer {i}: " + "more words " * 30})
    return {"title": "bench", "model": "m", "messages": messages}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=10_000)
    args = parser.parse_args()
    doc = document(args.turns)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ledger.sqlite3"
        Ledger.open(path).close()
        baseline = sqlite3.connect(Path(tmp) / "plain.sqlite3", isolation_level=None)
        baseline.execute("PRAGMA journal_mode = WAL")
        baseline.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, body TEXT)")
        started = time.perf_counter()
        baseline.execute("BEGIN")
        for message in doc["messages"]:  # type: ignore[attr-defined]
            baseline.execute("INSERT INTO t (body) VALUES (?)", [json.dumps(message)])
        baseline.execute("COMMIT")
        plain = time.perf_counter() - started
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(Path(tmp) / "stop")],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None
        writer.stdout.readline()  # ready
        store = Ledger.open(path)
        started = time.perf_counter()
        report = import_openai(store, doc)
        took = time.perf_counter() - started
        store.close()
        (Path(tmp) / "stop").touch()
        longest, appends, failed = writer.stdout.readline().split()
        writer.wait()
    print(f"import of {args.turns:,} turns ({report.entries:,} entries): {took:.1f} s")
    print(f"  plain INSERT of the messages in one transaction (baseline): {plain:.2f} s")
    print(
        f"  a writer beside it: {appends} appends, {failed} failed, longest wait "
        f"{float(longest):.2f} s (the busy timeout is 10 s)"
    )


if __name__ == "__main__":
    main()
