"""The settings dialog's hosted-providers page: the entries, and their API keys.

A key typed here goes to the system keyring (`runtime/providers/secrets.py`) and nowhere else.
Where there is no keyring backend (common on minimal Linux) the page says so, the key fields
are closed, and each row says which environment variable its key is read from
(`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `OPENROUTER_API_KEY`): a key is never written to a file.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from vak_desktop.runtime.providers.secrets import (
    SecretStoreError,
    api_key,
    delete_api_key,
    env_api_key,
    env_var_for,
    keyring_available,
    store_api_key,
)
from vak_desktop.runtime.settings import PROVIDER_KINDS, HostedProvider, Settings
from vak_desktop.ui.settings.settings_widgets import (
    button_row,
    error_label,
    page,
    table,
    table_text,
    valid_url,
)

NO_KEYRING = (
    "No system keyring on this computer, so keys cannot be saved here. Vak reads each "
    "provider's key from its environment variable instead (OPENAI_API_KEY, ANTHROPIC_API_KEY, "
    "OPENROUTER_API_KEY): set it where Vak starts. Keys are never written to a file."
)


class ProvidersPage:
    """The hosted-providers page of `SettingsDialog` (a mixin: the dialog owns the widgets)."""

    providers: QTableWidget
    provider_error: QLabel

    def _providers_tab(self, s: Settings) -> QWidget:
        self.keyring = keyring_available()
        self.providers = table(["Name", "Kind", "Base URL", "API key"], "Hosted providers")
        self._stored_keys = {p.name for p in s.providers}
        self._entries = {p.name: p for p in s.providers}  # what the table does not show
        for provider in s.providers:
            self.add_provider(provider.name, provider.kind, provider.base_url)
        add, remove = QPushButton("Add provider"), QPushButton("Remove")
        add.clicked.connect(lambda: self.add_provider("", "openai", ""))
        remove.clicked.connect(lambda: self.providers.removeRow(self.providers.currentRow()))
        self.provider_error = error_label()
        hint = QLabel(
            "API keys are kept in the system keyring, never in the settings file."
            if self.keyring
            else NO_KEYRING
        )
        hint.setObjectName("hint" if self.keyring else "fieldError")
        hint.setWordWrap(True)
        self.keyring_hint = hint
        return page(hint, self.providers, button_row(add, remove), self.provider_error)

    def add_provider(self, name: str, kind: str, base_url: str) -> int:
        row = self.providers.rowCount()
        self.providers.insertRow(row)
        self.providers.setItem(row, 0, QTableWidgetItem(name))
        kinds = QComboBox()
        kinds.addItems(list(PROVIDER_KINDS))
        kinds.setCurrentText(kind)
        kinds.setAccessibleName("Provider kind")
        self.providers.setCellWidget(row, 1, kinds)
        self.providers.setItem(row, 2, QTableWidgetItem(base_url))
        key = QLineEdit()
        key.setEchoMode(QLineEdit.EchoMode.Password)
        key.setAccessibleName("API key")
        key.setPlaceholderText("stored in keyring" if name in self._stored_keys else "API key")
        variable = env_var_for(kind)
        if not self.keyring:  # nothing could keep it: the environment variable is the key
            found = "set" if variable and env_api_key(kind) else "not set"
            key.setEnabled(False)
            key.setPlaceholderText(f"from ${variable} ({found})" if variable else "no keyring")
            key.setToolTip(f"The key is read from ${variable}, which is {found}")
        elif variable:
            key.setToolTip(f"Or leave it empty and set {variable} in the environment")
        self.providers.setCellWidget(row, 3, key)
        return row

    def api_key_field(self, row: int) -> QLineEdit:
        field = self.providers.cellWidget(row, 3)
        assert isinstance(field, QLineEdit)
        return field

    def _providers(self) -> tuple[list[HostedProvider], dict[str, str], str]:
        providers: list[HostedProvider] = []
        keys: dict[str, str] = {}
        for row in range(self.providers.rowCount()):
            name, base_url = table_text(self.providers, row, 0), table_text(self.providers, row, 2)
            kinds = self.providers.cellWidget(row, 1)
            assert isinstance(kinds, QComboBox)
            kind = kinds.currentText()
            if not name:
                return providers, keys, f"row {row + 1}: a provider needs a name"
            if name in {p.name for p in providers}:
                return providers, keys, f"two providers are called {name!r}"
            if base_url and not valid_url(base_url):
                return providers, keys, f"{name}: {base_url!r} is not an http(s) URL"
            if not base_url and kind in ("ollama", "openai-compatible"):
                return providers, keys, f"{name}: a {kind} provider needs its base URL"
            kept = self._entries.get(name)
            variable = kept.api_key_env if kept is not None else ""
            providers.append(HostedProvider(name, kind, base_url, variable))
            if key := self.api_key_field(row).text().strip():
                keys[name] = key
        return providers, keys, ""

    def store_keys(self, keys: dict[str, str], settings: Settings, before: Settings) -> str:
        """Put typed keys in the keyring and forget removed providers' keys; why not, or ''."""
        try:
            for name, key in keys.items():
                store_api_key(name, key)
            kept = {p.name for p in settings.providers}
            for provider in before.providers:
                if provider.name not in kept and api_key(provider.name) is not None:
                    delete_api_key(provider.name)
        except SecretStoreError as exc:
            return str(exc)
        return ""

    def forget_typed_keys(self) -> None:
        for row in range(self.providers.rowCount()):
            self.api_key_field(row).clear()  # the key is in the keyring; drop our copy
