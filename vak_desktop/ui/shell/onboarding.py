"""First run: what to do when Ollama is not there, or has no model yet; and the window's hook.

`OnboardingPanel` follows the chat service's reachability and model list. While Ollama cannot be
reached it checks again on its own every few seconds (so the window recovers by itself when
Ollama starts), and on a first run — a ledger without any session — it offers the model
catalogue (`CataloguePanel`): download a model and the app runs it on its bundled llama.cpp
engine, no Ollama needed; how to install Ollama stays, in a line under it, for those who want
it. Later the banner's one line is enough. Once a downloaded model runs, the panel hides. When
Ollama answers with no model it offers to pull a small one (the same `PullPanel` as the model
manager); once a model is there it hides.

`attach_model_tools(window)` is the one call `MainWindow` makes to get the Models and Settings
actions, the onboarding panel above the chat, and the controllers behind them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from vak_desktop.runtime.providers.models import SUGGESTED_MODEL
from vak_desktop.ui.chat.chat_service import CHECKING, REACHABLE, ChatService, Reachability
from vak_desktop.ui.models.catalogue_panel import CataloguePanel
from vak_desktop.ui.models.downloads_controller import DownloadsController
from vak_desktop.ui.models.model_manager import ModelManager
from vak_desktop.ui.models.models_controller import ModelsController
from vak_desktop.ui.models.pull_panel import PullPanel
from vak_desktop.ui.settings.settings_dialog import SettingsController, SettingsDialog

RECHECK_MS = 3000

INSTALL = {
    "darwin": (
        "macOS",
        "Download Ollama from <b>ollama.com/download</b>, move it to Applications and open "
        "it: it runs in the menu bar.",
    ),
    "win32": (
        "Windows",
        "Download the installer from <b>ollama.com/download</b> and run it: Ollama starts "
        "by itself and stays in the tray.",
    ),
    "linux": (
        "Linux",
        "Install it with <code>curl -fsSL https://ollama.com/install.sh | sh</code>, then "
        "start it with <code>ollama serve</code> (or <code>systemctl start ollama</code>).",
    ),
}


def install_steps(platform: str = sys.platform) -> str:
    """Rich text: how to install and start Ollama here, then one line for the other systems."""
    here = next((key for key in INSTALL if platform.startswith(key)), "linux")
    name, steps = INSTALL[here]
    others = " · ".join(f"<b>{n}</b>: {s}" for key, (n, s) in INSTALL.items() if key != here)
    return f"<p><b>On {name}:</b> {steps}</p><p style='font-size:small'>{others}</p>"


class OnboardingPanel(QFrame):
    """Shown while there is no Ollama to talk to, or no model to talk with."""

    def __init__(
        self,
        service: ChatService,
        models: ModelsController,
        recheck_ms: int = RECHECK_MS,
        parent: QWidget | None = None,
        downloads: DownloadsController | None = None,
        banner: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("onboarding")
        self.setAccessibleName("Getting started")
        self._service = service
        # first run: nothing in the ledger yet (the sessions table alone: cheap at startup)
        self.first_run = not service.ledger.sessions(include_archived=True)
        self.title = QLabel()
        self.title.setObjectName("dialogTitle")
        self.body = QLabel()
        self.body.setWordWrap(True)
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.checking = QLabel()
        self.checking.setObjectName("hint")
        self.check_now = QPushButton("Check now")
        self.check_now.setAccessibleName("Check for Ollama now")
        self.check_now.clicked.connect(self.recheck)
        self.pull = PullPanel(models, suggestion=SUGGESTED_MODEL)
        self.downloads = downloads or DownloadsController(parent=self)
        self.catalogue = CataloguePanel(self.downloads)
        self.catalogue.setMinimumHeight(260)
        self._banner = banner  # says "Ollama is not reachable": not the news on a first run
        self.ollama_steps = QLabel()  # one line; its link unfolds the install steps
        self.ollama_steps.setWordWrap(True)
        self.ollama_steps.setTextFormat(Qt.TextFormat.RichText)
        self.ollama_steps.setObjectName("hint")
        self.ollama_steps.linkActivated.connect(self._toggle_steps)
        self.steps_shown = False
        self._own_model = False  # a downloaded model was started: nothing left to offer
        self.downloads.modelReady.connect(self._model_ready)
        status = QHBoxLayout()
        status.addWidget(self.checking, 1)
        status.addWidget(self.check_now)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 16, 20, 16)
        layout.setSpacing(8)
        layout.addWidget(self.title)
        layout.addWidget(self.body)
        layout.addWidget(self.catalogue, 1)
        layout.addWidget(self.ollama_steps)
        layout.addLayout(status)
        layout.addWidget(self.pull)
        self.timer = QTimer(self)
        self.timer.setInterval(recheck_ms)
        self.timer.timeout.connect(self.recheck)
        self._stopped = False  # `stop_checking`: at shutdown, for good
        service.reachabilityChanged.connect(self._update)
        service.modelsChanged.connect(self._models_changed)
        service.turnStarted.connect(self._not_first_run)
        self.hide()
        self._update(service.reachability)

    def _not_first_run(self, *_args: object) -> None:
        """A turn ran: a server that goes away later is a server down, not a first install
        (the banner says so; the install panel would hide the chat)."""
        self.first_run = False

    def _toggle_steps(self, _link: str = "") -> None:
        self.steps_shown = not self.steps_shown
        self._update(self._service.reachability)

    def _model_ready(self, _path: str) -> None:
        """A downloaded model is starting on the built-in engine: the chat is the next step."""
        self._own_model = True
        self._update(self._service.reachability)

    def engine_failed(self, reason: str) -> None:
        """The downloaded model did not start (the providers controller says why in a box):
        the catalogue is offered again, with the reason under it."""
        self._own_model = False
        self.catalogue.status.setText(f"The model did not start: {reason}")
        self.catalogue.status.show()
        self._update(self._service.reachability)

    def _models_changed(self, _models: list[str]) -> None:
        self._update(self._service.reachability)

    def recheck(self) -> None:
        """Ask Ollama again (the timer calls this; it skips while a check is running and
        while the window is not on screen, e.g. after it closed)."""
        if self._stopped:
            return
        if self.window().isVisible() and self._service.reachability.state != CHECKING:
            self._service.refresh_models()

    def stop_checking(self) -> None:
        """Never re-check again (shutdown). A check the service cancels as it closes still
        reports "unreachable", which used to start the timer again: its next tick then came
        after the event loop had stopped ("no running event loop", a coroutine never
        awaited) or started a request the closing loop abandoned (an unclosed socket)."""
        self._stopped = True
        self.timer.stop()

    def _update(self, state: Reachability) -> None:
        if state.unreachable:
            self.title.setText("Pick a model to run on this computer")
            self.body.setText(
                "<p>Vak runs models itself with its built-in llama.cpp engine: download one "
                "below (it is checked before it is used, and a stopped download resumes), or "
                "open a GGUF file you have with Tools → Run a GGUF file…. The smallest answers "
                "quickly without a GPU; larger ones answer better and need more memory.</p>"
            )
            fold = "Hide the steps" if self.steps_shown else "How to install it…"
            self.ollama_steps.setText(
                f"<b>Prefer Ollama?</b> Nothing answered at <code>{escape(state.host)}</code> "
                "(if it runs elsewhere, set <code>OLLAMA_HOST</code> or the host in Settings). "
                f"<a href='#ollama'>{fold}</a>" + (install_steps() if self.steps_shown else "")
            )
            self.catalogue.show()
            self.ollama_steps.show()
            self.checking.setText(
                f"Checking again every {self.timer.interval() // 1000 or 1} s · "
                f"last check {datetime.now():%H:%M:%S}"
            )
            self.checking.show()
            self.check_now.show()
            self.pull.hide()
            if not self._stopped:
                self.timer.start()
            offering = self.first_run and not self._own_model
            self.setVisible(offering)
            if offering and self._banner is not None:
                self._banner.hide()
        elif state.state == REACHABLE and not self._service.models:
            self.timer.stop()
            self.title.setText("Pull a first model")
            self.body.setText(
                "<p>Ollama is running but has no models yet. A small one to start with: "
                f"<b>{SUGGESTED_MODEL}</b> (about 400 MB, answers quickly even without a GPU, "
                "can call tools). Larger models answer better and need more memory; you can "
                "pull any of them later from Tools → Models.</p>"
            )
            self.checking.hide()
            self.check_now.hide()
            self.catalogue.hide()
            self.ollama_steps.hide()
            self.pull.show()
            self.show()
        elif state.state != CHECKING:
            self.timer.stop()
            self.hide()


@dataclass
class ModelTools:
    """What `attach_model_tools` added to a window."""

    settings: SettingsController
    models: ModelsController
    onboarding: OnboardingPanel
    downloads: DownloadsController
    models_action: QAction
    settings_action: QAction
    manager: ModelManager | None = None
    dialog: SettingsDialog | None = None

    def open_models(self) -> ModelManager:
        if self.manager is None:
            self.manager = ModelManager(
                self.models, self.onboarding.window(), downloads=self.downloads
            )
        self.models.refresh()
        self.manager.show()
        self.manager.raise_()
        return self.manager

    def open_settings(self) -> SettingsDialog:
        self.dialog = SettingsDialog(self.settings, self.onboarding.window())
        self.dialog.open()
        return self.dialog

    async def aclose(self) -> None:
        """Stop re-checking and cancel the model controller's tasks (at shutdown)."""
        self.onboarding.stop_checking()
        await self.downloads.aclose()
        await self.models.aclose()


