"""Deleting a session for good, beside a plain VACUUM of the same ledger in the same run.

    python bench/deletion.py [--sessions 10] [--turns 1000] [--runs 3]

Builds a ledger of `sessions` sessions of `turns` turns each (a turn is five entries: a
directive, a tool step, its result, a receipt, an answer: bench/ledger.py's mix), copies it,
and on each copy times either `Ledger.delete_session` of one 1,000-turn session (split by its
steps: the anchor rewrite, the one transaction, then the WAL checkpoint + VACUUM that empties
the files) or, as the baseline, `PRAGMA wal_checkpoint(TRUNCATE)` + `VACUUM` alone on the
untouched ledger. The deletion's cost is the VACUUM's plus the transaction's; the ratio says
how much the deletion adds to what any compaction of that file costs.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ledger import payload

from vak_desktop.ledger import Ledger

ENTRIES_PER_TURN = 5


def build(path: Path, sessions: int, turns: int) -> list[str]:
    store = Ledger.open(path)
    ids = []
    for _ in range(sessions):
        session = store.create_session().id
        with store.transaction():
            for i in range(turns * ENTRIES_PER_TURN):
                store.append(session, payload(i))
        ids.append(session)
    store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return ids


def copy(source: Path, folder: Path) -> Path:
    folder.mkdir()
    for file in source.parent.iterdir():
        if file.is_file() and file.name.startswith(source.name):
            shutil.copy2(file, folder / file.name)
    return folder / source.name


def time_delete(path: Path, session: str) -> dict[str, float]:
    store = Ledger.open(path)
    marks: dict[str, float] = {}
    start = time.perf_counter()
    store.delete_session(session, between=lambda step: marks.setdefault(step, time.perf_counter()))
    end = time.perf_counter()
    report = store.verify()
    assert report.ok and report.deletions == 1, report
    store.close()
    return {
        "anchor": marks["anchor rewritten"] - start,
        "transaction": marks["committed"] - marks["anchor rewritten"],
        "scrub": end - marks["committed"],
        "total": end - start,
    }


def time_vacuum(path: Path) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    start = time.perf_counter()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    took = time.perf_counter() - start
    conn.close()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "built").mkdir()
        source = root / "built" / "ledger.sqlite3"
        started = time.perf_counter()
        sessions = build(source, args.sessions, args.turns)
        size = source.stat().st_size
        print(
            f"ledger: {args.sessions} sessions x {args.turns:,} turns"
            f" = {args.sessions * args.turns:,} turns, {args.sessions * args.turns * 5:,}"
            f" entries, {size / 1e6:.1f} MB (built in {time.perf_counter() - started:.1f} s)"
        )
        deletes: list[dict[str, float]] = []
        vacuums: list[float] = []
        for run in range(args.runs):  # interleaved, so load changes hit both alike
            vacuums.append(time_vacuum(copy(source, root / f"vacuum-{run}")))
            deletes.append(time_delete(copy(source, root / f"delete-{run}"), sessions[run % 3]))
        median = {k: statistics.median(d[k] for d in deletes) for k in deletes[0]}
        base = statistics.median(vacuums)
        print(f"delete one {args.turns:,}-turn session (median of {args.runs}):")
        for key in ("anchor", "transaction", "scrub", "total"):
            print(f"  {key:<12} {median[key] * 1000:8.1f} ms")
        print(f"baseline: checkpoint + VACUUM alone  {base * 1000:8.1f} ms")
        print(f"ratio delete total / VACUUM alone: {median['total'] / base:.2f}x")


if __name__ == "__main__":
    main()
