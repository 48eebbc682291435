"""The main window: the sidebar of chats, the model picker, the transcript, the composer, the
status bar with the context gauge, and the inspector dock.

It only arranges the views, connects the service's signals to them and owns the window-wide
shortcuts (Ctrl/Cmd+N new chat, Ctrl/Cmd+K search, Ctrl/Cmd+I inspector, Esc stop); the work
happens in the services.

Made without a service, the window is its first frame (`ui/shell/opening.py`): the app shows
it before anything heavy is imported, then `attach`es the services, which builds the views in
place. This module imports only Qt and that view at its top; the views, the runtime and the
dialogs are imported where they are first needed, so that first frame costs little more than
PySide6 itself.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.ui.shell.opening import MENUS, OPENING, OpeningView

if TYPE_CHECKING:  # the views and their services are imported by `attach` (see the docstring)
    from vak_desktop.ledger import Ledger
    from vak_desktop.runtime import ModelBinding
    from vak_desktop.ui.chat.chat_service import ChatService
    from vak_desktop.ui.sessions.interchange_dialogs import ExportDialog, ImportDialog
    from vak_desktop.ui.sessions.prompt_dialog import SystemPromptDialog
    from vak_desktop.ui.settings.settings_controller import SettingsController

DEFAULT_SIZE = (1100, 750)
INSPECTOR_WIDTH = 460
INSPECTOR_MIN_WIDTH = 300
MIN_CHAT_WIDTH = 480  # the chat pane's least width: a readable line beside the inspector


class MainWindow(QMainWindow):
    """One window over one `ChatService` and the ledger it writes."""

    def __init__(
        self,
        service: ChatService | None = None,
        ledger: Ledger | None = None,
        parent: QWidget | None = None,
        *,
        settings: SettingsController | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Vak")
        self.setAccessibleName("Vak")
        self.resize(*DEFAULT_SIZE)
        self.setMinimumSize(720, 480)
        self.focused_turn = ""  # the turn a search hit asked to show
        self.ready = False  # the services are attached (`attach`)
        if service is None:  # the first frame: the shell, disabled, until `attach`
            self.opening: OpeningView | None = OpeningView(DEFAULT_SIZE[0])
            self.setCentralWidget(self.opening)
            for title in MENUS:
                self.menuBar().addMenu(title).setEnabled(False)
            self.statusBar().showMessage(OPENING)
            return
        self.opening = None
        self.attach(service, ledger, settings=settings)

    def attach(
        self,
        service: ChatService,
        ledger: Ledger | None = None,
        *,
        settings: SettingsController | None = None,
    ) -> None:
        """Build the views over `service` and the ledger it writes, in place of the first
        frame, and connect them: from here on the window is whole."""
        from vak_desktop.ui.chat.chat_view import ChatView
        from vak_desktop.ui.chat.composer import Composer
        from vak_desktop.ui.chat.notice_line import NoticeLine
        from vak_desktop.ui.inspector import Inspection, InspectorDock
        from vak_desktop.ui.models.model_picker import ModelPicker
        from vak_desktop.ui.sessions.session_list import SessionList
        from vak_desktop.ui.shell.banner import ReachabilityBanner
        from vak_desktop.ui.shell.onboarding import attach_model_tools
        from vak_desktop.ui.shell.status import StatusBar

        if self.ready:
            raise RuntimeError("the window's services are attached already")
        self.service = service
        self.ledger = ledger if ledger is not None else service.ledger
        if self.opening is not None:
            self.menuBar().clear()  # the real menus, in the same places (`_actions`)
            self.opening = None  # `setCentralWidget` below deletes it

        runner = service.runner
        self.inspection = Inspection(
            service,
            self.ledger,
            system=runner.system_prompt,
            tools=runner.tools,
            parent=self,
        )
        self.banner = ReachabilityBanner(service)
        self.sessions = SessionList(service, self.ledger)
        self.picker = ModelPicker(service)
        self.chat = ChatView(service)  # it connects itself to the service's turn events
        self.chat.setAccessibleName("Conversation")
        self.composer = Composer(service)
        self.notice_line = NoticeLine()  # the newest notice, whole (the status bar cuts it)

        pane = QWidget()
        pane.setObjectName("chatPane")
        pane_layout = QVBoxLayout(pane)
        pane_layout.setContentsMargins(18, 14, 18, 14)
        pane_layout.setSpacing(12)
        pane_layout.addWidget(self.picker)
        pane_layout.addWidget(self.chat, 1)
        pane_layout.addWidget(self.notice_line)
        pane_layout.addWidget(self.composer)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        splitter.setHandleWidth(1)
        splitter.addWidget(self.sessions)
        splitter.addWidget(pane)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([250, DEFAULT_SIZE[0] - 250])
        self.sessions.setMinimumWidth(190)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.banner)
        layout.addWidget(splitter, 1)
        self.setCentralWidget(central)

        self.status = StatusBar(self.inspection)
        self.setStatusBar(self.status)
        self.inspector = InspectorDock(self.inspection, self)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.inspector)
        # Its panels' tables and code ask for more than the window has beside a readable chat:
        # an explicit minimum wins over their size hints (they scroll or wrap inside it).
        self.inspector.tabs.setMinimumWidth(INSPECTOR_MIN_WIDTH)
        self.inspector.hide()
        self.inspector_button = QPushButton("Inspector")
        self.inspector_button.setObjectName("inspectorButton")
        self.inspector_button.setAccessibleName("Show the inspector")
        self.inspector_button.setToolTip("Plan, request, evidence and probe (Ctrl+I)")
        self.inspector_button.setCheckable(True)
        self.inspector_button.setFlat(True)
        self.status.addPermanentWidget(self.inspector_button)

        self._actions()
        self._connect()
        # Tools → Models…, Settings…, and onboarding above the chat (ui/shell/onboarding.py)
        self.tools = attach_model_tools(self, settings)
        self._follow_probes()
        # the inspector takes the rest, never the chat (nor the picker's row: an explicit
        # minimum below the pane's own hint would let its buttons overlap)
        pane.setMinimumWidth(max(MIN_CHAT_WIDTH, pane.minimumSizeHint().width()))
        self.status.show_model(service.model)
        self.status.show_reachability(service.reachability)
        self._tab_order()
        self.composer.input.setFocus()
        self.ready = True

    def _tab_order(self) -> None:
        """Tab from where the user types to what they act on next: the message, Send, the
        model picker, the chats, the inspector (it reached the picker only at stop 20)."""
        chain = [
            self.composer.input,
            self.composer.send_button,
            self.composer.stop_button,
            self.picker.combo,
            self.picker.refresh,
            self.sessions.new_chat,
            self.sessions.search,
            self.sessions.list,
            self.sessions.archived_toggle,
            self.inspector_button,
        ]
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

    # -- the status bar's labels, by their old names ------------------------------------------

    @property
    def model_status(self) -> QLabel:
        return self.status.model_status

    @property
    def host_status(self) -> QLabel:
        return self.status.host_status

    # -- actions and shortcuts --------------------------------------------------------------

    def _action(
        self, text: str, shortcut: QKeySequence | QKeySequence.StandardKey | str, slot: object
    ) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _actions(self) -> None:
        self.new_chat_action = self._action(
            "New chat", QKeySequence.StandardKey.New, lambda: self.service.new_session()
        )
        self.search_action = self._action("Search chats", "Ctrl+K", self.sessions.focus_search)
        self.stop_action = self._action("Stop the answer", "Esc", lambda: self.service.stop())
        self.stop_action.setEnabled(False)  # only while a turn runs: Esc stays free otherwise
        self.inspector_action = self._action("Inspector", "Ctrl+I", self.toggle_inspector)
        self.inspector_action.setCheckable(True)
        self.archived_action = QAction("Archived chats", self)
        self.archived_action.setCheckable(True)
        self.archived_action.toggled.connect(self.sessions.show_archived)
        self.sessions.archived_toggle.toggled.connect(self.archived_action.setChecked)
        self.compact_action = QAction("Compact now", self)
        self.compact_action.setToolTip(
            "Summarise the turns that no longer fit whole or as cards into the context packet now"
        )
        self.compact_action.triggered.connect(self._compact_now)
        self.file_menu = self.menuBar().addMenu("&File")
        self.import_action = self._action("Import chats…", "Ctrl+Shift+O", self.import_chats)
        self.export_action = self._action("Export chat…", "Ctrl+Shift+E", self.export_chat)
        self.file_menu.addAction(self.import_action)
        self.file_menu.addAction(self.export_action)
        self.file_menu.addSeparator()
        self.quit_action = self._action("Quit", QKeySequence.StandardKey.Quit, self.close)
        self.quit_action.setShortcut("Ctrl+Q")  # Linux's StandardKey.Quit may be empty
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self.file_menu.addAction(self.quit_action)
        chat = self.menuBar().addMenu("&Chat")
        for action in (self.new_chat_action, self.search_action, self.stop_action):
            chat.addAction(action)
        chat.addSeparator()
        self.prompt_action = self._action("System prompt…", "Ctrl+Shift+P", self.edit_system_prompt)
        chat.addAction(self.prompt_action)
        self.folder_action = QAction("Add a folder to this chat…", self)
        self.folder_action.setToolTip(
            "Let this chat's file tools read a folder (or drop one on it)"
        )
        self.folder_action.triggered.connect(self._choose_chat_folder)
        chat.addAction(self.folder_action)
        chat.addAction(self.compact_action)
        chat.addSeparator()
        self.delete_action = QAction("Delete chat…", self)
        self.delete_action.setToolTip("Delete this chat for good (you can undo for a moment)")
        self.delete_action.triggered.connect(
            lambda: self.sessions.ask_delete(self.service.session or "")
        )
        chat.addAction(self.delete_action)
        view = self.menuBar().addMenu("&View")
        view.addAction(self.inspector_action)
        view.addAction(self.archived_action)

    def edit_system_prompt(self) -> SystemPromptDialog:
        """Chat → System prompt…: this chat's prompt and the presets."""
        from vak_desktop.runtime.sessions.system_prompts import PresetStore
        from vak_desktop.ui.sessions.prompt_dialog import SystemPromptDialog

        store = self.service.presets
        if store is None:  # a window made without a data directory (tests): presets beside it
            beside = self.ledger.path  # an in-memory ledger: a folder of their own
            store = PresetStore.open(beside.parent if beside else Path(tempfile.mkdtemp()))
            self.service.use_presets(store)
        self.prompt_dialog = SystemPromptDialog(self.service, store, self)
        self.prompt_dialog.open()
        return self.prompt_dialog

    def import_chats(self) -> ImportDialog:
        """File → Import chats…: OpenAI chat JSON, ChatGPT or Open WebUI exports."""
        from vak_desktop.ui.sessions.interchange_dialogs import ImportDialog

        self.import_dialog = ImportDialog(self.service, self)
        self.import_dialog.open()
        return self.import_dialog

    def export_chat(self) -> ExportDialog | None:
        """File → Export chat…: the shown chat as OpenAI chat JSON or Markdown."""
        from vak_desktop.ui.sessions.interchange_dialogs import ExportDialog

        if not self.service.session:
            self._notice("Open a chat to export it.")
            return None
        self.export_dialog = ExportDialog(self.service, self)
        self.export_dialog.open()
        return self.export_dialog

    def _choose_chat_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a folder to this chat")
        if folder:
            self.add_chat_folder(folder)

    def add_chat_folder(self, folder: str) -> bool:
        """The menu's and the drop's way in: a folder for this chat's file tools."""
        problem = self.service.add_chat_folder(folder)
        if problem:
            self._notice(problem)
        return not problem

    def reopen_last_chat(self) -> bool:
        """Show the chat last written in (at startup: a restart comes back where it was)."""
        sessions = self.ledger.sessions()
        return bool(sessions) and self.service.open_session(sessions[0].id)

    def _compact_now(self) -> None:
        if self.service.compacting:
            self._notice("Already compacting: the status bar shows how far it got.")
        elif not self.service.compact_now():
            self._notice(
                "Nothing to compact now: open a chat, pick a model, or wait for the answer."
            )

    def toggle_inspector(self, visible: bool | None = None) -> None:
        """Show or hide the inspector dock (no argument: the opposite of now)."""
        show = not self.inspector.isVisible() if visible is None else visible
        if show:
            self.resizeDocks([self.inspector], [INSPECTOR_WIDTH], Qt.Orientation.Horizontal)
        self.inspector.setVisible(show)

    def _inspector_shown(self, visible: bool) -> None:
        for widget in (self.inspector_action, self.inspector_button):
            blocked = widget.blockSignals(True)
            widget.setChecked(visible)
            widget.blockSignals(blocked)

    # -- wiring -------------------------------------------------------------------------------

    def _connect(self) -> None:
        service = self.service
        service.sessionOpened.connect(self._open)
        service.notice.connect(self._notice)
        service.modelChanged.connect(self.status.show_model)
        service.modelBound.connect(self._show_binding)
        service.reachabilityChanged.connect(self.status.show_reachability)
        service.busyChanged.connect(self.stop_action.setEnabled)
        service.compactionProgress.connect(self.status.show_compaction)
        self.status.compactionStopRequested.connect(service.stop_compaction)
        self.sessions.turnRequested.connect(self._show_turn)
        self.chat.folderDropped.connect(self.add_chat_folder)
        self.inspector.visibilityChanged.connect(self._inspector_shown)
        self.inspector_button.toggled.connect(self.toggle_inspector)

    def _follow_probes(self) -> None:
        """Every probe (Probe now, or the chat's background one) is shown in the status bar
        and the manager while it runs; when it ends the gauge and the model's horizon are
        read again at once."""
        models = self.tools.models
        self.service.probeProgress.connect(models.probe_elsewhere)
        models.probeProgress.connect(self.status.show_probe)
        models.probeFinished.connect(self._probe_ended)
        self.status.pauseRequested.connect(self._pause_probe)
        self.status.resumeRequested.connect(self._resume_probe)

    def _pause_probe(self, model: str) -> None:
        if not self.tools.models.pause_probe(model):
            self.service.pause_probe(model)

    def _resume_probe(self, model: str) -> None:
        if self.tools.models.resume_probe(model) is None:
            self.service.resume_probe(model)

    def _probe_ended(self, model: str, outcome: str, message: str) -> None:
        self.status.show_probe(model, None)
        paused = message if outcome == "paused" else self.service.paused_probe(model)
        if paused:
            self.status.show_paused(model, paused)
        self.profile_changed()

    def profile_changed(self) -> None:
        """A profile may have changed (a probe ended): the gauge and the status bar now."""
        self.inspection.refresh()
        binding = self.service.binding
        if binding is not None:
            self.status.show_binding(binding)

    def _notice(self, message: str) -> None:
        self.notice_line.show_notice(message)
        self.status.show_whole(message)  # never a cut copy: whole, or nothing

    def closeEvent(self, event: QCloseEvent) -> None:
        """Quitting inside a deletion's undo time deletes it now (`sessions/deleting.py`)."""
        if self.ready:
            self.sessions.deletions.flush()
        super().closeEvent(event)

    def _open(self, session: str) -> None:
        self.focused_turn = ""
        self.composer.input.setFocus()

    def _show_turn(self, session: str, turn_id: str, query: str = "") -> None:
        """A search hit: the session is open on the hit's version; bring its turn into view,
        the query's words marked, here and in the inspector."""
        self.focused_turn = turn_id
        self.chat.show_hit(turn_id, query)
        self.inspector.select_turn(turn_id)

    def _show_binding(self, binding: ModelBinding) -> None:
        self.status.show_binding(binding)
