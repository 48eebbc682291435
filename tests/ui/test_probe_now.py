"""The window's "Probe now" measures with the prefix the chat's own turns carry (issue #17):
the same `TurnRunner.probe_prefix` as `vak probe` — the shown chat's system text, the tool
catalogue and the schemas the probe's request loads — never the synthetic `probe_ack` pair.

Against the loopback Ollama double in real time (it sleeps for prefill), so the manager's
progress line can be seen while the probe runs; screenshots go to /tmp/shots_probe_now.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.doubles.ollama_server import OllamaDouble
from tests.runtime.probe_doubles import is_probe_body
from tests.shots import shots_dir
from tests.ui.harness import open_harness, until
from vak_desktop.context.capacity.probe_history import MEMORY_REQUEST, PROBE_REQUEST, PROBE_TOOL
from vak_desktop.runtime import default_tools
from vak_desktop.runtime.tools import tool_surface

MODEL = "qwen2.5-coder:0.5b"
PROMPT = "You are Vak, a terse assistant for one person's files. Answer in one line."
SHOTS = shots_dir("shots_probe_now")


@pytest.fixture(autouse=True)
def _collect_on_the_ui_thread() -> None:
    gc.collect()


@pytest.fixture
def slow_double() -> Iterator[OllamaDouble]:
    with OllamaDouble(
        instruction_horizon=3_000, search_requests=True, realtime=True, prefill_tps=20_000.0
    ) as server:
        server.add_model(MODEL, trained_window=32_768)
        yield server


async def test_probe_now_sends_the_real_prefix_of_the_shown_chat(
    slow_double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, slow_double.url) as harness:
        window, tools, service = harness.window, harness.window.tools, harness.service
        try:
            window.picker.choose(MODEL)
            await until(lambda: service.binding is not None, what="the model binding")
            window.composer.input.setPlainText("hello")
            window.composer.send_button.click()
            await until(lambda: len(harness.finished) == 1, what="the first turn", within=10)
            assert service.set_system_prompt(PROMPT)  # the chat's own prompt from now on
            manager = tools.open_models()
            await until(lambda: manager.table.rowCount() == 1, what="the manager's rows")
            manager.table.selectRow(0)
            shots: list[str] = []

            def shoot(*_: object) -> None:  # the manager while it runs
                if not shots:
                    shots.append(manager.probe_status.text())
                    assert manager.grab().save(str(SHOTS / "probe_running_manager.png"))

            tools.models.probeProgress.connect(shoot)
            qtbot.mouseClick(manager.probe_button, Qt.MouseButton.LeftButton)
            line = window.status.probe_status  # and the window's status bar, laid out
            await until(lambda: line.isVisible() and line.width() >= 100, what="the probe line")
            assert line.text() == f"measuring {MODEL}… rung 1"
            assert window.grab().save(str(SHOTS / "probe_running_window.png"))
            await until(
                lambda: "Probe finished" in manager.probe_status.text(), what="the probe", within=30
            )
            await until(
                lambda: manager.table.item(0, 7).text() not in ("not measured", "measuring…"),
                what="the horizon",
            )
            assert manager.grab().save(str(SHOTS / "probe_finished_manager.png"))
            assert shots and shots[0].startswith("Probing: rung 1")
            probes = [b for b in slow_double.chat_bodies() if is_probe_body(b)]
            # what the chat's real turns carry: its prompt, the catalogue, the loaded schemas
            real = tool_surface(default_tools(), PROMPT, PROBE_REQUEST.format(token="x"))
            assert probes
            for body in probes:
                system = body["messages"][0]["content"]
                assert system.startswith("[probe ") and system.endswith(real.system)
                assert PROMPT in system
                names = [t["function"]["name"] for t in body["tools"]]
                assert names == [s.name for s in real.tools] and PROBE_TOOL not in names
                ask = body["messages"][-1]["content"]
                # the file-search task, or the answer-from-memory one (issue #22 item 5)
                assert ask.startswith(("Search my files for the order number", MEMORY_REQUEST))
            horizon = int(manager.table.item(0, 7).text().replace(",", ""))
            assert 0.85 * 3_000 <= horizon <= 3_000
            manager.close()
        finally:
            await tools.aclose()
