""" "Compact now" shows the summariser writing in the status bar (issue #17 item 1): which turns,
call k of n, elapsed, from the runtime's `CompactionProgress` events, while the window stays
responsive; Stop cancels it and nothing half-written reaches the ledger. The session is the
imported 40-turn chat of `test_first_answer` on a small measured profile, so its packet takes
three summariser calls on the loopback Ollama double."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer

from tests.cli.test_cli_compact import SUMMARY, TINY
from tests.doubles.ollama_server import OllamaDouble
from tests.runtime.turn.test_first_answer import conversation
from tests.ui.harness import Harness, open_harness, until
from vak_desktop.context.payloads import Compaction
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.events import CompactionProgress
from vak_desktop.runtime.sessions.interchange import import_openai

MODEL = "qwen2.5:0.5b"


@pytest.fixture
def slow_double() -> Iterator[OllamaDouble]:
    """Each summariser call streams for about a second."""
    with OllamaDouble(default_text=SUMMARY * 2, default_delay_per_chunk=0.05) as server:
        server.add_model("llama3.2")
        server.add_model(MODEL, trained_window=32_768)
        yield server


def _imported(ledger_path: Path) -> str:
    ledger = Ledger.open(ledger_path)
    try:
        session = import_openai(ledger, conversation(), title="imported 40 turns").session
        ledger.append(session, dataclasses.replace(TINY, model=MODEL))
        return session
    finally:
        ledger.close()


def _packets(harness: Harness, session: str) -> list[Compaction]:
    chain = harness.ledger.chain_to_root(session)
    return [e.payload for e in chain if isinstance(e.payload, Compaction)]


async def _open(harness: Harness, session: str) -> None:
    assert harness.service.open_session(session)
    harness.window.picker.choose(MODEL)
    await until(lambda: harness.service.binding is not None, what="the model binding")


async def test_compact_now_shows_each_call_in_the_status_bar_and_the_window_stays_free(
    slow_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    session = _imported(ledger_path)
    async with open_harness(qtbot, ledger_path, slow_double.url) as harness:
        window, status = harness.window, harness.window.status
        await _open(harness, session)
        shown: list[tuple[str, int, str]] = []  # the label, bar and tooltip after each report

        def seen(progress: CompactionProgress | None) -> None:
            if progress is not None:
                bar, tip = status.compact_bar.value(), status.compact_status.toolTip()
                shown.append((status.compact_status.text(), bar, tip))

        harness.service.compactionProgress.connect(seen)
        gaps: list[float] = []  # how late a 20 ms timer fires while the summariser writes
        last = [time.monotonic()]

        def tick() -> None:
            now = time.monotonic()
            gaps.append(now - last[0])
            last[0] = now

        timer = QTimer()
        timer.timeout.connect(tick)
        timer.start(20)
        notices: list[str] = []
        harness.service.notice.connect(notices.append)
        window.compact_action.trigger()
        await until(lambda: status.compact_status.isVisible(), what="the progress line")
        assert status.compact_stop.isVisible() and status.compact_bar.isVisible()
        window.composer.input.setPlainText("typed while it writes")  # the window takes input
        await until(lambda: "call 2 of 3" in status.compact_status.text(), what="call 2")
        await until(lambda: status.compact_status.text().endswith(" 2 s"), what="a tick")
        harness.screenshot("compact_now_progress")
        await until(lambda: not harness.service.compacting, what="the compaction", within=30)
        timer.stop()
        texts = [text for text, _, _ in shown]
        for k in (1, 2, 3):
            assert any(f"compacting turns 1–40: call {k} of 3" in t for t in texts), texts
        assert any("(turns 17–31)" in tip for *_, tip in shown)
        assert [value for _, value, _ in shown] == sorted(value for _, value, _ in shown)
        assert any(t.endswith(" s") and not t.endswith(" 0 s") for t in texts)  # elapsed grows
        assert len(gaps) > 50 and max(gaps) < 0.5, max(gaps)  # the UI thread never stalled
        assert not status.compact_status.isVisible() and not status.compact_stop.isVisible()
        assert any("summarised into the context packet" in n for n in notices)
        assert window.composer.input.toPlainText() == "typed while it writes"
        [packet] = _packets(harness, session)
        assert packet.summary.startswith("The summary so far")


async def test_stop_cancels_compact_now_and_writes_nothing(
    slow_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    session = _imported(ledger_path)
    async with open_harness(qtbot, ledger_path, slow_double.url) as harness:
        status = harness.window.status
        await _open(harness, session)
        notices: list[str] = []
        harness.service.notice.connect(notices.append)
        harness.window.compact_action.trigger()
        await until(lambda: status.compact_stop.isVisible(), what="the Stop button")
        harness.window.compact_action.trigger()  # a second one is refused while it writes
        assert "Already compacting" in harness.window.notice_line.text.text()  # whole there
        status.compact_stop.click()
        await until(lambda: not harness.service.compacting, what="the compaction to stop")
        assert not status.compact_status.isVisible()
        assert any("Compaction stopped: nothing was written" in n for n in notices)
        assert _packets(harness, session) == []
        assert harness.ledger.verify().ok


async def test_a_message_sent_while_compacting_stops_it_and_is_answered(
    slow_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    session = _imported(ledger_path)
    async with open_harness(qtbot, ledger_path, slow_double.url) as harness:
        status, window = harness.window.status, harness.window
        await _open(harness, session)
        window.compact_action.trigger()
        await until(lambda: status.compact_status.isVisible(), what="the progress line")
        window.composer.input.setPlainText("What was part 7 about?")
        window.composer.send_button.click()
        await until(lambda: harness.finished, what="the answer", within=15)
        assert harness.finished[0].outcome == "completed"
        assert not harness.service.compacting and not status.compact_status.isVisible()
        # the summary it was writing was dropped: no packet before the turn's own directive
        # (the look-ahead may write one after the turn closes)
        chain = harness.ledger.chain_to_root(session)
        turn = next(i for i, e in enumerate(chain) if e.id == harness.finished[0].turn_id)
        assert not any(isinstance(e.payload, Compaction) for e in chain[:turn])
