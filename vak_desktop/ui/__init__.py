"""The window: Qt widgets over one narrow service. The only package that imports PySide6 or qasync.

`ChatService` owns the runtime and runs every turn, model refresh and binding as an asyncio task
on the qasync loop; it tells the views what happened through Qt signals. Views hold the service
they show and nothing else: they never talk HTTP, stream or read the ledger themselves.
"""

from vak_desktop.ui.chat.chat_service import ChatService, Reachability
from vak_desktop.ui.parts.theme import apply_theme
from vak_desktop.ui.shell.main_window import MainWindow

__all__ = ["ChatService", "MainWindow", "Reachability", "apply_theme"]
