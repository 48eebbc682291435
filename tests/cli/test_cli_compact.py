"""`/compact` in `vak chat` shows the summariser writing: which turns, call k of n, elapsed
(issue #17 item 1), on the imported 40-turn session of `test_first_answer` bound to a small
measured profile, so its packet takes several summariser calls on the loopback Ollama double."""

from __future__ import annotations

import dataclasses
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import ROOT, lines, vak
from tests.doubles.ollama_server import OllamaDouble
from tests.runtime.turn.test_first_answer import MODEL, SMALL, conversation
from vak_desktop.context.payloads import Compaction, Horizon
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.sessions.interchange import import_openai

# a horizon where the summariser's request holds about 18 of the 40 cards: three calls
TINY = dataclasses.replace(SMALL, instruction_horizon=Horizon(1_500, 0.9, "2026-12-01T00:00:00Z"))
SUMMARY = "The summary so far: questions about tuning parts of the build. "


def imported_session(data: Path) -> str:
    ledger = Ledger.open(data / "ledger.sqlite3")
    try:
        session = import_openai(ledger, conversation(), title="imported").session
        ledger.append(session, TINY)
        return session
    finally:
        ledger.close()


def packets(data: Path, session: str) -> list[Compaction]:
    ledger = Ledger.open(data / "ledger.sqlite3")
    try:
        chain = ledger.chain_to_root(session)
        return [e.payload for e in chain if isinstance(e.payload, Compaction)]
    finally:
        ledger.close()


def test_compact_in_the_repl_prints_each_summariser_call_on_stderr(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    session = imported_session(data)
    with OllamaDouble(default_text=SUMMARY * 2, default_delay_per_chunk=0.05) as double:
        double.add_model(MODEL, trained_window=32_768)
        command = [sys.executable, "-m", "vak_desktop.cli", "chat", MODEL, "--session", session]
        command += ["--host", double.url, "--data-dir", str(data)]
        done = subprocess.run(
            command,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            input="/compact\n",
            capture_output=True,
            text=True,
            timeout=90,
        )
        asked = len(double.chat_bodies())
    assert done.returncode == 0, done.stderr
    progress = re.findall(
        r"^… summarising turns 1–40: call (\d) of (\d) \(turns ([\d–]+)\) · (\d+) s$",
        done.stderr,
        re.MULTILINE,
    )
    assert [(k, n) for k, n, _, _ in progress] == [("1", "3"), ("2", "3"), ("3", "3")]
    assert [chunk for _, _, chunk, _ in progress] == ["1–16", "17–31", "32–40"]  # dated cards
    elapsed = [int(s) for *_, s in progress]
    assert elapsed == sorted(elapsed) and elapsed[-1] >= 1  # each call took a while
    assert "! turns 1–40 summarised into the context packet" in done.stderr
    assert asked == 3  # one summariser request per call shown, nothing else
    [packet] = packets(data, session)
    assert packet.summary.startswith("The summary so far")


def test_compact_with_json_streams_progress_events_then_the_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    session = imported_session(data)
    monkeypatch.setattr(sys, "stdin", io.StringIO("/compact\n"))
    with OllamaDouble(default_text=SUMMARY, default_delay_per_chunk=0.02) as double:
        double.add_model(MODEL, trained_window=32_768)
        argv = ["chat", MODEL, "--session", session, "--json", "--host", double.url]
        code, out, _ = vak(capsys, *argv, "--data-dir", str(data))
    assert code == 0
    events = lines(out)
    assert [e["event"] for e in events][-1] == "compact"
    progress = [e for e in events if e["event"] == "compact_progress"]
    assert sorted({(e["call"], e["calls"]) for e in progress}) == [(1, 3), (2, 3), (3, 3)]
    assert all(e["turns"] == "1–40" for e in progress)
    [packet] = packets(data, session)
    assert events[-1]["packet_range"] == [packet.first_turn_id, packet.last_turn_id]


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals on this OS")
def test_on_a_terminal_the_progress_line_is_rewritten_in_place(tmp_path: Path) -> None:
    """stderr a terminal: one line, redrawn (`\\r`, erase to end) as each call starts and
    every second while it runs, then a newline before the outcome."""
    data = tmp_path / "data"
    data.mkdir()
    session = imported_session(data)
    primary, secondary = os.openpty()
    try:
        with OllamaDouble(default_text=SUMMARY * 2, default_delay_per_chunk=0.08) as double:
            double.add_model(MODEL, trained_window=32_768)
            command = [sys.executable, "-m", "vak_desktop.cli", "chat", MODEL]
            command += ["--session", session, "--host", double.url, "--data-dir", str(data)]
            done = subprocess.run(
                command,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                input=b"/compact\n",
                stdout=subprocess.PIPE,
                stderr=secondary,
                timeout=90,
            )
        assert done.returncode == 0
        os.close(secondary)
        secondary = -1
        written = b""
        while True:
            try:
                piece = os.read(primary, 65_536)
            except OSError:  # the child closed its end: all of it has been read
                break
            if not piece:
                break
            written += piece
    finally:
        os.close(primary)
        if secondary >= 0:
            os.close(secondary)
    text = written.decode("utf-8")
    redraws = text.split("\r\x1b[K")[1:]
    assert len(redraws) > 3  # the calls, and the seconds ticking inside them
    assert all(r.startswith("… summarising turns 1–40: call ") for r in redraws)
    seconds = [int(re.search(r"· (\d+) s", r).group(1)) for r in redraws]  # type: ignore[union-attr]
    assert seconds == sorted(seconds) and seconds[-1] >= 2
    assert "call 3 of 3" in redraws[-1]
    assert redraws[-1].splitlines()[1].endswith("turns 1–40 summarised into the context packet")
