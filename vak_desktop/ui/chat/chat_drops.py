"""A folder dropped on the chat becomes one of this chat's workspace folders (a mixin of
`ChatView`): the view only says which folders were dropped (`folderDropped`); the window asks
the service to record them."""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent


class ChatDrops:
    """Accepts local folders dropped on the chat (a mixin of `ChatView`, before its Qt base
    so that these event handlers are the ones Qt calls)."""

    folderDropped: Any  # Signal(str), declared on ChatView

    @staticmethod
    def dropped_folders(mime: QMimeData | None) -> list[str]:
        if mime is None or not mime.hasUrls():
            return []
        paths = (url.toLocalFile() for url in mime.urls() if url.isLocalFile())
        return [p for p in paths if os.path.isdir(p)]

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self.dropped_folders(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if self.dropped_folders(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        folders = self.dropped_folders(event.mimeData())
        for folder in folders:
            self.folderDropped.emit(folder)
        if folders:
            event.acceptProposedAction()
