"""The window's providers besides Ollama: the settings' `[[providers]]` and the embedded engine.

`ProvidersController` opens every configured provider (its key from the keyring) into the chat
service's `ProviderSet` and opens them again when the settings change (a key may have been
typed). It owns Tools → "Run a GGUF file…": a file dialog, then the embedded llama.cpp engine
for that file as one more provider; a model downloaded from the catalogue (`modelReady` of the
window's `DownloadsController`) is run the same way. The engine starts in the background — the picker shows it
starting, a notice says when it runs — and once it runs the file is remembered in the settings
(`embedded_model`), so the next start offers its model again and starts the engine when that
model is picked. A start that fails (no `embedded` extra, not a GGUF file, the engine exited)
is shown in a message box and on the picker's line. The engine stops when the service closes.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import httpx
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QWidget

from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime.providers.embedded import start_engine
from vak_desktop.runtime.providers.provider_set import (
    EngineStarter,
    ProviderSet,
    ProviderSlot,
    configured_slots,
    engine_slot,
)
from vak_desktop.runtime.settings import Settings
from vak_desktop.ui.chat.chat_service import ChatService
from vak_desktop.ui.parts.tasks import TaskSet
from vak_desktop.ui.settings.settings_controller import SettingsController

log = logging.getLogger(__name__)

GGUF_FILTER = "GGUF models (*.gguf);;All files (*)"


class ProvidersController(QObject):
    """Keeps the service's providers in step with the settings and runs GGUF files."""

    engineStarted = Signal(str)  # the model the embedded engine serves
    engineFailed = Signal(str)  # why it did not start

    def __init__(
        self,
        service: ChatService,
        settings: SettingsController,
        client: httpx.AsyncClient,
        *,
        start: EngineStarter = start_engine,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._service = service
        self._settings = settings
        self._client = client
        self._start = start
        self._tasks = TaskSet()
        self.dialog: QFileDialog | None = None
        self.error_box: QMessageBox | None = None
        self.run_action: QAction | None = None
        self._window: QWidget | None = None
        self._remembering = False
        providers: ProviderSet = service.providers
        for slot in configured_slots(settings.settings, client):
            providers.add(slot)
        remembered = settings.settings.embedded_model
        if remembered:  # offered again; started when its model is picked
            providers.add(engine_slot(Path(remembered), client, start=start))
        settings.changed.connect(self._settings_changed)

    def attach(self, window: QWidget) -> QAction:
        """Add "Run a GGUF file…" to the window's Tools menu (made if it has none)."""
        bar = window.menuBar()  # type: ignore[attr-defined]
        menu = next((a.menu() for a in bar.actions() if a.text().replace("&", "") == "Tools"), None)
        if not isinstance(menu, QMenu):
            menu = bar.addMenu("&Tools")
        action = QAction("Run a GGUF file…", window)
        action.setToolTip("Start the embedded llama.cpp engine for a model file on this computer")
        action.triggered.connect(self.choose_file)
        menu.addSeparator()
        menu.addAction(action)
        self.run_action = action
        self._window = window
        tools = getattr(window, "tools", None)  # a model downloaded from the catalogue runs too
        if tools is not None and hasattr(tools, "downloads"):
            tools.downloads.modelReady.connect(self.run_file)
            self.engineFailed.connect(tools.onboarding.engine_failed)
        return action

    def choose_file(self) -> QFileDialog:
        """Open the file dialog (not modal for the loop: the window keeps running)."""
        remembered = self._settings.settings.embedded_model
        start_in = str(Path(remembered).parent) if remembered else str(Path.home())
        dialog = QFileDialog(self._window, "Run a GGUF file", start_in, GGUF_FILTER)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog)  # same in tests and on desktop
        dialog.fileSelected.connect(self.run_file)
        self.dialog = dialog
        dialog.open()
        return dialog

    def run_file(self, path: str) -> asyncio.Task[None]:
        """Start the embedded engine for `path` as the llama.cpp provider and select its model."""
        slot = engine_slot(Path(path), self._client, start=self._start)
        return self._tasks.spawn(self._run(slot), "run-gguf")

    async def _run(self, slot: ProviderSlot) -> None:
        await self._service.run_engine(slot)  # replaces (stops) an engine already running
        assert slot.engine is not None
        try:
            await slot.engine.provider()
        except ProviderError as exc:
            self._failed(str(exc))
            return
        path = str(slot.engine.path)
        if self._settings.settings.embedded_model != path:
            self._remembering = True  # not a change of the providers: nothing to reopen
            try:
                self._settings.save(self._settings.settings.replace(embedded_model=path))
            finally:
                self._remembering = False
        self.engineStarted.emit(slot.engine.model)

    def _failed(self, reason: str) -> None:
        log.info("the embedded engine did not start: %s", reason)
        box = QMessageBox(QMessageBox.Icon.Warning, "The model did not start", reason)
        if self._window is not None:
            box.setParent(self._window, box.windowFlags())
        box.setInformativeText(
            "Pick a .gguf model file (llama.cpp's format). The embedded engine needs the "
            "`embedded` extra: pip install 'vak-desktop[embedded]'."
        )
        self.error_box = box
        box.open()
        self.engineFailed.emit(reason)

    def _settings_changed(self, settings: Settings) -> None:
        if not self._remembering:  # keys may have been typed: every entry is opened again
            self._service.set_providers(configured_slots(settings, self._client))

    async def aclose(self) -> None:
        """Cancel a start still being watched (the service stops the engine itself)."""
        await self._tasks.cancel_all()
