"""The crash-and-tamper harness (issue 13): `vak chat` subprocesses killed with SIGKILL at random
moments of their turn (starting, binding, directive written, mid-stream, closing), each kill
followed by `vak ledger verify`, the next turn continuing the session, and `vak show`; then
every tamper case of tests/ledger/test_tamper.py on the resulting ledger.

It prints its figures (run with `-s` to see them): kills survived, committed entries lost,
streamed characters kept of those shown more than a second before each kill, tamper cases
named out of tried. `VAK_CRASH_KILLS` sets the number of kills (default 6).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.doubles.fixtures import TOOL_MODEL
from tests.doubles.ollama_model import Reply
from tests.doubles.ollama_server import OllamaDouble
from tests.ledger.test_table_guards import SHELL, _all_rewrites, _rows
from tests.ledger.test_tamper import TAMPERS
from tests.runtime.tools.test_file_race import SWAPPER
from tests.runtime.tools.test_glob_linear import HOSTILE, NAME
from vak_desktop.context.payloads import Directive
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.settings import Settings, save_settings
from vak_desktop.runtime.tools.files import GrepTool, ReadTool
from vak_desktop.runtime.tools.registry import ToolFailure
from vak_desktop.runtime.tools.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
KILLS = int(os.environ.get("VAK_CRASH_KILLS", "6"))
ANSWER = "".join(f"word{i} " for i in range(2000))  # ~20 s at 10 ms a chunk of 6 chars


def _vak(data: Path, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vak_desktop.cli", *argv, "--data-dir", str(data)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class _Shown:
    """The text events a child printed, with when each arrived."""

    def __init__(self, child: subprocess.Popen[bytes]) -> None:
        self.events: list[tuple[float, str]] = []
        self._thread = threading.Thread(target=self._read, args=(child,), daemon=True)
        self._thread.start()

    def _read(self, child: subprocess.Popen[bytes]) -> None:
        assert child.stdout is not None
        for line in child.stdout:
            event = json.loads(line)
            if event["event"] == "text":
                self.events.append((time.monotonic(), event["text"]))

    def before(self, instant: float) -> str:
        self._thread.join(timeout=10)
        return "".join(text for at, text in self.events if at <= instant)


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters `a` and `b` share."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def _entry_ids(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        ids = {row[0] for row in conn.execute("SELECT id FROM entries")}
    conn.close()
    return ids


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.allow_log_warnings  # tamper cases reopen the ledger; raced reads are refused
def test_random_kills_lose_nothing_and_every_tamper_is_named(tmp_path: Path) -> None:
    rng = random.Random(13)
    data = tmp_path / "data"
    db = data / "ledger.sqlite3"
    store = Ledger.open(db)
    session = store.create_session().id
    store.close()
    survived, lost, shown_total, kept_total, interrupted = 0, 0, 0, 0, 0
    committed: set[str] = set()
    with OllamaDouble(
        default_text=ANSWER, default_chunk_chars=6, default_delay_per_chunk=0.01
    ) as double:
        double.add_model(TOOL_MODEL)
        for kill in range(KILLS):
            command = [sys.executable, "-m", "vak_desktop.cli", "chat", TOOL_MODEL]
            command += [f"question {kill}", "--session", session, "--json"]
            command += ["--host", double.url, "--data-dir", str(data)]
            short = kill % 3 == 2  # a short answer: the kill lands near or after its close
            if short:
                double.enqueue(Reply(text="A short answer that closes quickly."))
            child = subprocess.Popen(
                command,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            shown = _Shown(child)
            # start-up (~1.5 s), bind, directive written, streaming, closing
            time.sleep(rng.uniform(1.0, 3.0) if short else rng.uniform(0.5, 6.0))
            killed_at = time.monotonic()
            child.kill()  # SIGKILL, or TerminateProcess on Windows
            child.wait(timeout=10)
            assert child.stdout is not None
            seen = shown.before(killed_at - 1.0)
            child.stdout.close()

            verify = _vak(data, "ledger", "verify", "--json")
            assert verify.returncode == 0, verify.stdout + verify.stderr
            assert json.loads(verify.stdout)["ok"]
            committed |= _entry_ids(db)

            # the next start shows what streamed, marked interrupted
            double.enqueue(Reply(text="Continuing."))
            cont = _vak(data, "chat", TOOL_MODEL, "go on", "--session", session, "--json",
                        "--host", double.url)  # fmt: skip
            assert cont.returncode == 0, cont.stderr
            show = _vak(data, "show", session, "--json")
            assert show.returncode == 0, show.stderr
            turns = json.loads(show.stdout)["turns"]
            killed = [t for t in turns if t["directive"] == f"question {kill}"]
            assert killed or not seen  # killed before its directive was written: nothing shown
            if seen:
                killed_turn = killed[0]
                # interrupted, or completed when the kill landed after the turn closed
                assert killed_turn["outcome"] in ("interrupted", "completed"), killed_turn
                interrupted += killed_turn["outcome"] == "interrupted"
                # `show` joins a turn's steps with a blank line; the stream had none between
                steps = "".join(killed_turn["answer"].split("\n\n"))
                kept = _common_prefix(seen, steps)
                if kept < len(seen):
                    print(f"kill {kill}: kept {kept} of {len(seen)}: {killed_turn!r:.400}")
                shown_total += len(seen)
                kept_total += kept
            survived += 1
        final = _entry_ids(db)
        lost = len(committed - final)
        verify = _vak(data, "ledger", "verify", "--json")
        assert json.loads(verify.stdout)["ok"]

    # every tamper case on a copy of the ledger the kills left
    named = 0
    store = Ledger.open(db)
    other = store.create_session().id  # a second session, as the tamper cases want
    store.append(other, Directive(text="another session"))
    store.close()
    for case, tamper in TAMPERS.items():
        copy = tmp_path / f"tamper-{len(case)}-{named}"
        copy.mkdir()
        for name in os.listdir(data):
            if name.startswith("ledger.sqlite3") and not name.endswith(".locks"):
                shutil.copy(data / name, copy / name)
        target = copy / "ledger.sqlite3"
        tamper(target, session, other)
        report = _vak(copy, "ledger", "verify", "--json")
        named += report.returncode == 1 and not json.loads(report.stdout)["ok"]

    refused, rewrites = _every_rewrite_of_every_table(tmp_path, data)
    migrations = _migration_record_removed(tmp_path, data)
    with OllamaDouble() as double:
        double.add_model(TOOL_MODEL)
        glob_answered = _hostile_glob_in_a_turn(tmp_path, double)
    race_calls, race_leaks = _swap_race(tmp_path, calls=30_000)

    print(
        f"\ncrash harness: {survived}/{KILLS} kills survived ({interrupted} mid-stream), "
        f"{lost} committed entries lost, "
        f"{kept_total}/{shown_total} characters shown >1 s before a kill kept, "
        f"{named}/{len(TAMPERS)} tamper cases named by verify, "
        f"{refused}/{rewrites} rewrites of append-only tables refused"
        f"{' by the sqlite3 shell' if SHELL else ''}, "
        f"a removed migration record {'one line' if migrations else 'NOT one line'}, "
        f"the hostile glob {'answered' if glob_answered else 'NOT answered'} in a turn, "
        f"{race_leaks} leaks in {race_calls:,} raced reads and greps"
    )
    assert survived == KILLS and lost == 0
    assert kept_total >= 0.95 * shown_total
    assert shown_total > 0  # some kills landed mid-stream
    assert named == len(TAMPERS)
    assert refused == rewrites and migrations and glob_answered
    assert race_leaks == 0


def _copy_of(data: Path, where: Path) -> Path:
    where.mkdir()
    for name in os.listdir(data):
        if name.startswith("ledger.sqlite3") and not name.endswith(".locks"):
            shutil.copy(data / name, where / name)
    return where


def _every_rewrite_of_every_table(tmp_path: Path, data: Path) -> tuple[int, int]:
    """Every REPLACE / UPSERT / UPDATE / DELETE of every append-only table, on a copy of the
    ledger the kills left (the sqlite3 shell when installed): (refused, tried)."""
    copy = _copy_of(data, tmp_path / "rewrites") / "ledger.sqlite3"
    store = Ledger.open(copy)  # every table gets a row to try
    session = store.sessions()[0].id
    store.checkpoint(session, "harness", store.last_seq(), "unfolded", "")
    store.close()
    with sqlite3.connect(copy) as conn:
        conn.execute(
            "INSERT INTO capacity_profiles (provider, model, quantisation, probed_at, profile,"
            " activity, recorded_at) VALUES ('p', 'm', 'q', 't', '{}', '{}', 't')"
        )
    conn.close()
    tried = _all_rewrites(copy)
    refused = 0
    for table, sql in tried:
        before = _rows(copy, table)
        if SHELL:
            done = subprocess.run([SHELL, str(copy), sql + ";"], capture_output=True, timeout=20)
            failed = done.returncode != 0
        else:
            try:
                with sqlite3.connect(copy, isolation_level=None) as conn:
                    conn.execute(sql)
                failed = False
            except sqlite3.IntegrityError:
                failed = True
            conn.close()
        refused += failed and _rows(copy, table) == before
    return refused, len(tried)


def _migration_record_removed(tmp_path: Path, data: Path) -> bool:
    """F7: the record of migrations emptied (its trigger dropped first): verify says so in
    one line, exit 2, instead of "table entries already exists"."""
    copy = _copy_of(data, tmp_path / "migrations")
    with sqlite3.connect(copy / "ledger.sqlite3", isolation_level=None) as conn:
        conn.execute("DROP TRIGGER _vak_migrations_no_delete")
        conn.execute("DELETE FROM _vak_migrations")
    conn.close()
    done = _vak(copy, "ledger", "verify")
    lines = done.stderr.strip().splitlines()
    return done.returncode == 2 and len(lines) == 1 and "_vak_migrations" in lines[0]


def _hostile_glob_in_a_turn(tmp_path: Path, double: OllamaDouble) -> bool:
    """F3: a model's glob call with `*a*a*a*a*a*a*a*a*a*a*a*b` over a 100-character name, in a
    real `vak chat` turn: the turn completes and the call's result is an answer."""
    folder = tmp_path / "glob-ws"
    folder.mkdir()
    (folder / NAME).write_text("a\n")
    data = tmp_path / "glob-data"
    save_settings(Settings(workspace=(str(folder),)), data / "settings.toml")
    double.enqueue(Reply(tool_calls=[("glob", {"pattern": HOSTILE})]), Reply(text="No match."))
    done = _vak(data, "chat", TOOL_MODEL, "find it", "--json", "--host", double.url, timeout=90)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    results = [e for e in events if e["event"] == "tool_result"]
    finished = [e for e in events if e["event"] == "done"]
    return (
        done.returncode == 0
        and bool(results)
        and not results[0]["error"]
        and bool(finished)
        and finished[0]["outcome"] == "completed"
    )


def _swap_race(tmp_path: Path, calls: int) -> tuple[int, int]:
    """F2: `calls` reads and greps while a second process swaps a workspace folder for a link
    to an outside one: (calls made, calls that returned a byte of the outside file)."""
    ws, outside = tmp_path / "race-ws", tmp_path / "race-outside"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    (ws / "sub" / "notes.txt").write_text("inside text\n")
    (outside / "notes.txt").write_text("OUTSIDE-SECRET\n")
    workspace = Workspace((ws.resolve(),))
    read, grep = ReadTool(), GrepTool()
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(ws), str(outside)])
    leaks = 0
    try:
        time.sleep(0.2)
        for i in range(calls):
            tool, arguments = (
                (read, {"path": "sub/notes.txt"})
                if i % 6
                else (grep, {"pattern": "SECRET|inside", "path": "sub"})
            )
            try:
                leaks += "OUTSIDE" in tool.work(arguments, workspace).content
            except (ToolFailure, OSError):
                continue
        assert swapper.poll() is None
    finally:
        swapper.kill()
        swapper.wait(timeout=10)
    return calls, leaks
