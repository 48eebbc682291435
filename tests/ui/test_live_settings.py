"""Settings apply without a restart: a new host, new workspace folders, new MCP servers; and a
chat can add a folder of its own (menu or drop), recorded in its ledger."""

from __future__ import annotations

import argparse
import asyncio
import gc
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from tests.doubles.ollama_server import OllamaDouble
from tests.ui.harness import open_harness, until
from vak_desktop.context.payloads import Activity
from vak_desktop.runtime.settings import McpServer
from vak_desktop.runtime.tools.workspace import WORKSPACE_ADDED, Workspace
from vak_desktop.ui.shell.live_settings import LiveSettings


@pytest.fixture(autouse=True)
def _collect_on_the_ui_thread() -> None:
    gc.collect()


async def test_a_new_host_and_new_folders_apply_at_once(
    double: OllamaDouble, qtbot: Any, ledger_path: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    with OllamaDouble() as other:
        other.add_model("gemma3:1b")
        other.add_model("llama3.2")
        async with open_harness(qtbot, ledger_path, double.url) as harness:
            window, service = harness.window, harness.service
            settings = window.tools.settings
            try:
                async with httpx.AsyncClient() as client:
                    live = LiveSettings(service, window.tools.models, settings, client)
                    old_tools = service.tools
                    applied = live.apply(
                        settings.settings.replace(
                            workspace=(str(folder),),
                            mcp_servers=(McpServer("gone", url="http://127.0.0.1:9/mcp"),),
                        )
                    )
                    assert applied == ["workspace folders and MCP servers"]
                    assert service.tools is not old_tools
                    assert all(r.tools is service.tools for r in service.providers.runners())
                    assert "mcp" in service.tools and "read" in service.tools
                    assert window.inspection.tools is service.tools

                    notices: list[str] = []
                    service.notice.connect(notices.append)
                    live.apply(settings.settings.replace(ollama_host=other.url))
                    await until(lambda: "gemma3:1b" in service.models, what="the new host")
                    assert service.host == other.url and service.model == "llama3.2:latest"
                    await until(lambda: window.tools.models.host == other.url, what="the manager")
                    assert "connected" in window.host_status.text()
                    await asyncio.sleep(0.3)  # anything the change set off has run
                    # a host change that succeeded says so, and nothing about the old model
                    assert not [n for n in notices if "not available" in n], notices
                    assert any(n.startswith("Settings applied") for n in notices), notices
                    await live.aclose()
            finally:
                await window.tools.aclose()


async def test_a_chat_adds_a_folder_of_its_own_by_drop_and_the_ledger_records_it(
    double: OllamaDouble, qtbot: Any, ledger_path: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.txt").write_text("the project's readme", encoding="utf-8")
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window, service = harness.window, harness.service
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(str(folder)), QUrl.fromLocalFile(str(tmp_path / "x"))])
        drop = QDropEvent(
            QPointF(10, 10),
            Qt.DropAction.CopyAction,
            mime,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
        )
        window.chat.dropEvent(drop)
        session = service.session
        assert session is not None  # a new chat is written to hold its folder
        added = [
            e.payload
            for e in harness.ledger.chain_to_root(session)
            if isinstance(e.payload, Activity) and e.payload.type == WORKSPACE_ADDED
        ]
        assert [a.detail["path"] for a in added] == [str(folder.resolve())]
        workspace = Workspace.of((), harness.ledger, session)
        assert workspace.resolve("README.txt", "read") == (folder / "README.txt").resolve()
        assert not window.add_chat_folder(str(tmp_path / "missing"))
        assert "not an existing folder" in window.statusBar().currentMessage()


async def test_a_host_changed_in_the_settings_dialog_to_one_with_the_model_says_no_more(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    """The app's whole wiring (`run_window`: the providers controller and the live settings
    both answer a save) with a chat on llama3.2, then the host changed in the dialog to a
    second loopback Ollama that has the same model: one "Settings applied" notice, none that
    says a model is not available, and the next turn goes to the new host."""
    from PySide6.QtWidgets import QApplication

    from tests.doubles.ollama_server import Reply
    from vak_desktop.app import run_window
    from vak_desktop.runtime.settings import Settings
    from vak_desktop.ui.settings.settings_controller import SettingsController
    from vak_desktop.ui.settings.settings_dialog import SettingsDialog
    from vak_desktop.ui.shell.main_window import MainWindow

    data = tmp_path / "data"
    data.mkdir()
    controller = SettingsController(data / "settings.toml")
    controller.save(Settings(ollama_host=double.url))
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    shown: list[MainWindow] = []
    args = argparse.Namespace(data_dir=str(data), host=None)
    app.setQuitOnLastWindowClosed(False)
    running = asyncio.ensure_future(run_window(app, args, controller, on_shown=shown.append))
    with OllamaDouble() as other:
        for name in ("llama3.2", "qwen2.5:0.5b"):
            other.add_model(name)
        try:
            await until(lambda: bool(shown), "the window", within=30)
            window = shown[0]
            service = window.service
            await until(lambda: "llama3.2:latest" in service.models, what="the first host")
            window.picker.choose("llama3.2:latest")
            await until(lambda: service.binding is not None, what="the binding")
            finished: list[Any] = []
            service.turnFinished.connect(finished.append)
            double.enqueue(Reply(text="Hello from the first host."))
            assert service.send("Hello")
            await until(lambda: finished, what="turn 1", within=20)
            notices: list[str] = []
            service.notice.connect(notices.append)
            dialog = SettingsDialog(controller, window)
            dialog.host.setText(other.url)
            assert dialog.save()
            await until(lambda: service.host == other.url, what="the new host")
            await until(lambda: service.binding is not None, what="the binding there")
            await asyncio.sleep(0.5)  # anything the change set off has run
            assert not [n for n in notices if "not available" in n], notices
            assert "not available" not in window.notice_line.text.text()
            assert [n for n in notices if n.startswith("Settings applied")], notices
            other.enqueue(Reply(text="Hello from the second host."))
            assert service.send("Again")
            await until(lambda: len(finished) == 2, what="turn 2", within=20)
            assert [f.outcome for f in finished] == ["completed", "completed"]
            assert other.chat_bodies()[-1]["model"] == "llama3.2:latest"  # the new host's
            assert not [n for n in notices if "not available" in n], notices
        finally:
            if shown:
                shown[0].close()
            await asyncio.wait_for(asyncio.shield(running), 20)
            app.setQuitOnLastWindowClosed(True)
