"""The window tells the truth about the probe (issue #25 items 3 and 7): an undecided probe is
shown as undecided, a tool call above the stored horizon is never "nothing contradicted it",
a gauge over 100 % says why, and Pause is a state that Resume continues from.

Against the loopback Ollama double and the real window (offscreen); screenshots go to
`screenshots/` (probe-undecided.png, probe-above-horizon.png, probe-paused.png).
"""

from __future__ import annotations

import dataclasses
import gc
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.runtime.probe_doubles import is_probe_body
from tests.ui.harness import Harness, open_harness, until
from vak_desktop.context.capacity.probe import PROBE_ACTIVITY
from vak_desktop.context.capacity.profile import metadata_profile
from vak_desktop.context.payloads import Activity, Horizon
from vak_desktop.ledger import Ledger
from vak_desktop.providers import open_provider
from vak_desktop.runtime import run_probe

MODEL = "qwen2.5-coder:0.5b"
TRAINED = 32_768


@pytest.fixture(autouse=True)
def _collect_on_the_ui_thread() -> None:
    gc.collect()


async def _bound(harness: Harness) -> None:
    harness.window.picker.choose(MODEL)
    await until(lambda: harness.service.binding is not None, what="the model binding")


def _store(ledger_path: Path, profile: Any, activity: Activity) -> None:
    ledger = Ledger.open(ledger_path)
    try:
        ledger.profiles().record(profile, activity)
    finally:
        ledger.close()


async def test_an_undecided_probe_is_shown_as_undecided(qtbot: Any, ledger_path: Path) -> None:
    with OllamaDouble(instruction_horizon=0) as double:  # it follows at no size
        double.add_model(MODEL, trained_window=TRAINED)
        async with httpx.AsyncClient() as client:
            record = await run_probe(open_provider("ollama", client, double.url), MODEL)
        _store(ledger_path, record.profile, record.activity)
        async with open_harness(qtbot, ledger_path, double.url) as harness:
            window = harness.window
            await _bound(harness)
            # the status bar: undecided, never "(measured)" (it showed a ~50-token horizon),
            # at the largest size the tool task was tried at (decision 0109)
            tried = record.profile.instruction_horizon.tokens
            assert tried < TRAINED and record.profile.provenance["horizon_from"] == "tried"
            assert f"horizon {tried:,} (undecided)" in window.model_status.text()
            assert "undecided" in window.model_status.toolTip()
            window.toggle_inspector(True)
            window.inspector.show_panel("Probe")
            panel = window.inspector.probe
            assert panel.state == "undecided"
            assert "undecided" in panel.heading.text()
            assert "measured by the capacity probe" not in panel.heading.text()
            assert "undecided, not measured by this probe" in panel.facts["horizon"].text()
            assert f"the planner uses {tried:,}" in panel.facts["horizon"].text()
            assert "the largest size the tool task was tried at" in panel.facts["horizon"].text()
            verdicts = {panel.rungs.item(r, 5).text() for r in range(panel.rungs.rowCount())}
            assert verdicts == {"not followed"}
            await until(lambda: panel.feedback_title.height() > 20, what="the title laid out")
            harness.screenshot("probe-undecided")


async def test_a_tool_call_above_the_stored_horizon_is_evidence_and_the_gauge_says_why(
    qtbot: Any, ledger_path: Path
) -> None:
    with OllamaDouble(instruction_horizon=20_000) as double:
        double.add_model(MODEL, trained_window=TRAINED)
        stored = dataclasses.replace(
            metadata_profile("ollama", MODEL, TRAINED, quantisation="Q4_K_M"),
            instruction_horizon=Horizon(466, 0.88, "2026-12-01T08:00:00Z"),
            num_ctx=4_096,
            provenance={"source": "probe", "probed_at": "2026-12-01T08:00:00Z"},
        )
        detail = {"model": MODEL, "provider": "ollama", "probed_at": "2026-12-01T08:00:00Z"}
        _store(ledger_path, stored, Activity(PROBE_ACTIVITY, "probed", detail))
        async with open_harness(qtbot, ledger_path, double.url) as harness:
            window = harness.window
            await _bound(harness)
            double.enqueue(Reply(tool_calls=[("glob", {"pattern": "*.md"})]))
            double.enqueue(Reply(text="No notes here."))
            # a directive long enough that the request is well over the stored 466 tokens
            context = "The notes are about the pump maintenance log and its valves. " * 30
            window.composer.input.setPlainText(f"List my notes. {context}")
            window.composer.send_button.click()
            await until(lambda: len(harness.finished) == 1, what="the turn", within=15)
            window.toggle_inspector(True)
            window.inspector.show_panel("Probe")
            panel = window.inspector.probe
            panel.reload()
            title = panel.feedback_title.text()
            assert "nothing contradicted it" not in title  # it said so before
            assert "called a tool at" in title and "above the horizon" in title
            what = [panel.feedback.item(r, 1).text() for r in range(panel.feedback.rowCount())]
            assert "followed above the horizon" in what

            gauge = window.inspection.gauge
            assert gauge is not None and gauge.request_tokens > gauge.horizon == 466
            label = window.status.gauge_label.text()
            assert " · over: " in label  # over 100 %, and the label says why
            assert "Over the horizon because" in window.status.gauge.toolTip()
            harness.screenshot("probe-above-horizon")


async def test_pause_keeps_the_probe_s_rungs_and_resume_continues_from_the_next(
    qtbot: Any, ledger_path: Path
) -> None:
    slow = {"realtime": True, "prefill_tps": 20_000.0, "decode_tps": 400.0}
    with OllamaDouble(instruction_horizon=6_000, search_requests=True, **slow) as double:
        double.add_model(MODEL, trained_window=TRAINED)
        async with open_harness(qtbot, ledger_path, double.url) as harness:
            window, models = harness.window, harness.window.tools.models
            await _bound(harness)
            rungs: list[int] = []
            models.probeProgress.connect(lambda _m, progress: rungs.append(progress.rung))
            assert models.probe(MODEL) is not None
            status = window.status
            await until(lambda: rungs and rungs[-1] >= 3, what="the third rung", within=30)
            assert status.probe_pause.isVisible()
            qtbot.mouseClick(status.probe_pause, Qt.MouseButton.LeftButton)
            await until(lambda: status.probe_resume.isVisible(), what="the paused state")
            paused = models.paused[MODEL]
            kept = paused.activity.detail["rungs"]
            assert len(kept) >= 2  # the rungs decided before Pause are kept
            assert status.probe_status.text() == f"probe of {MODEL} paused after {len(kept)} rungs"
            assert harness.ledger.profiles().latest("ollama", MODEL) is None  # not a result
            sent = sum(is_probe_body(b) for b in double.chat_bodies())
            harness.screenshot("probe-paused")

            qtbot.mouseClick(status.probe_resume, Qt.MouseButton.LeftButton)
            await until(
                lambda: harness.ledger.profiles().latest("ollama", MODEL) is not None,
                what="the resumed probe's result",
                within=60,
            )
            stored = harness.ledger.profiles().latest("ollama", MODEL)
            assert stored is not None
            assert stored.activity.detail["rungs"][: len(kept)] == kept  # continued, not redone
            resent = [b for b in double.chat_bodies() if is_probe_body(b)][sent:]
            first = resent[0]["messages"][0]["content"]
            opening = next(b for b in double.chat_bodies() if is_probe_body(b))
            # the same conversation (its nonce), so the runner's cache serves it
            assert first == opening["messages"][0]["content"]
            assert 0.85 * 6_000 <= stored.profile.instruction_horizon.tokens <= 6_000
            assert not status.probe_resume.isVisible()