def attach_model_tools(window: Any, settings: SettingsController | None = None) -> ModelTools:
    """Give `window` (a MainWindow) a Tools menu with Models… and Settings…, a Manage button
    beside its model picker, and the onboarding panel above its chat view."""
    service: ChatService = window.service
    settings = settings or SettingsController()
    models = ModelsController(
        service.ledger,
        service.provider,
        settings,
        parent=window,
        # "Probe now" measures with the prefix the chat's own turns carry, as `vak probe` does
        prefix_for=lambda binding: service.runner.probe_prefix(binding, service.session or ""),
    )
    models.catalogueChanged.connect(service.refresh_models)
    downloads = DownloadsController(parent=window)  # the catalogue, into the data directory
    banner = getattr(window, "banner", None)
    onboarding = OnboardingPanel(service, models, downloads=downloads, banner=banner)
    pane = window.chat.parentWidget().layout()
    pane.insertWidget(pane.indexOf(window.chat), onboarding)

    menu = window.menuBar().addMenu("&Tools")
    models_action = QAction("Models…", window)
    models_action.setShortcut(QKeySequence("Ctrl+Shift+M"))
    settings_action = QAction("Settings…", window)
    settings_action.setShortcut(QKeySequence("Ctrl+,"))
    settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
    menu.addAction(models_action)
    menu.addAction(settings_action)
    tools = ModelTools(settings, models, onboarding, downloads, models_action, settings_action)
    models_action.triggered.connect(tools.open_models)
    settings_action.triggered.connect(tools.open_settings)
    picker = getattr(window, "picker", None)
    if picker is not None and picker.layout() is not None:
        manage = QPushButton("Manage…")
        manage.setAccessibleName("Manage models")
        manage.setToolTip("Pull, delete, unload and measure models (Ctrl+Shift+M)")
        manage.clicked.connect(tools.open_models)
        picker.layout().insertWidget(picker.layout().count() - 1, manage)
    return tools
