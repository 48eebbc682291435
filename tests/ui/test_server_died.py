"""A server that dies in the middle of an answer: the chat says so in words (not the transport's),
the window does not turn into a first install, the picker keeps the model, and the status bar
stops saying "connected"."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.runtime.mcp_servers import free_port
from tests.shots import shots_dir
from tests.ui.harness import open_harness, until

ANSWER = "The first words arrive, and then the server goes away " * 8


@pytest.fixture(autouse=True)
def _collect_on_the_ui_thread() -> None:
    gc.collect()


async def test_a_server_that_dies_mid_answer_is_said_plainly_and_the_window_keeps_its_state(
    qtbot: Any, ledger_path: Path
) -> None:
    port = free_port()
    double = OllamaDouble(port=port).start()
    try:
        double.add_model("llama3.2")
        async with open_harness(qtbot, ledger_path, double.url) as harness:
            window, tools = harness.window, harness.window.tools
            try:
                window.picker.choose("llama3.2:latest")
                await until(lambda: harness.service.binding is not None, what="the binding")
                assert "connected" in window.host_status.text()
                double.enqueue(Reply(text=ANSWER, chunk_chars=6, delay_per_chunk=0.02))
                window.composer.input.setPlainText("Tell me a long story")
                window.composer.send_button.click()
                await until(lambda: "first words" in harness.chat_text(), what="a first chunk")
                double.close()
                await until(lambda: harness.finished, what="the failed turn")
                assert harness.service.reachability.state != "reachable"  # asked again at once
                await until(
                    lambda: "not reachable" in window.host_status.text(), what="the status bar"
                )
                window.grab().save(str(shots_dir("dsk") / "server_died.png"))
                text = harness.chat_text()
                assert harness.finished[0].outcome == "failed"
                assert "stopped answering" in text and "kept" in text, text
                assert "incomplete chunked read" not in text
                assert "not reachable" in window.host_status.text()
                assert not tools.onboarding.isVisible()  # not a first install
                assert window.picker.combo.currentText() == "llama3.2:latest"
                assert harness.service.model == "llama3.2:latest"
            finally:
                await tools.aclose()
    finally:
        double.close()
