"""Onboarding in the real window: shown while Ollama is down, re-checking on its own; then an
offer to pull a first model when Ollama has none; hidden once a model is there. Also the Tools
menu hook: Models… and Settings… open their dialogs."""

from __future__ import annotations

import gc
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.context.sessions import SessionBuilder, TurnScript
from tests.doubles.ollama_server import OllamaDouble
from tests.shots import shots_dir
from tests.ui.harness import open_harness, until
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.providers.models import SUGGESTED_MODEL
from vak_desktop.ui.chat.chat_service import CHECKING
from vak_desktop.ui.shell.onboarding import install_steps

SHOTS = shots_dir("shots_uimodels")


@pytest.fixture(autouse=True)
def _collect_on_the_ui_thread() -> None:
    """Free earlier tests' Qt garbage here, on the UI thread (see test_model_manager.py)."""
    gc.collect()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_onboarding_shows_while_ollama_is_down_and_hides_when_it_has_a_model(
    qtbot: Any, ledger_path: Path
) -> None:
    await _down_then_up(qtbot, ledger_path)
    gc.collect()  # the window is freed on this thread (see test_model_manager.py)


async def _down_then_up(qtbot: Any, ledger_path: Path) -> None:
    port = _free_port()
    async with open_harness(qtbot, ledger_path, f"http://127.0.0.1:{port}") as harness:
        tools = harness.window.tools
        panel = tools.onboarding
        try:
            panel.timer.setInterval(100)
            assert panel.isVisible() and panel.timer.isActive()
            # the first window offers the catalogue for the built-in engine, Ollama under it
            assert "Pick a model" in panel.title.text() and panel.catalogue.isVisible()
            assert f"127.0.0.1:{port}" in panel.ollama_steps.text()
            assert not harness.window.banner.isVisible()  # no "Ollama is down" on a first run
            harness.window.grab().save(str(SHOTS / "onboarding_catalogue.png"))
            panel.ollama_steps.linkActivated.emit("#ollama")  # "How to install it…"
            steps = panel.ollama_steps.text()
            assert "ollama serve" in steps or "ollama.com" in steps
            assert not panel.pull.isVisible()
            harness.window.grab().save(str(SHOTS / "onboarding_no_ollama.png"))

            with OllamaDouble(port=port, pull_delay_per_line=0.01) as double:
                double.add_pullable(SUGGESTED_MODEL, total=397_821_319, family="qwen2")
                await until(lambda: "first model" in panel.title.text(), what="the re-check")
                assert panel.isVisible() and not panel.timer.isActive()
                assert panel.pull.isVisible() and panel.pull.name.text() == SUGGESTED_MODEL
                assert not panel.catalogue.isVisible()
                assert not harness.window.banner.isVisible()
                harness.window.grab().save(str(SHOTS / "onboarding_no_model.png"))

                panel.pull.start()
                await until(lambda: not panel.isVisible(), what="onboarding to hide", within=10)
                assert panel.pull.values[-1] == 1000
                assert harness.service.models == [SUGGESTED_MODEL]
                assert harness.window.picker.combo.currentText() == SUGGESTED_MODEL
                assert any(p == "/api/pull" for _, p, _ in double.requests)
        finally:
            await tools.aclose()


async def test_after_the_first_run_only_the_banner_shows_and_the_window_recovers_by_itself(
    qtbot: Any, ledger_path: Path
) -> None:
    await _known_user(qtbot, ledger_path)
    gc.collect()  # the window is freed on this thread (see test_model_manager.py)


async def _known_user(qtbot: Any, ledger_path: Path) -> None:
    ledger_path.parent.mkdir(parents=True)
    ledger = Ledger.open(ledger_path)
    SessionBuilder(ledger).turn(TurnScript("hello again", answer="Hi."))
    ledger.close()
    port = _free_port()
    async with open_harness(qtbot, ledger_path, f"http://127.0.0.1:{port}") as harness:
        tools = harness.window.tools
        try:
            tools.onboarding.timer.setInterval(100)
            assert harness.window.banner.isVisible()
            assert not tools.onboarding.isVisible() and tools.onboarding.timer.isActive()
            with OllamaDouble(port=port) as double:
                double.add_model("llama3.2")
                await until(lambda: not harness.window.banner.isVisible(), what="the re-check")
                assert harness.service.models == ["llama3.2:latest"]
                assert not tools.onboarding.timer.isActive()
        finally:
            await tools.aclose()


async def test_tools_menu_opens_the_model_manager_and_settings(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    await _tools_menu(double, qtbot, ledger_path)
    gc.collect()  # the window is freed on this thread (see test_model_manager.py)


async def _tools_menu(double: OllamaDouble, qtbot: Any, ledger_path: Path) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        tools = harness.window.tools
        try:
            assert not tools.onboarding.isVisible()  # a server with models: nothing to onboard
            menu = [a.text() for a in harness.window.menuBar().actions()]
            assert "&Tools" in menu
            tools.models_action.trigger()
            assert tools.manager is not None and tools.manager.isVisible()
            await until(lambda: tools.manager.table.rowCount() == 2, what="the model list")
            tools.settings_action.trigger()
            assert tools.dialog is not None and tools.dialog.isVisible()
            assert tools.dialog.host.accessibleName() == "Ollama host"
            tools.dialog.reject()
            tools.manager.close()
        finally:
            await tools.aclose()


def test_install_steps_name_this_system_first() -> None:
    assert install_steps("darwin").startswith("<p><b>On macOS:</b>")
    assert install_steps("win32").startswith("<p><b>On Windows:</b>")
    linux = install_steps("linux")
    assert linux.startswith("<p><b>On Linux:</b>") and "install.sh" in linux
    assert "macOS" in linux and "Windows" in linux


async def test_a_check_after_shutdown_never_starts_the_recheck_timer_again(
    qtbot: Any, ledger_path: Path
) -> None:
    await _check_after_shutdown(qtbot, ledger_path)
    gc.collect()  # the window is freed on this thread (see test_model_manager.py)


async def _check_after_shutdown(qtbot: Any, ledger_path: Path) -> None:
    """The onboarding ResourceWarning: the window's tools closed first (the app's order), then
    the service, whose cancelled check still reported "unreachable" and restarted the timer;
    its next tick came after the loop stopped (a coroutine never awaited) or opened a
    connection the closing loop abandoned (an unclosed socket)."""
    port = _free_port()
    async with open_harness(qtbot, ledger_path, f"http://127.0.0.1:{port}") as harness:
        panel = harness.window.tools.onboarding
        panel.timer.setInterval(100)
        assert panel.timer.isActive()  # nothing answers: re-checking
        await harness.window.tools.aclose()
        assert not panel.timer.isActive()
        await harness.service.refresh_models()  # a check that ends after the tools closed
        assert harness.service.reachability.unreachable
        assert not panel.timer.isActive()
        panel.recheck()  # a tick already queued: asks nothing
        assert harness.service.reachability.state != CHECKING
