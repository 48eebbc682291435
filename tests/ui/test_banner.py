"""The banner that says Ollama is down, and goes away once Retry reaches it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from tests.doubles.ollama_server import OllamaDouble
from tests.ui.harness import MODELS, open_harness, until
from vak_desktop.ledger import Ledger


async def test_an_unreachable_host_shows_how_to_start_ollama_and_retry_hides_it(
    qtbot: Any, ledger_path: Path
) -> None:
    with OllamaDouble() as gone:
        port = int(gone.url.rsplit(":", 1)[1])
    earlier = Ledger.open(ledger_path)  # a user who has chatted before: on a first run the
    earlier.create_session("earlier")  # onboarding offers the model catalogue instead
    earlier.close()
    async with open_harness(qtbot, ledger_path, f"http://127.0.0.1:{port}") as harness:
        window = harness.window
        assert window.banner.isVisible()
        message = window.banner.message.text()
        assert f"http://127.0.0.1:{port}" in message
        assert "ollama serve" in message and "OLLAMA_HOST" in message
        assert window.picker.combo.count() == 0
        window.composer.input.setPlainText("hello?")
        assert not window.composer.send_button.isEnabled()
        harness.screenshot("ollama_down")

        with OllamaDouble(port=port) as back:
            for name in MODELS:
                back.add_model(name)
            qtbot.mouseClick(window.banner.retry, Qt.MouseButton.LeftButton)
            await until(lambda: not window.banner.isVisible(), what="the banner to hide")
            await until(lambda: window.picker.combo.count() == len(MODELS), what="models")
            assert window.composer.send_button.isEnabled()
