"""The settings dialog, and the `SettingsController` every part of the window reads settings from.

The dialog edits a copy: nothing is written until Save, and Save writes nothing unless every
field is valid — a bad field is marked where it is, its tab is shown, and the other fields keep
what was typed. API keys typed here go to the system keyring (`runtime.secrets`) and nowhere
else: the settings file names the provider only. The theme is applied as soon as it is chosen
and put back if the dialog is cancelled.

The hosted-providers page and its keys are `ui/settings/settings_providers.py`; the table and field
helpers every page uses are `ui/settings/settings_widgets.py`.
"""

from __future__ import annotations

import os
import shlex

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from vak_desktop.logfile import log_path
from vak_desktop.runtime.settings import (
    THEMES,
    McpServer,
    Settings,
    check_keep_alive,
)
from vak_desktop.ui.parts.theme import apply_theme, current_theme
from vak_desktop.ui.settings.settings_controller import SettingsController
from vak_desktop.ui.settings.settings_providers import ProvidersPage
from vak_desktop.ui.settings.settings_widgets import (
    button_row,
    error_label,
    mark,
    page,
    table,
    table_text,
    valid_url,
)

__all__ = ["SettingsController", "SettingsDialog"]


class SettingsDialog(QDialog, ProvidersPage):
    """Edits a copy of the settings; Save validates, stores keys in the keyring, writes."""

    def __init__(self, controller: SettingsController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setAccessibleName("Settings")
        self.resize(720, 520)
        self.controller = controller
        self._theme_before = current_theme()
        s = controller.settings
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Settings sections")
        self.tabs.addTab(self._general_tab(s), "General")
        self.tabs.addTab(self._workspace_tab(s), "Workspace")
        self.tabs.addTab(self._mcp_tab(s), "MCP servers")
        self.tabs.addTab(self._providers_tab(s), "Hosted providers")
        self.file_error = error_label()
        if controller.error:
            self.file_error.setText(
                f"{controller.error}\nThe defaults are shown. Saving keeps the unreadable file "
                "as settings.toml.unreadable."
            )
            self.file_error.show()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setObjectName("primaryButton")
        self.save_button.setAccessibleName("Save settings")
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 12)
        layout.addWidget(self.file_error)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)

    # -- tabs -------------------------------------------------------------------------------

    def _general_tab(self, s: Settings) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(16, 16, 16, 16)
        form.setVerticalSpacing(10)
        self.host = QLineEdit(s.ollama_host)
        self.host.setAccessibleName("Ollama host")
        self.host.setPlaceholderText("http://127.0.0.1:11434")
        self.host_error = error_label()
        self.host_source = QLabel()
        self.host_source.setObjectName("hint")
        self.host_source.setWordWrap(True)
        override = self.controller.host_override
        if override:  # shown as what is in force, left out of the file
            self.host.setText(override)
            self.host.setReadOnly(True)
            self.host.setToolTip("Set outside Vak: unset it to edit the host here")
            self.host_source.setText(
                f"From OLLAMA_HOST (or --host). The saved host, {s.ollama_host}, applies "
                "when that is unset."
            )
        else:
            self.host_source.hide()
        self.keep_alive = QLineEdit(s.keep_alive)
        self.keep_alive.setAccessibleName("Default keep_alive")
        self.keep_alive.setToolTip(
            "How long Ollama keeps a model loaded after a request: 30m, 2h, -1 for ever"
        )
        self.keep_alive_error = error_label()
        self.theme = QComboBox()
        self.theme.setAccessibleName("Theme")
        for name in THEMES:
            self.theme.addItem(name.capitalize(), name)
        self.theme.setCurrentIndex(THEMES.index(s.theme))
        self.theme.currentIndexChanged.connect(self._preview_theme)
        self.probe_idle = QCheckBox("Measure local models in the background while they are idle")
        self.probe_idle.setChecked(s.probe_idle)
        self.probe_idle.setAccessibleName("Probe idle local models")
        self.probe_hosted = QCheckBox("Also measure hosted models (each probe costs API tokens)")
        self.probe_hosted.setChecked(s.probe_hosted)
        self.probe_hosted.setAccessibleName("Probe hosted models")
        # the host, folders, servers and providers apply at once (ui/shell/live_settings.py); the
        # probe settings make the chat service's runners, so they wait for the next start
        self.update_check = QCheckBox("At start, ask the release feed whether a newer Vak is out")
        self.update_check.setChecked(s.update_check)  # off unless the user turns it on
        self.update_check.setAccessibleName("Check for updates")
        self.update_feed = QLineEdit(s.update_feed)
        self.update_feed.setAccessibleName("Release feed")
        self.update_feed.setPlaceholderText("https://… a JSON file naming the newest version")
        self.update_error = error_label()
        hint = QLabel("A changed probe setting applies from the next start of Vak.")
        hint.setObjectName("hint")
        form.addRow("Ollama host", self.host)
        form.addRow("", self.host_error)
        form.addRow("", self.host_source)
        form.addRow("Keep models loaded for", self.keep_alive)
        form.addRow("", self.keep_alive_error)
        form.addRow("Theme", self.theme)
        form.addRow("Capacity probe", self.probe_idle)
        form.addRow("", self.probe_hosted)
        form.addRow("", hint)
        form.addRow("Updates", self.update_check)
        form.addRow("Release feed", self.update_feed)
        form.addRow("", self.update_error)
        self.log_file = QLabel(str(log_path()))  # where a problem report's log is (logfile.py)
        self.log_file.setAccessibleName("Log file")
        self.log_file.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow("Log file", self.log_file)
        return page

    def _workspace_tab(self, s: Settings) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(16, 16, 16, 16)
        intro = QLabel("Folders the file tools may read, in every chat.")
        intro.setObjectName("hint")
        self.folders = QListWidget()
        self.folders.setAccessibleName("Workspace folders")
        self.folders.addItems(list(s.workspace))
        add, remove = QPushButton("Add folder…"), QPushButton("Remove")
        add.setAccessibleName("Add workspace folder")
        remove.setAccessibleName("Remove workspace folder")
        add.clicked.connect(self._choose_folder)
        remove.clicked.connect(lambda: self.folders.takeItem(self.folders.currentRow()))
        self.folder_error = error_label()
        layout.addWidget(intro)
        layout.addWidget(self.folders, 1)
        layout.addLayout(button_row(add, remove))
        layout.addWidget(self.folder_error)
        return page

    def _mcp_tab(self, s: Settings) -> QWidget:
        self.mcp = table(["Name", "Command or URL", "Enabled"], "MCP servers")
        for server in s.mcp_servers:
            target = server.url or shlex.join(server.command)
            self.add_mcp_server(server.name, target, server.enabled, env=server.env)
        add, remove = QPushButton("Add server"), QPushButton("Remove")
        add.clicked.connect(lambda: self.add_mcp_server("", "", True))
        remove.clicked.connect(lambda: self.mcp.removeRow(self.mcp.currentRow()))
        self.mcp_error = error_label()
        hint = QLabel("A command runs the server over stdio; an http(s) URL is streamable HTTP.")
        hint.setObjectName("hint")
        return page(hint, self.mcp, button_row(add, remove), self.mcp_error)

    # -- editing (the buttons call these; tests and scripts too) ----------------------------

    def add_folder(self, folder: str) -> None:
        self.folders.addItem(folder)

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a workspace folder")
        if folder:
            self.add_folder(folder)

    def add_mcp_server(
        self, name: str, target: str, enabled: bool, env: dict[str, str] | None = None
    ) -> int:
        row = self.mcp.rowCount()
        self.mcp.insertRow(row)
        self.mcp.setItem(row, 0, QTableWidgetItem(name))
        self.mcp.setItem(row, 1, QTableWidgetItem(target))
        check = QTableWidgetItem()
        check.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
        check.setCheckState(Qt.CheckState.Checked if enabled else Qt.CheckState.Unchecked)
        check.setData(Qt.ItemDataRole.UserRole, dict(env or {}))
        self.mcp.setItem(row, 2, check)
        return row

    def _preview_theme(self) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, self.theme.currentData())

    # -- save -------------------------------------------------------------------------------

    def collect(self) -> tuple[Settings, dict[str, str]] | None:
        """The settings the fields describe and the API keys typed, or None after marking
        every invalid field (its tab is shown)."""
        for label in (self.host_error, self.keep_alive_error, self.folder_error, self.update_error):
            label.hide()
        for label in (self.mcp_error, self.provider_error):
            label.hide()
        first_bad: int | None = None

        def fail(label: QLabel, tab: int, message: str) -> None:
            nonlocal first_bad
            label.setText(message)
            label.show()
            first_bad = tab if first_bad is None else first_bad

        # an overridden host is not the user's to save: the file keeps what it had
        override = bool(self.controller.host_override)
        host = self.controller.settings.ollama_host if override else self.host.text().strip()
        if not override and not valid_url(host):
            fail(self.host_error, 0, f"{host!r} is not an http:// or https:// address")
        try:
            keep_alive = check_keep_alive(self.keep_alive.text())
        except ValueError as exc:
            fail(self.keep_alive_error, 0, str(exc))
            keep_alive = ""
        feed = self.update_feed.text().strip()
        if feed and not valid_url(feed):
            fail(self.update_error, 0, f"{feed!r} is not an http:// or https:// address")
        elif self.update_check.isChecked() and not feed:
            fail(self.update_error, 0, "name the release feed to check, or turn the check off")
        folders = [self.folders.item(i).text() for i in range(self.folders.count())]
        missing = [f for f in folders if not os.path.isdir(f)]
        if missing:
            fail(self.folder_error, 1, "not a folder: " + ", ".join(missing))
        servers, problem = self._servers()
        if problem:
            fail(self.mcp_error, 2, problem)
        providers, keys, problem = self._providers()
        if problem:
            fail(self.provider_error, 3, problem)
        mark(self.host, not self.host_error.isHidden())
        mark(self.keep_alive, not self.keep_alive_error.isHidden())
        if first_bad is not None:
            self.tabs.setCurrentIndex(first_bad)
            return None
        settings = self.controller.settings.replace(
            ollama_host=host,
            keep_alive=keep_alive,
            probe_idle=self.probe_idle.isChecked(),
            probe_hosted=self.probe_hosted.isChecked(),
            update_check=self.update_check.isChecked(),
            update_feed=feed,
            workspace=tuple(folders),
            mcp_servers=tuple(servers),
            providers=tuple(providers),
            theme=self.theme.currentData(),
        )
        return settings, keys

    def _servers(self) -> tuple[list[McpServer], str]:
        servers: list[McpServer] = []
        for row in range(self.mcp.rowCount()):
            name = table_text(self.mcp, row, 0)
            target = table_text(self.mcp, row, 1)
            check = self.mcp.item(row, 2)
            assert check is not None  # add_mcp_server puts one in every row
            enabled = check.checkState() == Qt.CheckState.Checked
            env = dict(check.data(Qt.ItemDataRole.UserRole) or {})
            if not name:
                return servers, f"row {row + 1}: an MCP server needs a name"
            if name in {s.name for s in servers}:
                return servers, f"two MCP servers are called {name!r}"
            if not target:
                return servers, f"{name}: give a command to run or an http(s) URL"
            if target.startswith(("http://", "https://")):
                if not valid_url(target):
                    return servers, f"{name}: {target!r} is not a valid URL"
                servers.append(McpServer(name, url=target, env=env, enabled=enabled))
                continue
            try:
                command = tuple(shlex.split(target))
            except ValueError as exc:
                return servers, f"{name}: the command cannot be read ({exc})"
            servers.append(McpServer(name, command=command, env=env, enabled=enabled))
        return servers, ""

    def save(self) -> bool:
        """Validate, store typed keys in the keyring, write the settings; True when saved."""
        collected = self.collect()
        if collected is None:
            return False
        settings, keys = collected
        problem = self.store_keys(keys, settings, self.controller.settings)
        if problem:
            self.provider_error.setText(problem)
            self.provider_error.show()
            self.tabs.setCurrentIndex(3)
            return False
        try:
            self.controller.save(settings)
        except OSError as exc:
            self.file_error.setText(f"could not write {self.controller.path}: {exc}")
            self.file_error.show()
            return False
        self.forget_typed_keys()
        self._theme_before = settings.theme
        self.accept()
        return True

    def reject(self) -> None:
        if current_theme() != self._theme_before:
            app = QApplication.instance()
            if isinstance(app, QApplication):
                apply_theme(app, self._theme_before)
        super().reject()
