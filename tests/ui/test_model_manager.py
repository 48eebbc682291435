"""The model manager against the loopback Ollama double: pull with progress, cancel, delete with
confirmation, unload, keep_alive per model (sent on every request), probe now."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from tests.doubles.ollama_server import OllamaDouble
from tests.shots import shots_dir
from tests.ui.harness import until
from vak_desktop.ledger import Ledger
from vak_desktop.providers import open_provider
from vak_desktop.runtime.settings import load_settings
from vak_desktop.ui import ChatService
from vak_desktop.ui.models.model_manager import ModelManager, render_mid_pull
from vak_desktop.ui.models.models_controller import ModelsController
from vak_desktop.ui.settings.settings_dialog import SettingsController

PULLABLE = "qwen2.5:0.5b"
SHOTS = shots_dir("shots_uimodels")
LEFT = Qt.MouseButton.LeftButton


@pytest.fixture(autouse=True)
def _collect_on_the_ui_thread() -> None:
    """Free earlier tests' Qt garbage here, on the UI thread: collected on one of the
    double's threads, a widget with a running timer would leave Qt a dangling timer."""
    gc.collect()


@dataclass
class Manager:
    dialog: ModelManager
    controller: ModelsController
    settings: SettingsController
    client: httpx.AsyncClient
    ledger: Ledger


@asynccontextmanager
async def open_manager(qtbot: Any, tmp_path: Path, double: OllamaDouble) -> AsyncIterator[Manager]:
    ledger = Ledger.open(tmp_path / "ledger.sqlite3")
    settings = SettingsController(tmp_path / "settings.toml")
    try:
        async with httpx.AsyncClient() as client:
            controller = ModelsController(
                ledger, open_provider("ollama", client, double.url), settings
            )
            dialog = ModelManager(controller)  # deleted below, not by qtbot
            dialog.show()
            await controller.refresh()
            try:
                yield Manager(dialog, controller, settings, client, ledger)
            finally:
                await controller.aclose()
                shiboken6.delete(dialog)  # on this thread, not whichever thread collects it
    finally:
        ledger.close()


def _names(dialog: ModelManager) -> list[str]:
    return [dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())]


def _select(dialog: ModelManager, name: str) -> None:
    dialog.table.selectRow(_names(dialog).index(name))


