"""The screenshots of issue 25's "the window tells the truth", taken by tools/screenshot.py on
its open window after the per-theme shots, before the server is stopped:

    live-dark-after-light.png   the open chat right after a live switch from light to dark
    live-light-after-dark.png   … and straight back to light
    focus-ring-dark.png         New chat reached by Tab, in dark
    output-cap-notice-dark.png  an answer stopped by the 512-token output cap, and its notice
    probe-undecided-dark.png    the Probe tab of a model whose probe confirmed no rung

The undecided probe is a real probe against a second loopback Ollama double whose model follows
the instruction at no size; its profile is stored for the model the window then picks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.doubles.ollama_server import OllamaDouble, Reply
from vak_desktop.providers import open_provider
from vak_desktop.runtime import run_probe
from vak_desktop.ui import ChatService, MainWindow, apply_theme

OUTPUT_CAPPED = "A long answer that keeps going and going. " * 120  # ~1,300 tokens > 512
UNDECIDED_MODEL = "qwen2.5:0.5b"


async def _until(condition: Callable[[], Any], within: float = 20.0) -> None:
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 (a widget's state has no event to await)
            await asyncio.sleep(0.01)


async def _save(window: MainWindow, out: Path, name: str) -> None:
    await asyncio.sleep(0.1)  # layouts and paints settle on the loop
    path = out / f"{name}.png"
    window.grab().save(str(path))
    print(f"wrote {path}")


async def shoot_truth(
    window: MainWindow, service: ChatService, double: OllamaDouble, out: Path, model: str
) -> None:
    """Take the five shots; leave the window in dark with `model` picked again."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    session = next(s.id for s in window.ledger.sessions() if s.title.startswith("Summarise"))
    window.toggle_inspector(False)
    window.resize(1180, 780)
    apply_theme(app, "light")
    service.open_session(session)
    await asyncio.sleep(0.1)
    apply_theme(app, "dark")  # live, with the chat open
    await _save(window, out, "live-dark-after-light")
    apply_theme(app, "light")
    await _save(window, out, "live-light-after-dark")
    apply_theme(app, "dark")

    window.activateWindow()
    window.composer.input.setFocus()
    window.sessions.new_chat.setFocus(Qt.FocusReason.TabFocusReason)
    await _save(window, out, "focus-ring-dark")

    finished: list[object] = []
    service.turnFinished.connect(finished.append)
    try:
        service.new_session()
        double.enqueue(Reply(text=OUTPUT_CAPPED))
        window.composer.input.setPlainText("Tell me everything about the release, at length.")
        window.composer.send_button.click()
        await _until(lambda: finished and window.notice_line.isVisible())
        await _save(window, out, "output-cap-notice-dark")
    finally:
        service.turnFinished.disconnect(finished.append)

    with OllamaDouble(instruction_horizon=0) as never:  # it follows at no size
        never.add_model(UNDECIDED_MODEL, trained_window=32_768)
        async with httpx.AsyncClient() as client:
            record = await run_probe(open_provider("ollama", client, never.url), UNDECIDED_MODEL)
    window.ledger.profiles().record(record.profile, record.activity)
    window.picker.choose(UNDECIDED_MODEL)
    await _until(lambda: service.binding is not None and service.binding.model == UNDECIDED_MODEL)
    window.resize(1480, 900)
    window.toggle_inspector(True)
    window.inspector.show_panel("Probe")
    window.inspection.refresh()
    await _until(lambda: window.inspector.probe.state == "undecided")
    await _save(window, out, "probe-undecided-dark")
    window.toggle_inspector(False)
    window.picker.choose(model)
    await _until(lambda: service.binding is not None and service.binding.model == model)
