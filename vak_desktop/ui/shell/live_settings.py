"""Saved settings take effect at once, without a restart.

The providers controller reopens the hosted providers itself; this object does the rest when the
settings change: new workspace folders or MCP servers become a new tool registry for every runner
(the old one's servers are stopped), and a new Ollama host becomes a new primary provider for the
chat and the model manager. A host given on the command line or in `OLLAMA_HOST` wins over the
settings file, as at start-up, so a changed file host is not applied then (a notice says so).
"""

from __future__ import annotations

from pathlib import Path

import httpx
from PySide6.QtCore import QObject

from vak_desktop.providers import open_provider
from vak_desktop.runtime import default_tools
from vak_desktop.runtime.settings import Settings
from vak_desktop.ui.chat.chat_service import ChatService
from vak_desktop.ui.models.models_controller import ModelsController
from vak_desktop.ui.parts.tasks import TaskSet
from vak_desktop.ui.settings.settings_controller import SettingsController


class LiveSettings(QObject):
    """Applies each saved change of host, folders and MCP servers to the running window."""

    def __init__(
        self,
        service: ChatService,
        models: ModelsController,
        settings: SettingsController,
        client: httpx.AsyncClient,
        *,
        data_directory: Path | None = None,
        host_override: str = "",
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._service = service
        self._models = models
        self._client = client
        self._data = data_directory
        self._host_override = host_override
        self._applied = settings.settings
        self._tasks = TaskSet()
        settings.changed.connect(self.apply)

    def apply(self, new: Settings) -> list[str]:
        """Apply what changed since the last settings; returns what was applied, in words."""
        old, self._applied = self._applied, new
        done = []
        if (new.workspace, new.mcp_servers) != (old.workspace, old.mcp_servers):
            tools = default_tools(new, self._service.ledger, data_directory=self._data)
            self._service.use_tools(tools)
            done.append("workspace folders and MCP servers")
        if new.ollama_host != old.ollama_host:
            if self._host_override:
                self._service.notice.emit(
                    f"The Ollama host stays {self._host_override} (set by --host or "
                    "OLLAMA_HOST); the new one applies when that is unset."
                )
            else:
                provider = open_provider("ollama", self._client, new.ollama_host)
                self._service.use_primary(provider)
                self._tasks.spawn(self._models.use_provider(provider), "models-use-provider")
                done.append(f"the Ollama host ({provider.host})")
        if done:
            self._service.notice.emit("Settings applied: " + " and ".join(done) + ".")
        return done

    async def aclose(self) -> None:
        await self._tasks.cancel_all()
