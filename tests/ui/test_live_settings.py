"""Settings apply without a restart: a new host, new workspace folders, new MCP servers; and a
chat can add a folder of its own (menu or drop), recorded in its ledger."""

from __future__ import annotations

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
