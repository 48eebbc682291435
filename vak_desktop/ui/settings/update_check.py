"""The window's side of the update check (`runtime/updates.py`): opt-in, in the background.

`UpdateCheck.start()` does nothing unless the settings turned the check on and name a feed; it
then asks the feed in a task once the window is up (start-up never waits on it) and, when the
feed names a newer version, shows "Vak X is available" in the status bar as a link to the
release (and once in the notice line, with the feed's note). A feed that fails is logged only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from html import escape
from typing import Any

import httpx
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel

from vak_desktop.providers.client import http_client
from vak_desktop.runtime.updates import Release, UpdateFeedError, check_for_update
from vak_desktop.ui.parts.tasks import TaskSet
from vak_desktop.ui.settings.settings_controller import SettingsController

log = logging.getLogger(__name__)


class UpdateCheck(QObject):
    """Asks the release feed once, if the user opted in; says when a newer version is out."""

    available = Signal(object)  # Release

    def __init__(
        self,
        settings: SettingsController,
        *,
        current: str | None = None,
        client: Callable[[], httpx.AsyncClient] = http_client,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._settings = settings
        self._current = current
        self._client = client
        self._tasks = TaskSet()
        self.release: Release | None = None
        self.link: QLabel | None = None  # where `attach_update_check` shows it

    def start(self) -> asyncio.Task[None] | None:
        """Begin the check in the background (None: turned off, or no feed named)."""
        chosen = self._settings.settings
        if not chosen.update_check or not chosen.update_feed.strip():
            return None
        return self._tasks.spawn(self._run(chosen.update_feed.strip()), "update-check")

    async def _run(self, feed: str) -> None:
        try:
            async with self._client() as client:
                release = await check_for_update(client, feed, self._current)
        except UpdateFeedError as exc:
            log.info("update check: %s", exc)
            return
        if release is None:
            log.info("update check: this is the newest version (%s)", feed)
            return
        log.info("update check: %s (%s)", release.message, release.url)
        self.release = release
        self.available.emit(release)

    async def aclose(self) -> None:
        await self._tasks.cancel_all()


def attach_update_check(window: Any, settings: SettingsController, **options: Any) -> UpdateCheck:
    """An `UpdateCheck` whose result shows in `window`'s status bar (a link) and notice line."""
    check = UpdateCheck(settings, parent=window, **options)
    link = QLabel()
    link.setObjectName("updateLink")
    link.setAccessibleName("Update available")
    link.setOpenExternalLinks(True)
    link.hide()
    window.statusBar().addPermanentWidget(link)
    check.link = link

    def say(release: Release) -> None:
        link.setText(f"<a href='{escape(release.url, quote=True)}'>{escape(release.message)}</a>")
        link.setToolTip(release.notes or release.url)
        link.show()
        notes = f" — {release.notes.rstrip('.')}" if release.notes else ""
        notice = getattr(window, "notice_line", None)
        if notice is not None:
            notice.show_notice(f"{release.message}{notes}: {release.url}")

    check.available.connect(say)
    return check
