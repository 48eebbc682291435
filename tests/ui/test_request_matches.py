"""The inspector's Request tab rebuilds every step of a chat as it went out and says "matches
the receipt", after each thing that changes the stable prefix (#25 item 1): a system-prompt
preset, a tool the model loaded with find_tools, a profile change (another model mid-chat, a
probe that measured it small), a reset. The probe itself is in test_inspector.py; a switch to
another provider in test_providers.py. Real turns against the loopback Ollama double."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.ui.harness import Harness, open_harness, until
from vak_desktop.context.payloads import Receipt, Reset
from vak_desktop.providers import open_provider
from vak_desktop.runtime import run_probe
from vak_desktop.ui.inspector import NEXT
from vak_desktop.ui.shell.main_window import MainWindow

MATCHES = "✓ Rebuilt from the ledger; matches the receipt"
MODEL = "llama3.2:latest"
OTHER = "qwen2.5:0.5b"


def every_step_matches(window: MainWindow, session: str) -> int:
    """Open the Request tab on every step of every turn of `session`; each must say it matches
    the receipt. Returns how many steps were checked."""
    window.toggle_inspector(True)
    window.inspector.show_panel("Request")
    panel = window.inspector.request
    checked = 0
    for turn in window.service.turns(session):
        window.inspector.select_turn(turn.turn_id)
        for index in range(panel.step.count()):
            panel.step.setCurrentIndex(index)
            sent = panel.sent
            where = f"turn {turn.turn_id}, step {index + 1}: {panel.status.text()}"
            assert sent is not None and sent.matches, where
            assert panel.status.text().startswith(MATCHES), where
            checked += 1
    window.inspector.select_turn(NEXT)
    return checked


def _receipts(harness: Harness, session: str) -> list[Receipt]:
    chain = harness.ledger.chain_to_root(session)
    return [e.payload for e in chain if isinstance(e.payload, Receipt)]


async def _bound(harness: Harness, model: str = MODEL) -> None:
    harness.window.picker.choose(model)
    await until(lambda: harness.service.binding is not None, what="the model binding")
    await until(lambda: harness.service.binding.model == model, what=f"{model} bound")


async def _turn(harness: Harness, text: str) -> None:
    count = len(harness.finished)
    harness.window.composer.input.setPlainText(text)
    harness.window.composer.send_button.click()
    await until(lambda: len(harness.finished) > count, what=f"the turn {text!r}", within=15)


def _session(harness: Harness) -> str:
    session = harness.service.session
    assert session is not None
    return session


async def test_after_a_system_prompt_preset_every_step_matches(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        await _bound(harness)
        await _turn(harness, "first, with the built-in prompt")
        dialog = harness.window.edit_system_prompt()
        dialog.editor.setPlainText("You are a terse reviewer. Answer in one sentence.")
        assert dialog.use()
        await _turn(harness, "second, with the preset")
        session = _session(harness)
        first, second = (r.system_digest for r in _receipts(harness, session))
        assert first != second  # the prefix changed
        assert every_step_matches(harness.window, session) == 2


async def test_after_a_tool_loaded_by_find_tools_every_step_matches(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        await _bound(harness)
        await _turn(harness, "hello")
        double.enqueue(
            Reply(tool_calls=[("find_tools", {"query": "emit_metric_card"})]),
            Reply(text="The metric card tool is loaded now."),
        )
        await _turn(harness, "show one number as a metric card")
        await _turn(harness, "and again")
        session = _session(harness)
        receipts = _receipts(harness, session)
        assert len(receipts) == 4  # turn 2 had two steps
        assert len(receipts[2].tool_digests) > len(receipts[1].tool_digests)  # loaded
        assert every_step_matches(harness.window, session) == 4


async def test_after_another_model_mid_chat_every_step_matches(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    """A second model in the same chat has a profile of its own (measured small here, so its
    turns send the compact surface)."""
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        await _bound(harness)
        await _turn(harness, "first, on the large model")
        async with httpx.AsyncClient() as client:
            record = await run_probe(open_provider("ollama", client, double.url), OTHER, nonce="m")
        harness.ledger.profiles().record(record.profile, record.activity)
        await _bound(harness, OTHER)
        await _turn(harness, "second, on the measured one")
        session = _session(harness)
        assert [r.model for r in _receipts(harness, session)] == [MODEL, OTHER]
        assert every_step_matches(harness.window, session) == 2


@pytest.fixture
def small_double() -> Iterator[OllamaDouble]:
    with OllamaDouble(instruction_horizon=3_000) as server:
        server.add_model(MODEL, trained_window=32_768)
        yield server


async def test_after_a_reset_every_step_matches(
    small_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    answer = "This paragraph explains one more aspect of the topic in some detail. " * 40
    async with open_harness(qtbot, ledger_path, small_double.url) as harness:
        async with httpx.AsyncClient() as client:
            provider = open_provider("ollama", client, small_double.url)
            record = await run_probe(provider, MODEL, nonce="r")
        harness.ledger.profiles().record(record.profile, record.activity)
        await _bound(harness)
        small_double.enqueue(*(Reply(text=answer) for _ in range(3)))
        await _turn(harness, "Tell me about the engine. " * 30)
        await _turn(harness, "Tell me more about the planner. " * 30)
        await _turn(harness, "Now everything about the assembler, in order. " * 140)
        session = _session(harness)
        chain = harness.ledger.chain_to_root(session)
        assert any(isinstance(e.payload, Reset) for e in chain), "no reset was written"
        assert every_step_matches(harness.window, session) == len(_receipts(harness, session))
