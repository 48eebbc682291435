"""The window's numbers agree and are never stale: a probe is visible while it runs (status bar
and manager), can be paused, and the gauge and the status bar read the new profile the moment it
ends; the message footer and the gauge show the same prompt tokens for a turn; the Probe tab
counts the chat's receipts."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.shots import shots_dir
from tests.ui.harness import Harness, open_harness, until
from vak_desktop.context.capacity.profile import usable_horizon

MODEL = "llama3.2:latest"


@pytest.fixture(autouse=True)
def _collect_on_the_ui_thread() -> None:
    gc.collect()


@pytest.fixture
def small_double() -> Iterator[OllamaDouble]:
    # search_requests: the probe's real-shaped requests are followed within the horizon (the
    # bare double never followed them; the old probe then stored ~200 tokens as a horizon)
    with OllamaDouble(instruction_horizon=2_500, search_requests=True) as server:
        server.add_model(MODEL, trained_window=32_768)
        yield server


async def _bound(harness: Harness) -> None:
    harness.window.picker.choose(MODEL)
    await until(lambda: harness.service.binding is not None, what="the model binding")


async def _send(harness: Harness, text: str, turns: int) -> None:
    harness.window.composer.input.setPlainText(text)
    harness.window.composer.send_button.click()
    await until(lambda: len(harness.finished) == turns, what=f"turn {turns}", within=10)


async def test_a_probe_shows_while_it_runs_and_its_horizon_reaches_the_bar_the_moment_it_ends(
    small_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, small_double.url) as harness:
        window, tools = harness.window, harness.window.tools
        try:
            await _bound(harness)
            await _send(harness, "hello", 1)
            assert "(declared)" in window.model_status.text()
            assert "32,768" in window.status.gauge_label.text()
            manager = tools.open_models()
            await until(lambda: manager.table.rowCount() == 1, what="the manager's rows")
            seen: list[str] = []
            tools.models.probeProgress.connect(
                lambda *_: seen.append(window.status.probe_status.text())
            )
            rows_seen: list[str] = []
            tools.models.probeProgress.connect(
                lambda *_: rows_seen.append(manager.table.item(0, 7).text())
            )
            assert tools.models.probe(MODEL) is not None
            await until(lambda: window.status.probe_status.isVisible(), what="the probe line")
            assert window.status.probe_status.text() == f"measuring {MODEL}… rung 1"
            assert window.status.probe_pause.isVisible()
            window.grab().save(str(shots_dir("dsk") / "probe_running.png"))
            await until(
                lambda: not window.status.probe_status.isVisible(), what="the end", within=20
            )
            assert seen and all(text.startswith(f"measuring {MODEL}…") for text in seen)
            assert "measuring…" in rows_seen
            # no restart, no new turn: the bar and the gauge read the measured profile now
            profile = window.inspection.profile()
            assert profile is not None
            horizon = usable_horizon(profile)
            assert horizon <= 2_500
            assert f"horizon {horizon:,} (measured)" in window.model_status.text()
            assert f"/ {horizon:,} tokens" in window.status.gauge_label.text()
            manager.close()
        finally:
            await tools.aclose()


async def test_pause_stops_the_probe_and_the_bar_says_paused_with_resume(
    small_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    small_double.default_delay_per_chunk = 0.05
    async with open_harness(qtbot, ledger_path, small_double.url) as harness:
        window, tools = harness.window, harness.window.tools
        try:
            await _bound(harness)
            ended: list[str] = []
            tools.models.probeFinished.connect(lambda _m, outcome, _w: ended.append(outcome))
            tools.models.probe(MODEL)
            await until(lambda: window.status.probe_pause.isVisible(), what="the probe line")
            window.status.probe_pause.click()
            await until(lambda: ended, what="the probe to stop")
            assert ended == ["paused"]  # a state now, not a cancel (#25 item 7)
            assert window.status.probe_status.text().startswith(f"probe of {MODEL} paused")
            assert window.status.probe_resume.isVisible()
            assert not window.status.probe_pause.isVisible()
            assert "(declared)" in window.model_status.text()
        finally:
            await tools.aclose()


async def test_the_footer_and_the_gauge_show_the_same_prompt_tokens_for_a_turn(
    small_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, small_double.url) as harness:
        window = harness.window
        await _bound(harness)
        await _send(harness, "What is in the first turn?", 1)
        small_double.enqueue(
            Reply(tool_calls=[("recall", {"turn": 1})]), Reply(text="It said hello.")
        )
        await _send(harness, "Recall it", 2)
        await until(lambda: not harness.service.busy, what="the turn to settle")
        answer = window.chat.answer_message(harness.finished[-1].turn_id)
        assert answer is not None
        footer = answer.stats.text()
        gauge = window.inspection.gauge
        assert gauge is not None and gauge.measured
        assert footer.startswith(f"{gauge.request_tokens:,} in context"), (footer, gauge)
        assert "over 2 requests" in footer
        provenance = window.inspection.provenance()
        assert provenance is not None and provenance.receipts_total == 3
        window.toggle_inspector(True)
        window.inspector.probe.reload()
        assert "3 receipts of this model" in window.inspector.probe.feedback_title.text()
