"""The inspector and the context gauge, over real turns against the loopback Ollama double and a
profile the real capacity probe measured on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.context.sessions import SessionBuilder, TurnScript
from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.ui.harness import Harness, open_harness, until
from vak_desktop.context.capacity.probe import PROBE_ACTIVITY
from vak_desktop.context.evidence.windows import select_lines
from vak_desktop.context.payloads import Activity, EvidenceBody, Receipt
from vak_desktop.ledger import Ledger
from vak_desktop.providers import open_provider
from vak_desktop.runtime import run_probe
from vak_desktop.runtime.events import StepFinished
from vak_desktop.ui.inspector import NEXT
from vak_desktop.ui.shell.status import gauge_text

MODEL = "llama3.2:latest"
HORIZON = 5_000  # the double follows the probe's instruction up to here
ANSWER = "This paragraph explains one more aspect of the topic in some detail. " * 70


@pytest.fixture
def small_double() -> Iterator[OllamaDouble]:
    with OllamaDouble(instruction_horizon=HORIZON) as server:
        server.add_model(MODEL, trained_window=32_768)
        yield server


async def _probe_into(ledger_path: Path, url: str) -> None:
    """Measure the model with the real probe and keep the result where the window reads it."""
    async with httpx.AsyncClient() as client:
        record = await run_probe(open_provider("ollama", client, url), MODEL, nonce="ui")
    ledger = Ledger.open(ledger_path)
    try:
        ledger.profiles().record(record.profile, record.activity)
    finally:
        ledger.close()


async def _bound(harness: Harness) -> None:
    harness.window.picker.choose(MODEL)
    await until(lambda: harness.service.binding is not None, what="the model binding")


async def _send(harness: Harness, text: str, turns: int) -> None:
    window = harness.window
    window.composer.input.setPlainText(text)
    window.composer.send_button.click()
    await until(lambda: len(harness.finished) == turns, what=f"turn {turns}", within=10)


def _receipt_plans(harness: Harness, session: str) -> list[dict[str, Any]]:
    return [
        e.payload.plan
        for e in harness.ledger.chain_to_root(session)
        if isinstance(e.payload, Receipt) and "budget" in e.payload.plan
    ]


async def test_the_plan_panel_lists_every_turn_with_the_fidelity_the_planner_chose(
    small_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    await _probe_into(ledger_path, small_double.url)
    async with open_harness(qtbot, ledger_path, small_double.url) as harness:
        window = harness.window
        await _bound(harness)
        half = ANSWER[: len(ANSWER) // 2]  # the last turns fit whole, the earlier ones as cards
        small_double.enqueue(*[Reply(text=f"Answer {n}. {half}") for n in range(6)])
        for n in range(6):
            await _send(harness, f"Question {n} about the topic", n + 1)
        session = harness.service.session
        assert session is not None
        window.toggle_inspector(True)
        window.inspector.show_panel("Plan")
        plans = _receipt_plans(harness, session)
        turn_ids = [t.turn_id for t in harness.service.turns(session)]

        for turn_id, plan in zip(turn_ids, plans, strict=True):
            window.inspector.select_turn(turn_id)
            shown = window.inspector.plan.fidelities()
            assert shown == [(t["turn_id"], t["fidelity"]) for t in plan["turns"]]
            table = window.inspector.plan.table
            assert table.rowCount() == len(plan["turns"]) == turn_ids.index(turn_id)
            for row, planned in enumerate(plan["turns"]):
                assert table.item(row, 2).text().lower().replace(" ", "_") == planned["fidelity"]
                assert table.item(row, 4).data(256) == planned["tokens"]  # Qt.UserRole
        last = plans[-1]
        assert {t["fidelity"] for t in last["turns"]} >= {"full", "card"}  # a real choice
        arithmetic = window.inspector.plan.arithmetic.text()
        budget = last["budget"]
        assert f"{budget['horizon']:,}" in arithmetic and f"{budget['available']:,}" in arithmetic
        assert "horizon" in arithmetic and "output reserve" in arithmetic

        window.inspector.select_turn(NEXT)  # the preview `vak plan` would show
        preview = window.inspector.plan.view
        assert preview is not None and not preview.measured
        assert len(preview.plan["turns"]) == 6


async def test_a_streamed_turn_updates_the_gauge_from_its_receipt(
    small_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    await _probe_into(ledger_path, small_double.url)
    async with open_harness(qtbot, ledger_path, small_double.url) as harness:
        window = harness.window
        await _bound(harness)
        assert "(measured)" in window.model_status.text()
        steps: list[StepFinished] = []
        harness.service.stepFinished.connect(steps.append)
        small_double.enqueue(Reply(text=ANSWER, chunk_chars=40, delay_per_chunk=0.002))
        await _send(harness, "First question", 1)
        small_double.enqueue(Reply(text="Short second answer."))
        seen: list[str] = []
        harness.service.stepFinished.connect(
            lambda _e: seen.append(window.status.gauge_label.text())
        )
        await _send(harness, "Second question", 2)

        receipt = steps[-1].receipt
        gauge = window.inspection.gauge
        assert gauge is not None and gauge.measured
        assert gauge.request_tokens == receipt.usage.prompt_tokens() > 0
        assert gauge.horizon == receipt.plan["budget"]["horizon"]
        assert window.status.gauge.value() == receipt.usage.prompt_tokens()
        assert seen and gauge_text(gauge) in seen[-1]
        fidelities = [t["fidelity"] for t in receipt.plan["turns"]]
        assert f"{fidelities.count('full')} Full" in seen[-1]
        assert window.status.gauge.isVisibleTo(window)


async def test_request_panel_shows_what_the_model_received_with_prefix_and_tail(
    small_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, small_double.url) as harness:
        window = harness.window
        await _bound(harness)
        small_double.enqueue(
            Reply(text="The first answer."),
            Reply(tool_calls=[("recall", {"turn": 1})]),
            Reply(text="Turn one said: the first answer."),
        )
        await _send(harness, "Say something", 1)
        await _send(harness, "What did turn 1 say?", 2)
        session = harness.service.session
        assert session is not None
        turns = harness.service.turns(session)
        window.toggle_inspector(True)
        window.inspector.show_panel("Request")
        window.inspector.select_turn(turns[1].turn_id)
        panel = window.inspector.request
        assert panel.step.count() == 2
        bodies = small_double.chat_bodies()
        for index, body in zip(range(2), bodies[1:], strict=True):
            panel.step.setCurrentIndex(index)
            panel.step.activated.emit(index)
            sent = panel.sent
            assert sent is not None and sent.matches
            assert [m.content for m in sent.request.messages] == [
                m.get("content", "") for m in body["messages"]
            ]
        assert panel.status.text().startswith("✓")
        html = panel.body.toPlainText()
        assert "Stable prefix" in html and "Tail (this turn only" in html
        assert "What did turn 1 say?" in html and "recall" in html
        assert sent.receipt.prefix_digest in panel.digest.toolTip()  # the label shows its start

        window.inspector.select_turn(NEXT)  # what sending now would carry, not yet sent
        assert panel.sent is None and panel.status.text().startswith("Not sent yet")
        preview = panel.body.toPlainText()
        assert "the next turn" in preview and "What did turn 1 say?" in preview
        assert sent.receipt.prefix_digest in panel.digest.toolTip()  # same tools, same prefix


async def test_evidence_panel_shows_carried_full_and_recalled_lines(
    small_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, small_double.url) as harness:
        window = harness.window
        await _bound(harness)
        small_double.enqueue(
            Reply(text="Line one.\nLine two.\nLine three."),
            Reply(tool_calls=[("recall", {"turn": 1})]),
            Reply(text="Done."),
            Reply(text="Third."),
        )
        for n, text in enumerate(("First", "Recall turn 1", "Thanks"), start=1):
            await _send(harness, text, n)
        window.toggle_inspector(True)
        window.inspector.show_panel("Evidence")
        panel = window.inspector.evidence
        assert panel.table.rowCount() == 1
        assert panel.table.item(0, 1).text() == "recall turn=1"
        item = panel.items[0]
        assert item.body is not None
        body = harness.ledger.entry(item.result.evidence).payload
        assert isinstance(body, EvidenceBody) and panel.full.toPlainText() == body.content
        assert panel.carried.toPlainText() == item.result.content
        assert "[evidence:" in panel.digest.toPlainText()  # the closed turn's digest
        panel.first.setValue(2)
        panel.last.setValue(3)
        panel.recall_button.click()
        assert panel.recalled.toPlainText().endswith(select_lines(body.content, 2, 3))


async def test_probe_panel_shows_every_rung_of_the_probe_that_measured_the_model(
    small_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    await _probe_into(ledger_path, small_double.url)
    async with open_harness(qtbot, ledger_path, small_double.url) as harness:
        window = harness.window
        await _bound(harness)
        window.toggle_inspector(True)
        window.inspector.show_panel("Probe")
        panel = window.inspector.probe
        stored = harness.ledger.profiles().latest("ollama", MODEL)
        assert stored is not None and isinstance(stored.activity, Activity)
        assert stored.activity.type == PROBE_ACTIVITY
        rungs = stored.activity.detail["rungs"]
        assert panel.rungs.rowCount() == len(rungs) > 3
        for row, rung in enumerate(rungs):
            assert panel.rungs.item(row, 2).text() == f"{rung['tokens']:,}"
            verdict = "followed" if rung["followed"] else "not followed"
            assert panel.rungs.item(row, 5).text() == verdict
        horizon = stored.profile.instruction_horizon.tokens
        assert f"{horizon:,} tokens" in panel.facts["horizon"].text()
        assert "measured by the capacity probe" in panel.heading.text()
        assert f"{stored.activity.detail['requests']} requests" in panel.facts["cost"].text()


async def test_the_plan_preview_of_a_long_chat_names_the_packet_range_it_covers(
    small_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    await _probe_into(ledger_path, small_double.url)
    ledger = Ledger.open(ledger_path)
    try:
        builder = SessionBuilder(ledger)
        for n in range(100):
            builder.turn(TurnScript(directive=f"Step {n} of the migration?", answer=ANSWER[:600]))
        session = builder.session
    finally:
        ledger.close()
    async with open_harness(qtbot, ledger_path, small_double.url) as harness:
        window = harness.window
        await _bound(harness)
        harness.service.open_session(session)
        window.toggle_inspector(True)
        window.inspector.show_panel("Plan")
        window.inspector.select_turn(NEXT)
        panel = window.inspector.plan
        assert panel.view is not None and len(panel.view.plan["turns"]) == 100
        rows = [panel.table.item(r, 2).text() for r in range(panel.table.rowCount())]
        packeted = [r + 1 for r, fidelity in enumerate(rows) if fidelity == "Packet"]
        assert packeted and packeted == list(range(1, len(packeted) + 1))  # the oldest turns
        assert "Card" in rows
        assert panel.packet.text().startswith(f"Packet: turns 1–{packeted[-1]},")
        gauge = window.inspection.gauge
        assert gauge is not None and not gauge.measured and gauge.packet == len(packeted)
        assert window.status.gauge_label.text().startswith("≈")


async def test_the_request_tab_matches_the_receipt_after_the_model_is_measured(
    small_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    """Turn 1 goes out before any probe (the full surface); the probe then measures a small
    model, so turn 2 sends the compact surface. The Request tab rebuilds each turn exactly as
    it went out and says it matches the receipt (#25 item 1)."""
    async with open_harness(qtbot, ledger_path, small_double.url) as harness:
        window = harness.window
        await _bound(harness)
        small_double.enqueue(Reply(text="The first answer."), Reply(text="The second answer."))
        await _send(harness, "Say something", 1)
        async with httpx.AsyncClient() as client:
            provider = open_provider("ollama", client, small_double.url)
            record = await run_probe(provider, MODEL, nonce="ui")
        harness.ledger.profiles().record(record.profile, record.activity)
        await _send(harness, "Say something else", 2)
        session = harness.service.session
        assert session is not None
        bodies = [
            b
            for b in small_double.chat_bodies()
            if not b["messages"][0]["content"].startswith("[probe")  # the probe's own
        ]
        first, second = bodies[-2]["messages"][0], bodies[-1]["messages"][0]
        assert first["content"] != second["content"], "the probe changed the surface"
        window.toggle_inspector(True)
        window.inspector.show_panel("Request")
        panel = window.inspector.request
        for turn, body in zip(harness.service.turns(session), bodies[-2:], strict=True):
            window.inspector.select_turn(turn.turn_id)
            sent = panel.sent
            assert sent is not None and sent.matches, panel.status.text()
            assert panel.status.text().startswith("✓ Rebuilt from the ledger; matches the receipt")
            assert sent.request.messages[0].content == body["messages"][0]["content"]
        window.resize(1500, 900)
        harness.screenshot("request-after-probe")