async def test_pull_advances_the_bar_to_100_and_lists_the_model(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    double.pull_delay_per_line = 0.03
    double.add_pullable(PULLABLE, total=397_821_319, family="qwen2", parameter_size="494M")
    async with open_manager(qtbot, tmp_path, double) as m:
        panel = m.dialog.pull
        assert _names(m.dialog) == ["llama3.2:latest", "qwen2.5:0.5b"]
        double.models.pop("qwen2.5:0.5b")
        await m.controller.refresh()
        assert _names(m.dialog) == ["llama3.2:latest"]

        qtbot.keyClicks(panel.name, PULLABLE)
        qtbot.mouseClick(panel.pull_button, LEFT)
        assert panel.cancel_button.isVisible() and not panel.pull_button.isEnabled()
        await until(lambda: 0 < panel.bar.value() < 1000, what="an intermediate value")
        m.dialog.grab().save(str(SHOTS / "model_manager_pulling_live.png"))
        await until(lambda: not panel.bar.isVisible(), what="the pull to finish", within=10)

        assert panel.values[-1] == 1000
        middle = [v for v in panel.values if 0 < v < 1000]
        assert len(set(middle)) >= 3, panel.values
        assert panel.values == sorted(panel.values)
        assert "ready" in panel.status.text()
        await until(lambda: PULLABLE in _names(m.dialog), what="the pulled model in the table")
        row = _names(m.dialog).index(PULLABLE)
        assert m.dialog.table.item(row, 1).text() == "397.8 MB"
        assert m.dialog.table.item(row, 2).text() == "qwen2"


async def test_cancel_stops_the_pull(double: OllamaDouble, qtbot: Any, tmp_path: Path) -> None:
    double.pull_delay_per_line = 0.2
    double.add_pullable("llama3.2:1b", total=1_300_000_000)
    async with open_manager(qtbot, tmp_path, double) as m:
        panel = m.dialog.pull
        panel.name.setText("llama3.2:1b")
        panel.start()
        await until(lambda: panel.bar.value() > 0, what="the first bytes", within=10)
        qtbot.mouseClick(panel.cancel_button, LEFT)
        await until(lambda: not panel.bar.isVisible(), what="the pull to stop")
        assert "cancelled" in panel.status.text()
        assert panel.values[-1] < 1000
        assert panel.pull_button.isEnabled() and m.controller.pulling == ""


async def test_a_bad_name_is_refused_inline_and_an_unknown_one_reported(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    async with open_manager(qtbot, tmp_path, double) as m:
        panel = m.dialog.pull
        panel.name.setText("not a name")
        panel.start()
        assert panel.error.isVisible() and "is not a model name" in panel.error.text()
        assert panel.name.text() == "not a name"  # nothing lost
        panel.name.setText("nosuch:7b")
        panel.start()
        await until(lambda: panel.error.isVisible(), what="the failure")
        assert "nosuch:7b" in panel.error.text() and "not available" in panel.error.text()


async def test_delete_asks_first_and_removes_the_model(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    async with open_manager(qtbot, tmp_path, double) as m:
        _select(m.dialog, "qwen2.5:0.5b")
        box = m.dialog.ask_delete()
        assert box is not None and "qwen2.5:0.5b" in box.text()
        box.button(QMessageBox.StandardButton.Cancel).click()
        assert not any(p == "/api/delete" for _, p, _ in double.requests)

        _select(m.dialog, "qwen2.5:0.5b")
        box = m.dialog.ask_delete()
        assert box is not None
        delete = next(b for b in box.buttons() if b.text() == "Delete")
        delete.click()
        await until(lambda: _names(m.dialog) == ["llama3.2:latest"], what="the row to go")
        assert ("DELETE", "/api/delete", {"model": "qwen2.5:0.5b"}) in double.requests


async def test_unload_calls_the_api_and_the_table_shows_it(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    async with open_manager(qtbot, tmp_path, double) as m:
        load = {"model": "llama3.2", "messages": [], "keep_alive": "10m"}
        (await m.client.post(double.url + "/api/chat", json=load)).raise_for_status()
        await m.controller.refresh()
        _select(m.dialog, "llama3.2:latest")
        assert m.dialog.table.item(0, 6).text().startswith("until ")
        assert "(in 10 min)" in m.dialog.table.item(0, 6).text()
        assert m.dialog.unload_button.isEnabled()
        qtbot.mouseClick(m.dialog.unload_button, LEFT)
        await until(lambda: m.dialog.table.item(0, 6).text() == "", what="the model unloaded")
        body = double.chat_bodies()[-1]
        assert (body["model"], body["keep_alive"]) == ("llama3.2:latest", 0)
        assert not m.dialog.unload_button.isEnabled()


async def test_keep_alive_per_model_is_saved_and_sent_on_every_request(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    async with open_manager(qtbot, tmp_path, double) as m:
        _select(m.dialog, "qwen2.5:0.5b")
        combo = m.dialog.keep_alive
        assert combo.currentText() == "default (30m)"
        combo.setCurrentIndex(combo.findData("-1"))
        combo.activated.emit(combo.currentIndex())
        assert load_settings(m.settings.path).model_keep_alive == {"qwen2.5:0.5b": "-1"}
        combo.setEditText("ten minutes")
        combo.lineEdit().returnPressed.emit()
        assert m.dialog.message.isVisible() and "not a duration" in m.dialog.message.text()
        assert load_settings(m.settings.path).model_keep_alive == {"qwen2.5:0.5b": "-1"}

        service = ChatService(
            m.ledger, m.controller.service.provider, keep_alive=m.settings.keep_alive_for
        )
        try:
            for model, sent in (("qwen2.5:0.5b", -1), ("llama3.2:latest", "30m")):
                service.select_model(model)
                finished: list[Any] = []
                service.turnFinished.connect(finished.append)
                assert service.send(f"hello {model}")
                await until(lambda: finished, what="the turn")  # noqa: B023
                body = double.chat_bodies()[-1]
                assert (body["model"], body["keep_alive"]) == (model, sent)
                service.new_session()
        finally:
            await service.aclose()


async def test_probe_now_shows_progress_and_the_measured_profile(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    double.instruction_horizon = 2_500
    async with open_manager(qtbot, tmp_path, double) as m:
        _select(m.dialog, "llama3.2:latest")
        assert m.dialog.table.item(0, 7).text() == "not measured"
        seen: list[str] = []
        m.controller.probeProgress.connect(lambda *_: seen.append(m.dialog.probe_status.text()))
        qtbot.mouseClick(m.dialog.probe_button, LEFT)
        await until(
            lambda: "Probe finished" in m.dialog.probe_status.text(), what="the probe", within=20
        )
        assert seen and seen[0].startswith("Probing: rung 1")
        await until(
            lambda: m.dialog.table.item(0, 7).text() not in ("not measured", "measuring…"),
            what="the horizon",
        )
        horizon = int(m.dialog.table.item(0, 7).text().replace(",", ""))
        assert 0 < horizon <= 2_500
        labels = [
            m.dialog.profile_form.itemAt(i * 2).widget().text()
            for i in range(m.dialog.profile_form.rowCount())
        ]
        assert "Instruction horizon" in labels and "Prefill" in labels


async def test_screenshots_mid_pull_light_and_dark(
    double: OllamaDouble, qtbot: Any, tmp_path: Path, qapp: Any
) -> None:
    from vak_desktop.ui.parts.theme import apply_theme

    double.instruction_horizon = 6_000
    async with open_manager(qtbot, tmp_path, double) as m:
        await m.controller.service.probe("llama3.2:latest", keep_alive="30m")
        await m.controller.refresh()
        _select(m.dialog, "llama3.2:latest")
        for theme in ("light", "dark"):
            apply_theme(qapp, theme)
            render_mid_pull(m.dialog)
            assert m.dialog.pull.bar.value() == 419
            assert m.dialog.grab().save(str(SHOTS / f"model_manager_mid_pull_{theme}.png"))
        apply_theme(qapp, "light")


def unnamed_controls(root: Any) -> list[str]:
    """Controls under `root` a screen reader could not name (no accessible name, no text)."""
    from PySide6.QtWidgets import (
        QAbstractButton,
        QComboBox,
        QLineEdit,
        QProgressBar,
        QTableWidget,
        QWidget,
    )

    kinds = (QAbstractButton, QComboBox, QLineEdit, QProgressBar, QTableWidget)
    missing = []
    for widget in root.findChildren(QWidget):
        if not isinstance(widget, kinds) or widget.objectName().startswith("qt_"):
            continue  # Qt's own parts (a table's corner button …) are not ours to name
        if isinstance(widget, QLineEdit) and isinstance(widget.parent(), QComboBox):
            continue  # a combo box's own editor: the combo box carries the name
        text = widget.text() if isinstance(widget, QAbstractButton) else ""
        if not (widget.accessibleName() or text.strip()):
            missing.append(f"{type(widget).__name__} {widget.objectName()!r}")
    return missing


async def test_every_control_has_an_accessible_name(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    async with open_manager(qtbot, tmp_path, double) as m:
        assert unnamed_controls(m.dialog) == []


async def test_enter_in_the_pull_field_pulls_and_cancel_stops_it(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    """Enter in the name field once clicked the dialog's default button too: the Cancel button
    the pull had just shown, which cancelled the task before it ran, so no /api/pull went out
    and the panel said 'asking for the manifest…' for good."""
    double.pull_delay_per_line = 0.2
    double.add_pullable("llama3.2:1b", total=1_300_000_000)
    async with open_manager(qtbot, tmp_path, double) as m:
        panel = m.dialog.pull
        panel.name.setFocus()
        panel.name.setText("llama3.2:1b")
        qtbot.keyClick(panel.name, Qt.Key.Key_Return)
        await until(lambda: panel.bar.value() > 0, what="the first bytes", within=10)
        assert any(p == "/api/pull" for _, p, _ in double.requests)
        qtbot.mouseClick(panel.cancel_button, LEFT)
        await until(lambda: not panel.bar.isVisible(), what="the pull to stop")
        assert "cancelled" in panel.status.text() and m.controller.pulling == ""


async def test_a_pull_cancelled_before_it_ran_still_finishes(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    async with open_manager(qtbot, tmp_path, double) as m:
        finished: list[tuple[str, str, str]] = []
        m.controller.pullFinished.connect(lambda *args: finished.append(args))
        assert m.controller.pull("llama3.2:1b") is not None
        assert m.controller.cancel_pull()  # before the task's first step
        await until(lambda: bool(finished), what="the pull to report its end")
        assert finished[0][1] == "cancelled" and m.controller.pulling == ""
        assert m.controller.pull("llama3.2:1b") is not None  # not stuck: a new pull starts
        m.controller.cancel_pull()


async def test_the_ready_line_goes_when_its_model_is_deleted(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    double.add_pullable(PULLABLE, total=397_821_319)
    double.models.pop(PULLABLE)
    async with open_manager(qtbot, tmp_path, double) as m:
        panel = m.dialog.pull
        panel.name.setText(PULLABLE)
        panel.start()
        await until(lambda: PULLABLE in _names(m.dialog), what="the pulled model", within=10)
        assert panel.status.text() == f"✓ {PULLABLE} is ready to chat with."
        _select(m.dialog, PULLABLE)
        box = m.dialog.ask_delete()
        assert box is not None
        next(b for b in box.buttons() if b.text() == "Delete").click()
        await until(lambda: PULLABLE not in _names(m.dialog), what="the row to go")
        assert "ready" not in panel.status.text()
        assert not panel.status.isVisible()
