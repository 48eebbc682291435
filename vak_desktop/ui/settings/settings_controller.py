"""The settings in force, on the Qt side: one object every part of the window reads them from.

The chat service asks it for each model's keep_alive at every turn, the model manager saves
per-model keep_alive through it, and the settings dialog saves through it; `changed` tells the
rest. A file that cannot be read is never silently replaced (see `SettingsController`). An
Ollama host set outside the file (`--host`, `OLLAMA_HOST`) is its `host_override`: shown as such,
never written into the file.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from vak_desktop.runtime.settings import (
    Settings,
    SettingsError,
    load_settings,
    save_settings,
    settings_path,
)


class SettingsController(QObject):
    """The settings in force, their file, and a signal when they change.

    A file that cannot be read is not silently replaced: `error` says what is wrong, the
    defaults are used meanwhile, and the first save keeps the old file beside the new one."""

    changed = Signal(object)  # Settings

    def __init__(
        self,
        path: Path | None = None,
        parent: QObject | None = None,
        *,
        host_override: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.path = path or settings_path()
        # the host that wins over the file's: --host (passed in) or OLLAMA_HOST
        self.host_override = (
            os.environ.get("OLLAMA_HOST", "") if host_override is None else host_override
        ).strip()
        self.error = ""
        try:
            self._settings = load_settings(self.path)
        except SettingsError as exc:
            self._settings, self.error = Settings(), str(exc)

    @property
    def settings(self) -> Settings:
        return self._settings

    def keep_alive_for(self, model: str) -> str:
        """The keep_alive a request for `model` carries (what the chat service asks for)."""
        return self._settings.keep_alive_for(model)

    def save(self, settings: Settings) -> Path:
        if self.error and self.path.exists():
            self.path.replace(self.path.with_suffix(".toml.unreadable"))
        save_settings(settings, self.path)
        self.error = ""
        self._settings = settings
        self.changed.emit(settings)
        return self.path
