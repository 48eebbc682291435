"""The window: Qt widgets over one narrow service. The only package that imports PySide6 or qasync.

`ChatService` owns the runtime and runs every turn, model refresh and binding as an asyncio task
on the qasync loop; it tells the views what happened through Qt signals. Views hold the service
they show and nothing else: they never talk HTTP, stream or read the ledger themselves.

The names below are imported on first use (`__getattr__`), so that the window's first frame
(`ui/shell/main_window.py` before its services are attached) costs only what it shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vak_desktop.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from vak_desktop.ui.chat.chat_service import ChatService, Reachability
    from vak_desktop.ui.parts.theme import apply_theme
    from vak_desktop.ui.shell.main_window import MainWindow

_WHERE = {
    "ChatService": "vak_desktop.ui.chat.chat_service",
    "Reachability": "vak_desktop.ui.chat.chat_service",
    "apply_theme": "vak_desktop.ui.parts.theme",
    "MainWindow": "vak_desktop.ui.shell.main_window",
}


__getattr__ = lazy_exports(__name__, _WHERE, globals())


__all__ = ["ChatService", "MainWindow", "Reachability", "apply_theme"]
