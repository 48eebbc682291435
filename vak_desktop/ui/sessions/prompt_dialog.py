"""Chat → System prompt…: the shown chat's system prompt and the named presets.

Pick a preset (or the built-in prompt) to load its text, edit it, and "Use for this chat" —
from the chat's next message on, recorded in the ledger once. "Save as preset" keeps the text
under a name; "Default for new chats" is the preset a new chat starts with. Every change goes
through the service (`set_system_prompt`) and the `PresetStore`; bad input (an empty prompt, a
nameless preset) is said inline and the text stays in the editor.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)

from vak_desktop.runtime.sessions.system_prompts import PresetStore
from vak_desktop.ui.chat.chat_service import ChatService
from vak_desktop.ui.parts.dialog_parts import MessageLine, button_row, dialog_layout, hint, titled

BUILT_IN = "Built-in prompt"


class SystemPromptDialog(QDialog):
    """The shown chat's system prompt, and the presets to start from."""

    def __init__(
        self, service: ChatService, store: PresetStore, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.resize(640, 520)
        self._service = service
        self._store = store
        title = titled(self, "System prompt")
        where = "this chat" if service.session else "the new chat"
        about = hint(
            f"Sent at the head of every request of {where}, from its next message on. It is "
            "part of the stable prefix: a change is recorded once in the chat's ledger, and the "
            "model's prefix cache starts over at that turn."
        )
        self.preset = QComboBox()
        self.preset.setAccessibleName("Preset")
        self.preset.activated.connect(self._load_preset)
        self.editor = QPlainTextEdit(service.system_prompt)
        self.editor.setAccessibleName("System prompt text")
        self.name = QLineEdit()
        self.name.setPlaceholderText("Preset name, e.g. Terse reviewer")
        self.name.setAccessibleName("Preset name")
        self.save_button = QPushButton("Save as preset")
        self.save_button.setAutoDefault(False)
        self.save_button.clicked.connect(self.save_preset)
        self.delete_button = QPushButton("Delete preset")
        self.delete_button.setAutoDefault(False)
        self.delete_button.clicked.connect(self.delete_preset)
        self.default_box = QCheckBox("Default for new chats")
        self.default_box.setAccessibleName("Default preset for new chats")
        self.default_box.toggled.connect(self._default_toggled)
        self.message = MessageLine()
        self.use_button = QPushButton("Use for this chat")
        self.use_button.setObjectName("primaryButton")
        self.use_button.clicked.connect(self.use)
        close = QPushButton("Close")
        close.setAutoDefault(False)
        close.clicked.connect(self.reject)

        pick = QHBoxLayout()
        pick.addWidget(QLabel("Start from"))
        pick.addWidget(self.preset, 1)
        pick.addWidget(self.default_box)
        keep = QHBoxLayout()
        keep.addWidget(self.name, 1)
        keep.addWidget(self.save_button)
        keep.addWidget(self.delete_button)
        layout = dialog_layout(self)
        layout.addWidget(title)
        layout.addWidget(about)
        layout.addLayout(pick)
        layout.addWidget(self.editor, 1)
        layout.addLayout(keep)
        layout.addWidget(self.message)
        layout.addLayout(button_row(close, self.use_button))
        self._fill_presets(self._current_preset())

    # -- presets ----------------------------------------------------------------------------

    def _current_preset(self) -> str:
        text = self._service.system_prompt
        return next((p.name for p in self._store.presets if p.text == text), "")

    def _fill_presets(self, selected: str) -> None:
        blocked = self.preset.blockSignals(True)
        self.preset.clear()
        self.preset.addItem(BUILT_IN, "")
        for name in self._store.names():
            marker = " (default)" if name == self._store.default else ""
            self.preset.addItem(name + marker, name)
        self.preset.setCurrentIndex(max(0, self.preset.findData(selected)))
        self.preset.blockSignals(blocked)
        self._show_preset_state()

    def _show_preset_state(self) -> None:
        name = self.preset.currentData() or ""
        self.name.setText(name)
        self.delete_button.setEnabled(bool(name))
        blocked = self.default_box.blockSignals(True)
        self.default_box.setChecked(name == self._store.default)
        self.default_box.blockSignals(blocked)

    def choose_preset(self, name: str) -> None:
        """Load preset `name` ('' : the built-in prompt) into the editor, as picking it does."""
        index = self.preset.findData(name)
        if index < 0:
            raise ValueError(f"no preset named {name!r}")
        self.preset.setCurrentIndex(index)
        self._load_preset(index)

    def _load_preset(self, _index: int) -> None:
        name = self.preset.currentData() or ""
        preset = self._store.get(name)
        self.editor.setPlainText(preset.text if preset else self._service.builtin_prompt)
        self._show_preset_state()

    def save_preset(self) -> bool:
        try:
            preset = self._store.put(self.name.text(), self.editor.toPlainText())
        except (ValueError, OSError) as exc:
            return self.message.say(str(exc), error=True)
        self._fill_presets(preset.name)
        return self.message.say(f"Saved the preset “{preset.name}”.")

    def delete_preset(self) -> bool:
        name = self.preset.currentData() or ""
        if not name:
            return False
        try:
            self._store.remove(name)
        except OSError as exc:
            return self.message.say(str(exc), error=True)
        self._fill_presets("")
        return self.message.say(f"Deleted the preset “{name}”; the editor keeps its text.")

    def _default_toggled(self, on: bool) -> None:
        name = self.preset.currentData() or ""
        try:
            self._store.set_default(name if on else "")
        except (ValueError, OSError) as exc:
            self.message.say(str(exc), error=True)
            return
        self._fill_presets(name)
        which = f"“{name}”" if on and name else "the built-in prompt"
        self.message.say(f"New chats start with {which}.")

    # -- this chat --------------------------------------------------------------------------

    def use(self) -> bool:
        """Give the shown chat the editor's text (recorded once; nothing when unchanged)."""
        try:
            changed = self._service.set_system_prompt(
                self.editor.toPlainText(), self.preset.currentData() or ""
            )
        except ValueError as exc:
            return self.message.say(str(exc), error=True)
        if changed:
            self.accept()
            return True
        self.message.say("This chat already has this system prompt.")
        return False
